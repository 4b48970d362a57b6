// SPDX-License-Identifier: GPL-2.0-only
/*
 * The enclave's vDSO: clock_gettime, gettimeofday and time without a system
 * call, from the TSC and the data page the LWK maps just below this image
 * (struct atoll_vdso_data). Clocks it does not serve take the system call.
 * Built by kernel/build.rs with vdso.lds; the LWK copies it into every
 * program (process/vdso.rs).
 */
#include <linux/time.h>
#include <linux/types.h>
#include <asm/unistd.h>
#include "atoll_abi.h"

/* The data page, one page below the image (vdso.lds). */
extern const struct atoll_vdso_data atoll_vdso_data __attribute__((visibility("hidden")));

static long syscall2(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
	return ret;
}

static __u64 monotonic_ns(void)
{
	__u32 lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (__u64)(((__uint128_t)((__u64)hi << 32 | lo) * atoll_vdso_data.ns_mult) >> 32);
}

static __s64 clock_ns(int clock, int *served)
{
	*served = 1;
	switch (clock) {
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_BOOTTIME:
		return (__s64)monotonic_ns();
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
	case CLOCK_TAI:
		return (__s64)monotonic_ns() + atoll_vdso_data.realtime_offset_ns;
	}
	*served = 0;
	return 0;
}

int __vdso_clock_gettime(int clock, struct timespec *ts)
{
	int served;
	__s64 ns = clock_ns(clock, &served);

	if (!served)
		return (int)syscall2(__NR_clock_gettime, clock, (long)ts);
	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
	return 0;
}

int __vdso_gettimeofday(struct timeval *tv, struct timezone *tz)
{
	int served;
	__s64 ns = clock_ns(CLOCK_REALTIME, &served);

	if (tv) {
		tv->tv_sec = ns / 1000000000;
		tv->tv_usec = ns % 1000000000 / 1000;
	}
	if (tz) {
		tz->tz_minuteswest = 0;
		tz->tz_dsttime = 0;
	}
	return 0;
}

long __vdso_time(long *t)
{
	int served;
	long s = clock_ns(CLOCK_REALTIME, &served) / 1000000000;

	if (t)
		*t = s;
	return s;
}

int clock_gettime(int clock, struct timespec *ts)
	__attribute__((weak, alias("__vdso_clock_gettime")));
int gettimeofday(struct timeval *tv, struct timezone *tz)
	__attribute__((weak, alias("__vdso_gettimeofday")));
long time(long *t) __attribute__((weak, alias("__vdso_time")));
