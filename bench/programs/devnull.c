// SPDX-License-Identifier: GPL-2.0-only
/*
 * A round trip of a delegated system call: 1-byte writes to /dev/null, the
 * cheapest call an enclave program hands to Linux, timed `reps` times.
 *   devnull [calls [reps]]         (default 20000 calls, 3 reps)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "timing.h"

int main(int argc, char **argv)
{
	long calls = argc > 1 ? atol(argv[1]) : 20000, i, bad = 0;
	int reps = argc > 2 ? atoi(argv[2]) : 3, r, fd = open("/dev/null", O_WRONLY);
	double ns[100];

	if (fd < 0) {
		perror("devnull: /dev/null");
		return 1;
	}
	if (calls < 1 || reps < 1 || reps > 100)
		return 2;
	for (r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (i = 0; i < calls; i++)
			bad += write(fd, "x", 1) != 1;
		ns[r] = (now_ns() - t0) / calls;
		printf("devnull: rep=%d calls=%ld ns_per_call=%.1f\n", r, calls, ns[r]);
		fflush(stdout);
	}
	sort_times(ns, reps);
	printf("devnull: best_ns=%.1f median_ns=%.1f wrong=%ld\n", ns[0], ns[reps / 2], bad);
	return bad != 0;
}
