// SPDX-License-Identifier: GPL-2.0-only
/*
 * POSIX threads: N threads (default: the CPUs in the affinity mask) meet at
 * a barrier, add to a mutex-protected counter, pass a token round a ring
 * with a condition variable, and meet again. Prints what it counted and
 * exits 1 on any wrong result.
 *   pthreads [threads]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "check.h"

#define ADDS 20000	/* counter increments per thread */
#define ROUNDS 50	/* trips of the token round the ring */

static int nthreads;
static pthread_barrier_t barrier;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static long counter;
static int turn, handoffs, serial_first, serial_last;
static pid_t tids[1024], pids[1024];

static void *worker(void *arg)
{
	int id = (int)(long)arg, i;

	tids[id] = (pid_t)syscall(SYS_gettid);
	pids[id] = getpid();
	if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
		__atomic_add_fetch(&serial_first, 1, __ATOMIC_RELAXED);

	for (i = 0; i < ADDS; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}

	/* The token goes 0 -> 1 -> ... -> N-1 -> 0, ROUNDS times. */
	for (i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		while (turn != id)
			pthread_cond_wait(&turn_changed, &lock);
		handoffs++;
		turn = (id + 1) % nthreads;
		pthread_cond_broadcast(&turn_changed);
		pthread_mutex_unlock(&lock);
	}

	if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD)
		__atomic_add_fetch(&serial_last, 1, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[1024];
	cpu_set_t set;
	int cpus, i, j, distinct = 0;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		perror("pthreads: sched_getaffinity");
		return 1;
	}
	cpus = CPU_COUNT(&set);
	nthreads = argc > 1 ? atoi(argv[1]) : cpus;
	if (nthreads < 1 || nthreads > 1024) {
		fprintf(stderr, "pthreads: 1 to 1024 threads\n");
		return 2;
	}
	printf("cpus=%d threads=%d\n", cpus, nthreads);
	fflush(stdout);

	pthread_barrier_init(&barrier, NULL, nthreads);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&threads[i], NULL, worker, (void *)(long)i)) {
			printf("FAIL: pthread_create %d\n", i);
			return 1;
		}
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);

	for (i = 0; i < nthreads; i++) {
		for (j = 0; j < i && tids[j] != tids[i]; j++)
			;
		distinct += j == i;
		CHECK(pids[i] == getpid(), "thread %d sees pid %d, main sees %d", i, pids[i], getpid());
	}
	printf("counter=%ld expected=%ld\n", counter, (long)nthreads * ADDS);
	printf("handoffs=%d expected=%d\n", handoffs, nthreads * ROUNDS);
	printf("barrier serial threads=%d,%d expected=1,1\n", serial_first, serial_last);
	printf("distinct tids=%d\n", distinct);
	CHECK(counter == (long)nthreads * ADDS, "counter");
	CHECK(handoffs == nthreads * ROUNDS, "handoffs");
	CHECK(serial_first == 1 && serial_last == 1, "barrier");
	CHECK(distinct == nthreads, "thread ids are not distinct");
	printf("pthreads: %s\n", check_failures ? "FAILED" : "ok");
	return check_failures ? 1 : 0;
}
