/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * atoll/hrt.h: the hybrid-runtime API (libatoll-hrt, docs/hrt.md), for
 * parallel runtimes written for Atoll. The same calls work in a kernel-mode
 * program (`atoll run --hrt`: plain CALLs into the LWK) and in a ring-3
 * program in any enclave (fast system calls), so a runtime is written once.
 * Outside an enclave every call fails with ENOSYS.
 *
 * Functions that can fail return 0 or an errno value, as pthreads does.
 */
#ifndef ATOLL_HRT_H
#define ATOLL_HRT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The program and its CPUs ---- */

/* 1 at CPL 0 (atoll run --hrt), 0 in ring 3, -1 outside an enclave. */
int hrt_kernel_mode(void);
/* How many CPUs the program has; the API numbers them 0 .. n-1. */
int hrt_ncpus(void);
/* The number of the CPU the calling thread runs on. */
int hrt_this_cpu(void);
/* A call into the LWK that does nothing: what a call costs. */
long hrt_null(void);

/* ---- Threads bound to a CPU, fork/join ---- */

/* Any CPU (the program's next, round robin). */
#define HRT_ANY_CPU (-1)
/* Each thread's stack, its end guarded by nothing: keep frames small. */
#define HRT_STACK_SIZE (256 * 1024)

typedef struct hrt_thread *hrt_thread_t;

/*
 * A thread that runs fn(arg) on CPU `cpu` and stays there. It is the
 * runtime's thread, not a pthread: it has thread-local storage of its own
 * (a static program's initial values, else zeroes) but no libc thread
 * state, so it may use this API, its own data and system calls, but not
 * libc functions that keep per-thread state (stdio, malloc, pthread_*,
 * anything that reads the locale). 0, or EINVAL (no such CPU), ENOMEM, or
 * EAGAIN: a program has at most 128 threads alive, of every kind, as
 * ATOLL_MAX_SLOTS says; *thread is set only on success.
 */
int hrt_thread_create(hrt_thread_t *thread, int cpu, void *(*fn)(void *), void *arg);
/*
 * Waits for the thread's end; its result in *result if result is not NULL.
 * EINVAL for a handle no create gave.
 */
int hrt_thread_join(hrt_thread_t thread, void **result);

/* ---- Mutexes, condition variables, barriers ---- */

typedef struct {
	uint32_t state;
} hrt_mutex_t;
typedef struct {
	uint32_t seq;
	uint32_t waiters;
} hrt_cond_t;
typedef struct {
	uint32_t arrived;
	uint32_t total;
	uint32_t generation;
} hrt_barrier_t;

#define HRT_MUTEX_INIT { 0 }
#define HRT_COND_INIT { 0, 0 }

void hrt_mutex_lock(hrt_mutex_t *m);
void hrt_mutex_unlock(hrt_mutex_t *m);
/* Waits for a signal; the waiter's CPU is kicked with an IPI when it comes. */
void hrt_cond_wait(hrt_cond_t *c, hrt_mutex_t *m);
void hrt_cond_signal(hrt_cond_t *c);
void hrt_cond_broadcast(hrt_cond_t *c);
/* `total` threads meet: each waits until all have come. */
void hrt_barrier_init(hrt_barrier_t *b, unsigned int total);
/* 1 in the last thread to come, 0 in the others. */
int hrt_barrier_wait(hrt_barrier_t *b);

/* ---- Interrupt-off regions ---- */

/*
 * At CPL 0: interrupts masked (CLI); nothing may block inside. In ring 3:
 * the thread is not preempted, for at most 10 ms at a time (the LWK takes
 * the core back after that so that no program keeps it from others).
 * Regions nest: restore with what save returned.
 */
unsigned long hrt_irq_save(void);
void hrt_irq_restore(unsigned long saved);

/* ---- Nemo Active Messages ---- */

#define HRT_AM_ACTIONS 64
/* Each CPU's queue of messages not yet handled. */
#define HRT_AM_QUEUE 1024

typedef void (*hrt_am_handler)(int action, uint64_t arg, void *ctx);

/*
 * Registers `handler` for `action` (0 .. HRT_AM_ACTIONS-1) on CPU `cpu`, or
 * on every CPU with HRT_ANY_CPU. Handlers run on the receiving CPU, in the
 * program's handler thread there, which an IPI makes run at once ahead of
 * every other thread on that CPU; at CPL 0 with interrupts off. A handler
 * must not block.
 */
int hrt_am_register(int cpu, int action, hrt_am_handler handler, void *ctx);
/* Sends (action, arg) to CPU `cpu`. EAGAIN: its queue is full. */
int hrt_am_send(int cpu, int action, uint64_t arg);
/* Sends (action, arg) to every CPU with a handler for it, once each. */
int hrt_am_broadcast(int action, uint64_t arg);

#ifdef __cplusplus
}
#endif
#endif
