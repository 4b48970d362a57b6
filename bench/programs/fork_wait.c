// SPDX-License-Identifier: GPL-2.0-only
/*
 * Process creation: fork + _exit + waitpid, `count` times, `reps` times;
 * prints ns per round trip.
 *   fork_wait [count [reps]]   (default 200 forks, 3 reps)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "timing.h"

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 200, i;
	int reps = argc > 2 ? atoi(argv[2]) : 3, r, st;

	if (count < 1 || reps < 1)
		return 2;
	for (r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (i = 0; i < count; i++) {
			pid_t pid = fork();

			if (pid == 0)
				_exit(0);
			if (pid < 0 || waitpid(pid, &st, 0) != pid || st != 0) {
				printf("fork_wait: FAIL at %ld\n", i);
				return 1;
			}
		}
		printf("fork_wait: rep=%d forks=%ld ns_per_fork=%.1f\n", r, count, (now_ns() - t0) / count);
	}
	return 0;
}
