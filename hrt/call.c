// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * How libatoll-hrt reaches the LWK: found once, by asking for the direct
 * entry. A kernel-mode program gets it and CALLs it from then on; ring 3
 * gets EPERM and uses SYSCALL; Linux has no such call (ENOSYS).
 */
#include <errno.h>
#include <stdint.h>

#include "internal.h"

typedef long (*direct_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);

static enum hrt_mode mode;
static direct_fn direct;

static long raw_syscall6(uint64_t nr, uint64_t a, uint64_t b, uint64_t c, uint64_t d,
			 uint64_t e, uint64_t f)
{
	register uint64_t r10 __asm__("r10") = d;
	register uint64_t r8 __asm__("r8") = e;
	register uint64_t r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

enum hrt_mode hrt_mode(void)
{
	enum hrt_mode m = __atomic_load_n(&mode, __ATOMIC_ACQUIRE);
	long r;

	if (m != HRT_UNKNOWN)
		return m;
	r = raw_syscall6(ATOLL_SYS_HRT, ATOLL_HRT_OP_ENTRY, 0, 0, 0, 0, 0);
	/* The entry is a kernel address: negative as a long, but no -errno. */
	if ((unsigned long)r < -4095UL) {
		direct = (direct_fn)(uintptr_t)r;
		m = HRT_KERNEL;
	} else if (r == -EPERM) {
		m = HRT_RING3;
	} else {
		m = HRT_LINUX;
	}
	__atomic_store_n(&mode, m, __ATOMIC_RELEASE);
	return m;
}

long hrt_call(uint64_t op, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	switch (hrt_mode()) {
	case HRT_KERNEL:
		return direct(op, a0, a1, a2, a3, a4);
	case HRT_RING3:
		return raw_syscall6(ATOLL_SYS_HRT, op, a0, a1, a2, a3, a4);
	default:
		return -ENOSYS;
	}
}

int hrt_kernel_mode(void)
{
	switch (hrt_mode()) {
	case HRT_KERNEL:
		return 1;
	case HRT_RING3:
		return 0;
	default:
		return -1;
	}
}

int hrt_ncpus(void)
{
	return (int)hrt_call(ATOLL_HRT_OP_CPUS, 0, 0, 0, 0, 0);
}

int hrt_this_cpu(void)
{
	return (int)hrt_call(ATOLL_HRT_OP_THIS_CPU, 0, 0, 0, 0, 0);
}

long hrt_null(void)
{
	return hrt_call(ATOLL_HRT_OP_NULL, 0, 0, 0, 0, 0);
}
