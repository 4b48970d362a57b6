// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Threads bound to a CPU (Nautilus's model): each on a stack block of its
 * own, reused once its thread has ended. A block, from its top down: the
 * thread's record, its TCB (where FS points: the self pointers and the
 * stack and pointer guards copied from the creator), its thread-local
 * storage (the program's initial image, or zeroes), then the stack.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include <atoll/hrt.h>
#include "internal.h"

#define TCB_SIZE 64
#define RECORD_SIZE 64

struct hrt_thread {
	void *(*fn)(void *arg);
	void *arg;
	void *result;
	/* 1 while it runs: the LWK writes 0 at its end and wakes joiners. */
	uint32_t done;
	struct hrt_thread *next_free;
	char *base;
};

_Static_assert(sizeof(struct hrt_thread) <= RECORD_SIZE, "record fits its slot");

/*
 * Thread-local storage below the TCB: the program's, if it is static.
 * tls_used bytes of it are the modules' (cleared for each thread), the
 * rest of tls_size is room glibc keeps for later ones.
 */
static size_t tls_size = 4096;
static size_t tls_used;
static const void *tls_image;
static size_t tls_image_size;
static size_t tls_block;
static size_t block_size;

static struct hrt_thread *free_list;
static uint32_t free_lock;

static int find_tls(struct dl_phdr_info *info, size_t size, void *data)
{
	size_t *total = data;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const Elf64_Phdr *ph = &info->dlpi_phdr[i];
		size_t align = ph->p_align ? ph->p_align : 1;

		if (ph->p_type != PT_TLS)
			continue;
		if (*total == 0 && info->dlpi_name[0] == '\0') {
			/* The executable's block sits right below the TCB. */
			tls_image = (const void *)(info->dlpi_addr + ph->p_vaddr);
			tls_image_size = ph->p_filesz;
			tls_block = (ph->p_memsz + align - 1) & ~(align - 1);
		}
		*total += (ph->p_memsz + align - 1) & ~(align - 1);
	}
	return 0;
}

/* How much TLS a thread needs: every module's, and glibc's spare room. */
static void size_blocks(void)
{
	size_t total = 0;

	if (block_size)
		return;
	dl_iterate_phdr(find_tls, &total);
	tls_used = (total + 63) & ~(size_t)63;
	tls_size = (total + 2048 + 4095) & ~(size_t)4095;
	block_size = HRT_STACK_SIZE + tls_size + TCB_SIZE + RECORD_SIZE;
	block_size = (block_size + 4095) & ~(size_t)4095;
}

static void lock_free_list(void)
{
	while (__atomic_exchange_n(&free_lock, 1, __ATOMIC_ACQUIRE))
		hrt_pause();
}

static void unlock_free_list(void)
{
	__atomic_store_n(&free_lock, 0, __ATOMIC_RELEASE);
}

/* A block whose thread has ended (or never started): for the next thread. */
static void free_block(struct hrt_thread *t)
{
	lock_free_list();
	t->next_free = free_list;
	free_list = t;
	unlock_free_list();
}

static struct hrt_thread *record_of(char *base)
{
	return (struct hrt_thread *)(base + block_size - RECORD_SIZE);
}

static uint64_t *tcb_of(struct hrt_thread *t)
{
	return (uint64_t *)((char *)t - TCB_SIZE);
}

static uint64_t read_fs(unsigned int offset)
{
	uint64_t v;

	__asm__ volatile("mov %%fs:(%1), %0" : "=r"(v) : "r"((uint64_t)offset));
	return v;
}

/* A block from the free list, or a new one; its TLS and TCB made afresh. */
static struct hrt_thread *new_block(void)
{
	struct hrt_thread *t;
	uint64_t *tcb;
	char *tls;

	size_blocks();
	lock_free_list();
	t = free_list;
	if (t)
		free_list = t->next_free;
	unlock_free_list();
	if (!t) {
		char *base = mmap(NULL, block_size, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (base == MAP_FAILED)
			return NULL;
		t = record_of(base);
		t->base = base;
	}
	tcb = tcb_of(t);
	tls = (char *)tcb - tls_used;
	memset(tls, 0, tls_used);
	if (tls_image)
		memcpy((char *)tcb - tls_block, tls_image, tls_image_size);
	memset(tcb, 0, TCB_SIZE);
	tcb[0] = (uint64_t)tcb;		/* tcbhead_t.tcb */
	tcb[2] = (uint64_t)tcb;		/* tcbhead_t.self */
	tcb[5] = read_fs(0x28);		/* stack guard */
	tcb[6] = read_fs(0x30);		/* pointer guard */
	return t;
}

/* Where the LWK enters a new thread: rdi = its first stack pointer. */
__attribute__((noreturn, used)) static void hrt_thread_main(char *sp)
{
	struct hrt_thread *t = (struct hrt_thread *)(sp + tls_size + TCB_SIZE);

	t->result = t->fn(t->arg);
	hrt_call(ATOLL_HRT_OP_EXIT, 0, 0, 0, 0, 0);
	__builtin_unreachable();
}

/* Aligns the stack as a call would have, then runs the thread. */
__asm__(".text\n"
	".type hrt_thread_entry, @function\n"
	"hrt_thread_entry:\n"
	"    and $-16, %rsp\n"
	"    call hrt_thread_main\n"
	"    ud2\n");
void hrt_thread_entry(void);

int hrt_thread_create(hrt_thread_t *thread, int cpu, void *(*fn)(void *), void *arg)
{
	struct hrt_thread *t;
	uint64_t *tcb;
	long tid;

	if (hrt_mode() == HRT_LINUX)
		return ENOSYS;
	t = new_block();
	if (!t)
		return ENOMEM;
	t->fn = fn;
	t->arg = arg;
	t->result = NULL;
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
	tcb = tcb_of(t);
	tid = hrt_call(ATOLL_HRT_OP_THREAD, cpu == HRT_ANY_CPU ? ATOLL_HRT_ANY_CPU : (uint64_t)cpu,
		       (uintptr_t)hrt_thread_entry, (uintptr_t)tcb - tls_size, (uintptr_t)tcb,
		       (uintptr_t)&t->done);
	if (tid < 0) {
		free_block(t);
		return (int)-tid;
	}
	*thread = t;
	return 0;
}

int hrt_thread_join(hrt_thread_t t, void **result)
{
	uint32_t d;

	/* A handle that is none gives EINVAL, not a wait that never ends. */
	while ((d = __atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) != 0) {
		if (hrt_wait(&t->done, d) == -EINVAL)
			return EINVAL;
	}
	if (result)
		*result = t->result;
	/* The LWK wrote 0 only once the thread had left its stack. */
	free_block(t);
	return 0;
}
