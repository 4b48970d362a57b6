// SPDX-License-Identifier: GPL-2.0-only
/*
 * System call latency: `calls` raw getpid system calls (no libc caching),
 * timed with clock_gettime, `reps` times; with `direct`, by CALL into the
 * LWK instead of SYSCALL (a kernel-mode program's direct call, issue 41).
 *   getpid [calls [reps [direct]]]     (default 1000000 calls, 3 reps)
 * Prints one "getpid: rep=..." line per rep, then the best and the median.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "timing.h"

/* SYS_HRT_DIRECT_CALL (abi/src/lib.rs). */
#define HRT_DIRECT_CALL 1003

static unsigned long entry;

/* getpid by CALL; below the red zone first, which the CALL would write. */
static long direct_getpid(void)
{
	long ret;

	__asm__ volatile("sub $128, %%rsp\n"
			 "call *%[entry]\n"
			 "add $128, %%rsp"
			 : "=a"(ret)
			 : "a"((long)SYS_getpid), [entry] "r"(entry)
			 : "rcx", "r11", "memory");
	return ret;
}

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 1000000, i;
	int reps = argc > 2 ? atoi(argv[2]) : 3, r;
	int direct = argc > 3 && !strcmp(argv[3], "direct");
	long pid = getpid(), bad = 0;
	double ns[100];

	if (calls < 1 || reps < 1 || reps > 100)
		return 2;
	if (direct) {
		long at = syscall(HRT_DIRECT_CALL);

		if (at == -1) {
			perror("getpid: no direct call (not a kernel-mode program)");
			return 3;
		}
		entry = at;
	}
	for (r = 0; r < reps; r++) {
		double t0 = now_ns();

		if (direct)
			for (i = 0; i < calls; i++)
				bad += direct_getpid() != pid;
		else
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
