// SPDX-License-Identifier: GPL-2.0-only
/*
 * The hybrid-runtime API against what Linux programs use, in one program
 * run on Linux, in ring 3 and at CPL 0 (issue 41's make bench-hrt):
 *   null call      hrt_null() (HRT only) vs getpid by SYSCALL
 *   thread         hrt_thread_create + join (HRT only) vs pthread_create + join
 *   wakeup         a ping-pong between two threads on two CPUs: HRT
 *                  condvar (HRT only) vs pthread_cond; the time per one-way
 *                  wake-up, its median, p99 and spread over the round trips
 * Each row: "hrt_bench: <row> <mechanism> median_ns=... p99_ns=... best_ns=...".
 *   hrt_bench [reps]    (default 5 reps of each)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atoll/hrt.h>

#include "timing.h"

#define CALLS 20000
#define THREADS 500
#define PINGS 400

static int reps = 5;

static void report(const char *row, const char *how, double *t, int n)
{
	sort_times(t, n);
	printf("hrt_bench: %s %s median_ns=%.1f p99_ns=%.1f best_ns=%.1f worst_ns=%.1f\n", row, how,
	       t[n / 2], t[(n * 99) / 100], t[0], t[n - 1]);
}

static void null_calls(int hrt)
{
	double t[64];

	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (int i = 0; i < CALLS; i++)
			syscall(SYS_getpid);
		t[r] = (now_ns() - t0) / CALLS;
	}
	report("null_call", "getpid_syscall", t, reps);
	if (!hrt)
		return;
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (int i = 0; i < CALLS; i++)
			hrt_null();
		t[r] = (now_ns() - t0) / CALLS;
	}
	report("null_call", "hrt_null", t, reps);
}

static void *nothing(void *arg)
{
	return arg;
}

static void threads(int hrt)
{
	double t[64];

	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (int i = 0; i < THREADS; i++) {
			pthread_t p;

			pthread_create(&p, NULL, nothing, NULL);
			pthread_join(p, NULL);
		}
		t[r] = (now_ns() - t0) / THREADS;
	}
	report("thread", "pthread", t, reps);
	if (!hrt)
		return;
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (int i = 0; i < THREADS; i++) {
			hrt_thread_t h;

			hrt_thread_create(&h, HRT_ANY_CPU, nothing, NULL);
			hrt_thread_join(h, NULL);
		}
		t[r] = (now_ns() - t0) / THREADS;
	}
	report("thread", "hrt_thread", t, reps);
}

/* A ball passed between two threads: each waits for its turn, then gives it. */
struct court {
	int turn;
	int rounds;
	pthread_mutex_t pm;
	pthread_cond_t pc;
	hrt_mutex_t hm;
	hrt_cond_t hc;
	double stamp[2 * PINGS + 1];
};

static void play_pthread(struct court *c, int me)
{
	for (int i = 0; i < c->rounds; i++) {
		pthread_mutex_lock(&c->pm);
		while (c->turn % 2 != me)
			pthread_cond_wait(&c->pc, &c->pm);
		c->stamp[c->turn] = now_ns();
		c->turn++;
		pthread_cond_signal(&c->pc);
		pthread_mutex_unlock(&c->pm);
	}
}

static void *pthread_player(void *arg)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(1, &one);
	sched_setaffinity(0, sizeof(one), &one);
	play_pthread(arg, 1);
	return NULL;
}

/* Reads the clock only through the vDSO: no libc state (an HRT thread). */
static void play_hrt(struct court *c, int me)
{
	for (int i = 0; i < c->rounds; i++) {
		hrt_mutex_lock(&c->hm);
		while (c->turn % 2 != me)
			hrt_cond_wait(&c->hc, &c->hm);
		c->stamp[c->turn] = now_ns();
		c->turn++;
		hrt_cond_signal(&c->hc);
		hrt_mutex_unlock(&c->hm);
	}
}

static void *hrt_first_player(void *arg)
{
	play_hrt(arg, 0);
	return NULL;
}

static void *hrt_second_player(void *arg)
{
	play_hrt(arg, 1);
	return NULL;
}

static void wakeups(int hrt)
{
	static struct court c;
	double t[2 * PINGS * 16];
	int n = 0;
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	for (int r = 0; r < reps && r < 16; r++) {
		pthread_t p;

		c.turn = 0;
		c.rounds = PINGS;
		pthread_mutex_init(&c.pm, NULL);
		pthread_cond_init(&c.pc, NULL);
		sched_setaffinity(0, sizeof(one), &one);
		pthread_create(&p, NULL, pthread_player, &c);
		play_pthread(&c, 0);
		pthread_join(p, NULL);
		for (int i = 1; i < 2 * PINGS; i++)
			t[n++] = c.stamp[i] - c.stamp[i - 1];
	}
	report("wakeup", "pthread_cond", t, n);
	if (!hrt || hrt_ncpus() < 2)
		return;
	n = 0;
	for (int r = 0; r < reps && r < 16; r++) {
		hrt_thread_t a, b;

		c.turn = 0;
		c.rounds = PINGS;
		c.hm = (hrt_mutex_t)HRT_MUTEX_INIT;
		c.hc = (hrt_cond_t)HRT_COND_INIT;
		hrt_thread_create(&b, 1, hrt_second_player, &c);
		hrt_thread_create(&a, 0, hrt_first_player, &c);
		hrt_thread_join(a, NULL);
		hrt_thread_join(b, NULL);
		for (int i = 1; i < 2 * PINGS; i++)
			t[n++] = c.stamp[i] - c.stamp[i - 1];
	}
	report("wakeup", "hrt_cond", t, n);
}

int main(int argc, char **argv)
{
	int hrt = hrt_kernel_mode() >= 0;

	if (argc > 1)
		reps = atoi(argv[1]);
	if (reps < 1 || reps > 64)
		return 2;
	printf("hrt_bench: where %s\n", !hrt ? "linux" : hrt_kernel_mode() ? "kernel" : "ring3");
	null_calls(hrt);
	threads(hrt);
	wakeups(hrt);
	return 0;
}
