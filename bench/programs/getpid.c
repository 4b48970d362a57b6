// SPDX-License-Identifier: GPL-2.0-only
/*
 * System call latency: `calls` raw getpid system calls (no libc caching),
 * timed with clock_gettime, `reps` times.
 *   getpid [calls [reps]]          (default 1000000 calls, 3 reps)
 * Prints one "getpid: rep=..." line per rep, then the best and the median.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "timing.h"

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 1000000, i;
	int reps = argc > 2 ? atoi(argv[2]) : 3, r;
	long pid = getpid(), bad = 0;
	double ns[100];

	if (calls < 1 || reps < 1 || reps > 100)
		return 2;
	for (r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (i = 0; i < calls; i++)
			bad += syscall(SYS_getpid) != pid;
		ns[r] = (now_ns() - t0) / calls;
		printf("getpid: rep=%d calls=%ld ns_per_call=%.1f\n", r, calls, ns[r]);
		fflush(stdout);
	}
	sort_times(ns, reps);
	printf("getpid: best_ns=%.1f median_ns=%.1f wrong=%ld\n", ns[0], ns[reps / 2], bad);
	return bad != 0;
}
