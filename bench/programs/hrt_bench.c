// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hybrid-runtime API against what Linux programs use (issue 41's
 * make bench-hrt, bench/hrt_bench.py). Run on Linux it measures Linux's
 * mechanisms; in an enclave, the API's (in ring 3 or at CPL 0) and getpid.
 *   hrt_bench ROW [reps]     ROW: call, thread, wakeup, broadcast
 * call       a null call: getpid by SYSCALL; in an enclave also hrt_null()
 * thread     create + join of a thread that returns at once: pthreads on
 *            Linux; the API's on the caller's CPU and on another; and the
 *            seed's measure, the time until create returns
 * wakeup     one waiter: a ball passed between two threads on two CPUs,
 *            the time per pass: pthread_cond and a raw futex on Linux; the
 *            API's condvar and an Active Message in an enclave
 * broadcast  one thread wakes a waiter on each other CPU: the time until
 *            the last runs, and from the first to the last: pthread_cond on
 *            Linux; the API's condvar and an Active Message broadcast
 * Each mechanism prints one line:
 *   hrt_bench row=R how=H n=N p50=NS p99=NS min=NS max=NS [spread_p50=NS]
 * with the samples' distribution (a sample: a repetition's mean for call
 * and thread, one pass for wakeup, one broadcast for broadcast).
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atoll/hrt.h>

#include "timing.h"

#define MAX_CPUS 64
#define CALLS 20000
#define THREADS 200
/* Alive at once, under the 128 threads a program may have in an enclave. */
#define CREATE_ONLY 100
#define PASSES 400
#define BROADCASTS 200

static int reps = 5;
static int hrt;			/* in an enclave: the API's mechanisms */
static int cpus[MAX_CPUS];	/* Linux: the CPUs the program may use */
static int ncpus;

static void report(const char *row, const char *how, double *t, int n, const double *spread)
{
	sort_times(t, n);
	printf("hrt_bench row=%s how=%s n=%d p50=%.1f p99=%.1f min=%.1f max=%.1f", row, how, n,
	       t[n / 2], t[(n * 99) / 100], t[0], t[n - 1]);
	if (spread)
		printf(" spread_p50=%.1f", *spread);
	printf("\n");
}

/* A create or join that failed ends the benchmark, naming it and why. */
static void must(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "hrt_bench: %s: %s\n", what, strerror(err));
		exit(1);
	}
}

/* Binds the calling pthread to the program's CPU k (Linux). */
static void pin(int k)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpus[k % ncpus], &one);
	sched_setaffinity(0, sizeof(one), &one);
}

/* ---- call ---- */

static void row_call(void)
{
	double t[64];

	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (int i = 0; i < CALLS; i++)
			syscall(SYS_getpid);
		t[r] = (now_ns() - t0) / CALLS;
	}
	report("call", "getpid", t, reps, NULL);
	if (!hrt)
		return;
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (int i = 0; i < CALLS; i++)
			hrt_null();
		t[r] = (now_ns() - t0) / CALLS;
	}
	report("call", hrt_kernel_mode() ? "hrt_direct" : "hrt_syscall", t, reps, NULL);
}

/* ---- thread ---- */

static void *nothing(void *arg)
{
	return arg;
}

/* The seed's measure (Fig 4.3): until create returns, the threads joined after. */
static void create_only(const char *how, int cpu)
{
	double t[64];

	for (int r = 0; r < reps; r++) {
		hrt_thread_t h[CREATE_ONLY];
		pthread_t p[CREATE_ONLY];
		double t0 = now_ns();

		for (int i = 0; i < CREATE_ONLY; i++) {
			if (hrt)
				must(hrt_thread_create(&h[i], cpu, nothing, NULL), "hrt_thread_create");
			else
				must(pthread_create(&p[i], NULL, nothing, NULL), "pthread_create");
		}
		t[r] = (now_ns() - t0) / CREATE_ONLY;
		for (int i = 0; i < CREATE_ONLY; i++) {
			if (hrt)
				must(hrt_thread_join(h[i], NULL), "hrt_thread_join");
			else
				must(pthread_join(p[i], NULL), "pthread_join");
		}
	}
	report("thread", how, t, reps, NULL);
}

static void hrt_threads(const char *how, int cpu)
{
	double t[64];

	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (int i = 0; i < THREADS; i++) {
			hrt_thread_t h;

			must(hrt_thread_create(&h, cpu, nothing, NULL), "hrt_thread_create");
			must(hrt_thread_join(h, NULL), "hrt_thread_join");
		}
		t[r] = (now_ns() - t0) / THREADS;
	}
	report("thread", how, t, reps, NULL);
}

static void row_thread(void)
{
	double t[64];

	if (hrt) {
		int here = hrt_this_cpu();

		hrt_threads("hrt_same_cpu", here);
		if (hrt_ncpus() > 1)
			hrt_threads("hrt_other_cpu", (here + 1) % hrt_ncpus());
		create_only("hrt_create_only", here);
		return;
	}
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (int i = 0; i < THREADS; i++) {
			pthread_t p;

			must(pthread_create(&p, NULL, nothing, NULL), "pthread_create");
			must(pthread_join(p, NULL), "pthread_join");
		}
		t[r] = (now_ns() - t0) / THREADS;
	}
	report("thread", "pthread", t, reps, NULL);
	create_only("pthread_create_only", 0);
}

/* ---- wakeup: a ball passed between two threads ---- */

enum ball { PTHREAD_COND, FUTEX, HRT_COND, HRT_AM };

static struct court {
	enum ball how;
	uint32_t turn;
	pthread_mutex_t pm;
	pthread_cond_t pc;
	hrt_mutex_t hm;
	hrt_cond_t hc;
	double stamp[2 * PASSES + 1];
} court;

static void futex_wait(uint32_t *w, uint32_t v)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(uint32_t *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Player me (0 or 1) waits for each of its turns, stamps it and passes. */
static void play(struct court *c, uint32_t me)
{
	for (int i = 0; i < PASSES; i++) {
		uint32_t t;

		switch (c->how) {
		case PTHREAD_COND:
			pthread_mutex_lock(&c->pm);
			while (c->turn % 2 != me)
				pthread_cond_wait(&c->pc, &c->pm);
			c->stamp[c->turn] = now_ns();
			c->turn++;
			pthread_cond_signal(&c->pc);
			pthread_mutex_unlock(&c->pm);
			break;
		case FUTEX:
			while ((t = __atomic_load_n(&c->turn, __ATOMIC_ACQUIRE)) % 2 != me)
				futex_wait(&c->turn, t);
			c->stamp[t] = now_ns();
			__atomic_store_n(&c->turn, t + 1, __ATOMIC_RELEASE);
			futex_wake(&c->turn);
			break;
		default:
			hrt_mutex_lock(&c->hm);
			while (c->turn % 2 != me)
				hrt_cond_wait(&c->hc, &c->hm);
			c->stamp[c->turn] = now_ns();
			c->turn++;
			hrt_cond_signal(&c->hc);
			hrt_mutex_unlock(&c->hm);
		}
	}
}

static void *linux_player(void *arg)
{
	pin(1);
	play(arg, 1);
	return NULL;
}

static void *hrt_player(void *arg)
{
	play(&court, (uint32_t)(long)arg);
	return NULL;
}

/* The Active Message ball: each handler stamps and sends it back. */
static uint32_t am_done;

static void on_ball(int action, uint64_t turn, void *ctx)
{
	(void)action;
	(void)ctx;
	court.stamp[turn] = now_ns();
	if (turn + 1 < 2 * PASSES) {
		hrt_am_send((int)((turn + 1) % 2), 1, turn + 1);
	} else {
		__atomic_store_n(&am_done, 1, __ATOMIC_RELEASE);
		syscall(SYS_futex, &am_done, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

static void pass_ball(enum ball how, double *t, int *n)
{
	struct court *c = &court;

	memset(c, 0, sizeof(*c));
	c->how = how;
	if (how == PTHREAD_COND || how == FUTEX) {
		pthread_t p;

		pthread_mutex_init(&c->pm, NULL);
		pthread_cond_init(&c->pc, NULL);
		pin(0);
		must(pthread_create(&p, NULL, linux_player, c), "pthread_create");
		play(c, 0);
		must(pthread_join(p, NULL), "pthread_join");
	} else if (how == HRT_COND) {
		hrt_thread_t a, b;

		must(hrt_thread_create(&b, 1, hrt_player, (void *)1L), "hrt_thread_create");
		must(hrt_thread_create(&a, 0, hrt_player, (void *)0L), "hrt_thread_create");
		must(hrt_thread_join(a, NULL), "hrt_thread_join");
		must(hrt_thread_join(b, NULL), "hrt_thread_join");
	} else {
		am_done = 0;
		hrt_am_send(0, 1, 0);
		while (!__atomic_load_n(&am_done, __ATOMIC_ACQUIRE))
			syscall(SYS_futex, &am_done, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	}
	for (int i = 1; i < 2 * PASSES; i++)
		t[(*n)++] = c->stamp[i] - c->stamp[i - 1];
}

static void row_wakeup(void)
{
	static double t[2 * PASSES * 16];
	const char *names[] = { "pthread_cond", "futex", "hrt_cond", "hrt_am" };
	enum ball first = hrt ? HRT_COND : PTHREAD_COND;

	if (hrt) {
		hrt_am_register(0, 1, on_ball, NULL);
		hrt_am_register(1, 1, on_ball, NULL);
	}
	for (enum ball how = first; how <= (hrt ? HRT_AM : FUTEX); how++) {
		int n = 0;

		for (int r = 0; r < reps && r < 16; r++)
			pass_ball(how, t, &n);
		report("wakeup", names[how], t, n, NULL);
	}
}

/* ---- broadcast: one thread wakes a waiter on each other CPU ---- */

/*
 * The broadcaster and the waiters meet on futex words before and after
 * each broadcast (no spinning: under -icount a spinning vCPU would hold up
 * the others, which run in turn).
 */
static struct {
	uint32_t round;		/* the waiters wait for it to change */
	uint32_t ready;		/* waiters at the start line, all rounds */
	uint32_t woken;		/* waiters that ran, all rounds */
	pthread_mutex_t pm;
	pthread_cond_t pc;
	hrt_mutex_t hm;
	hrt_cond_t hc;
	int use_hrt;
	double woke[MAX_CPUS];
} field;

static int waiters;

static void count_and_tell(uint32_t *word, uint32_t all)
{
	if (__atomic_add_fetch(word, 1, __ATOMIC_SEQ_CST) == all)
		syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void wait_count(uint32_t *word, uint32_t all)
{
	uint32_t v;

	while ((v = __atomic_load_n(word, __ATOMIC_SEQ_CST)) < all)
		syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void *waiter(void *arg)
{
	long k = (long)arg;

	if (!field.use_hrt)
		pin((int)k);
	for (int r = 0; r < BROADCASTS; r++) {
		uint32_t all = (uint32_t)waiters * (r + 1);

		if (field.use_hrt) {
			hrt_mutex_lock(&field.hm);
			count_and_tell(&field.ready, all);
			while (field.round == (uint32_t)r)
				hrt_cond_wait(&field.hc, &field.hm);
			hrt_mutex_unlock(&field.hm);
		} else {
			pthread_mutex_lock(&field.pm);
			count_and_tell(&field.ready, all);
			while (field.round == (uint32_t)r)
				pthread_cond_wait(&field.pc, &field.pm);
			pthread_mutex_unlock(&field.pm);
		}
		field.woke[k] = now_ns();
		count_and_tell(&field.woken, all);
	}
	return NULL;
}

/* Nemo's broadcast event: an Active Message to every other CPU. */
static void on_broadcast(int action, uint64_t arg, void *ctx)
{
	(void)action;
	field.woke[(long)ctx] = now_ns();
	count_and_tell(&field.woken, (uint32_t)waiters * ((uint32_t)arg + 1));
}

static void am_broadcasts(int n)
{
	static double last[BROADCASTS], spread[BROADCASTS];
	int here = hrt_this_cpu();

	waiters = 0;
	for (long c = 0; c < n; c++) {
		if (c == here)
			continue;
		hrt_am_register((int)c, 2, on_broadcast, (void *)c);
		waiters++;
	}
	field.woken = 0;
	for (int r = 0; r < BROADCASTS; r++) {
		struct timespec ms = { 0, 200000 };
		double t0, lo = 1e30, hi = 0;

		nanosleep(&ms, NULL);
		t0 = now_ns();
		hrt_am_broadcast(2, (uint64_t)r);
		wait_count(&field.woken, (uint32_t)waiters * (r + 1));
		for (int c = 0; c < n; c++) {
			if (c == here)
				continue;
			lo = field.woke[c] < lo ? field.woke[c] : lo;
			hi = field.woke[c] > hi ? field.woke[c] : hi;
		}
		last[r] = hi - t0;
		spread[r] = hi - lo;
	}
	sort_times(spread, BROADCASTS);
	report("broadcast", "hrt_am", last, BROADCASTS, &spread[BROADCASTS / 2]);
}

static void row_broadcast(void)
{
	static double last[BROADCASTS], spread[BROADCASTS];
	hrt_thread_t h[MAX_CPUS];
	pthread_t p[MAX_CPUS];
	int n = hrt ? hrt_ncpus() : ncpus;

	memset(&field, 0, sizeof(field));
	field.use_hrt = hrt;
	pthread_mutex_init(&field.pm, NULL);
	pthread_cond_init(&field.pc, NULL);
	waiters = n - 1;
	if (waiters < 1)
		return;
	if (!hrt)
		pin(0);
	for (long k = 1; k <= waiters; k++) {
		if (hrt)
			must(hrt_thread_create(&h[k], (int)k, waiter, (void *)k), "hrt_thread_create");
		else
			must(pthread_create(&p[k], NULL, waiter, (void *)k), "pthread_create");
	}
	for (int r = 0; r < BROADCASTS; r++) {
		uint32_t all = (uint32_t)waiters * (r + 1);
		struct timespec ms = { 0, 200000 };
		double t0, lo = 1e30, hi = 0;

		/* Every waiter asleep before the broadcast. */
		wait_count(&field.ready, all);
		nanosleep(&ms, NULL);
		t0 = now_ns();
		if (hrt) {
			hrt_mutex_lock(&field.hm);
			field.round++;
			hrt_cond_broadcast(&field.hc);
			hrt_mutex_unlock(&field.hm);
		} else {
			pthread_mutex_lock(&field.pm);
			field.round++;
			pthread_cond_broadcast(&field.pc);
			pthread_mutex_unlock(&field.pm);
		}
		wait_count(&field.woken, all);
		for (int k = 1; k <= waiters; k++) {
			lo = field.woke[k] < lo ? field.woke[k] : lo;
			hi = field.woke[k] > hi ? field.woke[k] : hi;
		}
		last[r] = hi - t0;
		spread[r] = hi - lo;
	}
	for (int k = 1; k <= waiters; k++) {
		if (hrt)
			must(hrt_thread_join(h[k], NULL), "hrt_thread_join");
		else
			must(pthread_join(p[k], NULL), "pthread_join");
	}
	sort_times(spread, BROADCASTS);
	report("broadcast", hrt ? "hrt_cond" : "pthread_cond", last, BROADCASTS,
	       &spread[BROADCASTS / 2]);
	if (hrt)
		am_broadcasts(n);
}

int main(int argc, char **argv)
{
	const char *row = argc > 1 ? argv[1] : "";
	cpu_set_t mine;

	if (argc > 2)
		reps = atoi(argv[2]);
	if (reps < 1 || reps > 64)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	hrt = hrt_kernel_mode() >= 0;
	sched_getaffinity(0, sizeof(mine), &mine);
	for (int c = 0; c < CPU_SETSIZE && ncpus < MAX_CPUS; c++)
		if (CPU_ISSET(c, &mine))
			cpus[ncpus++] = c;
	printf("hrt_bench: %s, %d cpus\n", !hrt ? "linux" : hrt_kernel_mode() ? "kernel" : "ring3",
	       hrt ? hrt_ncpus() : ncpus);
	if (!strcmp(row, "call"))
		row_call();
	else if (!strcmp(row, "thread"))
		row_thread();
	else if (!strcmp(row, "wakeup"))
		row_wakeup();
	else if (!strcmp(row, "broadcast"))
		row_broadcast();
	else
		return 2;
	return 0;
}
