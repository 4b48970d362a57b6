// SPDX-License-Identifier: GPL-2.0-only
/*
 * Thread creation: pthread_create + pthread_join of a thread that returns
 * at once, `count` times, `reps` times.
 *   thread_create [count [reps]]   (default 1000 threads, 3 reps)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "timing.h"

static void *nothing(void *arg)
{
	return (char *)arg + 1;
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 1000, i, bad = 0;
	int reps = argc > 2 ? atoi(argv[2]) : 3, r;
	double ns[100];

	if (count < 1 || reps < 1 || reps > 100)
		return 2;
	for (r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (i = 0; i < count; i++) {
			pthread_t t;
			void *ret;

			if (pthread_create(&t, NULL, nothing, (void *)i) || pthread_join(t, &ret)) {
				printf("thread_create: FAIL: pthread_create/join %ld\n", i);
				return 1;
			}
			bad += ret != (void *)(i + 1);
		}
		ns[r] = (now_ns() - t0) / count;
		printf("thread_create: rep=%d threads=%ld ns_per_thread=%.1f\n", r, count, ns[r]);
		fflush(stdout);
	}
	sort_times(ns, reps);
	printf("thread_create: best_ns=%.1f median_ns=%.1f wrong=%ld\n", ns[0], ns[reps / 2], bad);
	return bad != 0;
}
