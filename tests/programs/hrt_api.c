// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hybrid-runtime API (atoll/hrt.h) under load, with every count
 * checked: a thread on every CPU, fork/join 16 deep, a mutex and a
 * condition variable passing a token around many threads, Active Messages
 * from every CPU to every CPU, broadcasts, nested interrupt-off regions.
 * Prints one line per part ("... ok" or what went wrong); exit 0 if all
 * passed. Threads record, main prints: the API's threads are no pthreads.
 * `hrt_api wait`: then a thread on every CPU waits on a condition variable
 * that never comes, and main sleeps ("hrt api: waiting"), to be killed.
 * `hrt_api signal`: then main waits on one in the API, where the LWK's
 * interrupts do not deliver signals: a SIGHUP's handler must run on the
 * way back from the call, and a SIGTERM end the program there.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atoll/hrt.h>

#define MAX_CPUS 64
#define DEPTH 16
#define ROUNDS 200
#define MESSAGES 500
#define BROADCASTS 300

static int failures;

static void check(int ok, const char *what)
{
	printf("%s %s\n", what, ok ? "ok" : "FAILED");
	if (!ok)
		failures++;
}

/* ---- a thread on every CPU ---- */
static void *nothing_much(void *arg)
{
	return arg;
}

static int ran_on[MAX_CPUS];

static void *where(void *arg)
{
	ran_on[(long)arg] = hrt_this_cpu();
	return arg;
}

static void every_cpu(int n)
{
	hrt_thread_t t[MAX_CPUS];
	int ok = 1;

	for (long i = 0; i < n; i++)
		ok &= hrt_thread_create(&t[i], (int)i, where, (void *)i) == 0;
	for (long i = 0; i < n; i++) {
		void *r = NULL;

		ok &= hrt_thread_join(t[i], &r) == 0 && (long)r == i && ran_on[i] == i;
	}
	check(ok, "threads on every cpu:");
}

/*
 * Many more threads than the LWK has memory for at once: each one's
 * memory must come back at its end.
 */
static void many_threads(int n)
{
	int ok = 1;

	for (long i = 0; i < 5000; i++) {
		hrt_thread_t t;
		void *r = NULL;

		ok &= hrt_thread_create(&t, (int)(i % n), nothing_much, (void *)i) == 0 &&
		      hrt_thread_join(t, &r) == 0 && (long)r == i;
		if (!ok)
			break;
	}
	check(ok, "5000 threads one after another:");
}

/* ---- fork/join, each level on the next CPU ---- */
static int ncpus;
static int wrong_cpu;

static void *level(void *arg)
{
	long depth = (long)arg;
	hrt_thread_t child;
	void *below = NULL;

	if (hrt_this_cpu() != depth % ncpus)
		__atomic_add_fetch(&wrong_cpu, 1, __ATOMIC_RELAXED);
	if (depth == DEPTH)
		return (void *)depth;
	if (hrt_thread_create(&child, (int)((depth + 1) % ncpus), level, (void *)(depth + 1)) ||
	    hrt_thread_join(child, &below))
		return (void *)-1L;
	return (void *)((long)below + depth);
}

static void fork_join(void)
{
	hrt_thread_t top;
	void *sum = NULL;
	long want = DEPTH * (DEPTH + 1) / 2;

	hrt_thread_create(&top, 0, level, (void *)0L);
	hrt_thread_join(top, &sum);
	printf("fork/join depth %d: sum %ld (want %ld), on the wrong cpu %d\n", DEPTH, (long)sum,
	       want, wrong_cpu);
	check((long)sum == want && wrong_cpu == 0, "fork/join:");
}

/* ---- a token passed around threads with a mutex and a condvar ---- */
static hrt_mutex_t lock = HRT_MUTEX_INIT;
static hrt_cond_t turn_changed = HRT_COND_INIT;
static int turn;
static int holders;
static long passes;
static long counter;

static void *pass_token(void *arg)
{
	int me = (int)(long)arg;

	for (int r = 0; r < ROUNDS; r++) {
		hrt_mutex_lock(&lock);
		while (turn != me)
			hrt_cond_wait(&turn_changed, &lock);
		passes++;
		turn = (me + 1) % holders;
		hrt_cond_broadcast(&turn_changed);
		hrt_mutex_unlock(&lock);
		/* And a counter everyone hammers. */
		for (int i = 0; i < 50; i++) {
			hrt_mutex_lock(&lock);
			counter++;
			hrt_mutex_unlock(&lock);
		}
	}
	return NULL;
}

static void token_ring(int n)
{
	hrt_thread_t t[2 * MAX_CPUS];

	holders = 2 * n + 1;
	if (holders > 2 * MAX_CPUS)
		holders = 2 * MAX_CPUS;
	for (long i = 0; i < holders; i++)
		hrt_thread_create(&t[i], (int)(i % n), pass_token, (void *)i);
	for (int i = 0; i < holders; i++)
		hrt_thread_join(t[i], NULL);
	printf("condvar: %d threads, %ld passes (want %d), counter %ld (want %d)\n", holders,
	       passes, holders * ROUNDS, counter, holders * ROUNDS * 50);
	check(passes == (long)holders * ROUNDS && counter == (long)holders * ROUNDS * 50,
	      "condvar token ring:");
}

/* ---- Active Messages ---- */
static long got[MAX_CPUS];
static long got_sum[MAX_CPUS];
static long got_broadcast[MAX_CPUS];
static long handled_elsewhere;

static void on_message(int action, uint64_t arg, void *ctx)
{
	long cpu = (long)ctx;

	(void)action;
	if (hrt_this_cpu() != cpu)
		__atomic_add_fetch(&handled_elsewhere, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&got[cpu], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&got_sum[cpu], (long)arg, __ATOMIC_RELAXED);
}

static void on_broadcast(int action, uint64_t arg, void *ctx)
{
	(void)action;
	(void)arg;
	__atomic_add_fetch(&got_broadcast[(long)ctx], 1, __ATOMIC_RELAXED);
}

static long total(long *counts, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
	return s;
}

/* Waits up to 60 s for counts to reach want. */
static void settle(long *counts, int n, long want)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 60000 && total(counts, n) < want; i++)
		nanosleep(&ms, NULL);
}

static void *sender(void *arg)
{
	long me = (long)arg;

	for (int m = 0; m < MESSAGES; m++)
		for (int cpu = 0; cpu < ncpus; cpu++)
			while (hrt_am_send(cpu, 1, (uint64_t)(me * 1000 + m)) != 0)
				;
	return NULL;
}

static void messages(int n)
{
	hrt_thread_t t[MAX_CPUS];
	long want_sum = 0;
	int ok = 1;

	for (long c = 0; c < n; c++) {
		ok &= hrt_am_register((int)c, 1, on_message, (void *)c) == 0;
		ok &= hrt_am_register((int)c, 2, on_broadcast, (void *)c) == 0;
	}
	for (long i = 0; i < n; i++)
		hrt_thread_create(&t[i], (int)i, sender, (void *)i);
	for (int i = 0; i < n; i++)
		hrt_thread_join(t[i], NULL);
	settle(got, n, (long)n * n * MESSAGES);
	for (long s = 0; s < n; s++)
		for (long m = 0; m < MESSAGES; m++)
			want_sum += s * 1000 + m;
	for (int c = 0; c < n; c++)
		ok &= got[c] == (long)n * MESSAGES && got_sum[c] == want_sum;
	printf("active messages: %ld handled (want %ld), %ld on the wrong cpu\n", total(got, n),
	       (long)n * n * MESSAGES, handled_elsewhere);
	check(ok && handled_elsewhere == 0, "active messages:");

	for (int b = 0; b < BROADCASTS; b++)
		while (hrt_am_broadcast(2, (uint64_t)b) != 0)
			;
	settle(got_broadcast, n, (long)n * BROADCASTS);
	usleep(100000);
	ok = 1;
	for (int c = 0; c < n; c++)
		ok &= got_broadcast[c] == BROADCASTS;
	printf("broadcast: %d sent, each cpu got", BROADCASTS);
	for (int c = 0; c < n; c++)
		printf(" %ld", got_broadcast[c]);
	printf("\n");
	check(ok, "broadcast exactly once per cpu:");
	check(hrt_am_send(0, 3, 0) != 0 && hrt_am_register(0, HRT_AM_ACTIONS, on_message, 0) != 0,
	      "bad messages refused:");
}

static void irq_regions(void)
{
	unsigned long outer = hrt_irq_save();
	unsigned long inner = hrt_irq_save();

	hrt_irq_restore(inner);
	hrt_irq_restore(outer);
	check(outer != 0 && inner == 0, "nested interrupt-off regions:");
}

static hrt_cond_t never = HRT_COND_INIT;
static hrt_mutex_t never_lock = HRT_MUTEX_INIT;

static void *wait_forever(void *arg)
{
	hrt_mutex_lock(&never_lock);
	for (;;)
		hrt_cond_wait(&never, &never_lock);
	return arg;
}

static volatile sig_atomic_t hangups;

static void on_hangup(int signo)
{
	(void)signo;
	hangups++;
}

/* Only the API's calls until SIGHUP's handler has run, then until SIGTERM. */
static void wait_for_signals(void)
{
	struct sigaction sa = { .sa_handler = on_hangup };

	sigaction(SIGHUP, &sa, NULL);
	printf("hrt api: waiting for signals\n");
	hrt_mutex_lock(&never_lock);
	while (!hangups)
		hrt_cond_wait(&never, &never_lock);
	hrt_mutex_unlock(&never_lock);
	printf("hrt api: the SIGHUP handler ran\n");
	wait_forever(NULL);
}

int main(int argc, char **argv)
{
	int mode = hrt_kernel_mode();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mode < 0) {
		printf("hrt: not in an Atoll enclave\n");
		return 2;
	}
	ncpus = hrt_ncpus();
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	printf("hrt api: %s mode, %d cpus, a null call returns %ld\n", mode ? "kernel" : "user",
	       ncpus, hrt_null());
	every_cpu(ncpus);
	many_threads(ncpus);
	fork_join();
	token_ring(ncpus);
	messages(ncpus);
	irq_regions();
	printf("hrt api: %d failures\n", failures);
	if (argc > 1 && strcmp(argv[1], "wait") == 0) {
		hrt_thread_t t;

		for (int c = 0; c < ncpus; c++)
			hrt_thread_create(&t, c, wait_forever, NULL);
		printf("hrt api: waiting\n");
		for (;;)
			pause();
	}
	if (argc > 1 && strcmp(argv[1], "signal") == 0)
		wait_for_signals();
	return failures ? 1 : 0;
}
