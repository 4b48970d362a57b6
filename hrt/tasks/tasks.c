// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The task runtime (tasks.h): per worker, a deque of forked tasks under a
 * spinlock (the owner pushes and pops at the bottom, thieves take from the
 * top); idle workers look for work to steal and, finding none for a while,
 * sleep on a word that forks wake. Workers are the API's threads bound to a
 * CPU, or pthreads pinned to one (TASKS_PTHREADS).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tasks.h"

#ifdef TASKS_PTHREADS
#include <pthread.h>
#else
#include <atoll/hrt.h>
#endif

#define MAX_WORKERS 64
#define DEQUE 4096
/* Steal attempts before an idle worker sleeps. */
#define IDLE_TRIES 2000

struct worker {
	uint32_t lock;
	uint32_t top, bottom;	/* tasks[top .. bottom) */
	struct task *tasks[DEQUE];
#ifdef TASKS_PTHREADS
	pthread_t thread;
#else
	hrt_thread_t thread;
#endif
} __attribute__((aligned(64)));

static struct worker workers[MAX_WORKERS];
static int nworkers;
static uint32_t stopping;
static uint32_t bell;		/* forks ring it; idle workers sleep on it */
static uint32_t sleepers;
static __thread int me = -1;	/* this thread's worker; the caller is 0 */

static void pause_cpu(void)
{
	__asm__ volatile("pause");
}

static void lock(struct worker *w)
{
	while (__atomic_exchange_n(&w->lock, 1, __ATOMIC_ACQUIRE))
		pause_cpu();
}

static void unlock(struct worker *w)
{
	__atomic_store_n(&w->lock, 0, __ATOMIC_RELEASE);
}

/* A futex on Linux and in an enclave alike (the LWK has them too). */
static void sleep_on(uint32_t *word, uint32_t value)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

static void wake_all(uint32_t *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, MAX_WORKERS, NULL, NULL, 0);
}

static struct task *pop_bottom(struct worker *w)
{
	struct task *t = NULL;

	lock(w);
	if (w->bottom > w->top)
		t = w->tasks[--w->bottom % DEQUE];
	unlock(w);
	return t;
}

static struct task *steal_top(struct worker *w)
{
	struct task *t = NULL;

	if (__atomic_load_n(&w->bottom, __ATOMIC_RELAXED) ==
	    __atomic_load_n(&w->top, __ATOMIC_RELAXED))
		return NULL;
	lock(w);
	if (w->bottom > w->top)
		t = w->tasks[w->top++ % DEQUE];
	unlock(w);
	return t;
}

static void run(struct task *t)
{
	t->fn(t->arg);
	__atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
}

/* A task from someone else's deque, starting after `self`. */
static struct task *steal(int self)
{
	for (int i = 1; i < nworkers; i++) {
		struct task *t = steal_top(&workers[(self + i) % nworkers]);

		if (t)
			return t;
	}
	return NULL;
}

void tasks_fork(struct task *t, void (*fn)(void *arg), void *arg)
{
	struct worker *w = &workers[me < 0 ? 0 : me];

	t->fn = fn;
	t->arg = arg;
	t->done = 0;
	lock(w);
	if (w->bottom - w->top >= DEQUE) {
		unlock(w);
		run(t);		/* full: no parallelism lost that matters */
		return;
	}
	w->tasks[w->bottom++ % DEQUE] = t;
	unlock(w);
	if (__atomic_load_n(&sleepers, __ATOMIC_SEQ_CST)) {
		__atomic_add_fetch(&bell, 1, __ATOMIC_SEQ_CST);
		wake_all(&bell);
	}
}

void tasks_join(struct task *t)
{
	int self = me < 0 ? 0 : me;

	while (!__atomic_load_n(&t->done, __ATOMIC_ACQUIRE)) {
		struct task *other = pop_bottom(&workers[self]);

		if (!other)
			other = steal(self);
		if (other)
			run(other);
		else
			pause_cpu();
	}
}

static void *worker_main(void *arg)
{
	int idle = 0;
	uint32_t b;

	me = (int)(long)arg;
	while (!__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
		struct task *t = pop_bottom(&workers[me]);

		if (!t)
			t = steal(me);
		if (t) {
			run(t);
			idle = 0;
			continue;
		}
		if (++idle < IDLE_TRIES) {
			pause_cpu();
			continue;
		}
		idle = 0;
		/* Counted as asleep before the last look: a fork after it rings. */
		b = __atomic_load_n(&bell, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&sleepers, 1, __ATOMIC_SEQ_CST);
		t = steal(me);
		if (!t && !__atomic_load_n(&stopping, __ATOMIC_ACQUIRE))
			sleep_on(&bell, b);
		__atomic_sub_fetch(&sleepers, 1, __ATOMIC_SEQ_CST);
		if (t)
			run(t);
	}
	return NULL;
}

#ifdef TASKS_PTHREADS
static int cpus[MAX_WORKERS];

static void *pinned_worker(void *arg)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpus[(long)arg], &one);
	sched_setaffinity(0, sizeof(one), &one);
	return worker_main(arg);
}

int tasks_start(int max)
{
	cpu_set_t mine;
	int n = 0;

	sched_getaffinity(0, sizeof(mine), &mine);
	for (int c = 0; c < CPU_SETSIZE && n < MAX_WORKERS && n < max; c++)
		if (CPU_ISSET(c, &mine))
			cpus[n++] = c;
	nworkers = n;
	me = 0;
	/* The caller is worker 0, on the first CPU. */
	{
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(cpus[0], &one);
		sched_setaffinity(0, sizeof(one), &one);
	}
	for (long i = 1; i < n; i++)
		if (pthread_create(&workers[i].thread, NULL, pinned_worker, (void *)i))
			return -1;
	return 0;
}

static void join_worker(int i)
{
	pthread_join(workers[i].thread, NULL);
}
#else
int tasks_start(int max)
{
	int n = hrt_ncpus(), here = hrt_this_cpu(), k = 1;

	if (n < 1)
		return -1;
	nworkers = n < max ? n : max;
	me = 0;
	/* The caller is worker 0 where it runs; the others on the other CPUs. */
	for (int c = 0; c < n && k < nworkers; c++) {
		if (c == here)
			continue;
		if (hrt_thread_create(&workers[k].thread, c, worker_main, (void *)(long)k))
			return -1;
		k++;
	}
	return 0;
}

static void join_worker(int i)
{
	hrt_thread_join(workers[i].thread, NULL);
}
#endif

void tasks_stop(void)
{
	__atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&bell, 1, __ATOMIC_SEQ_CST);
	wake_all(&bell);
	for (int i = 1; i < nworkers; i++)
		join_worker(i);
}

int tasks_workers(void)
{
	return nworkers;
}
