// SPDX-License-Identifier: GPL-2.0-only
/*
 * Starting a program from a large one: posix_spawn of this binary (which
 * exits at once) + waitpid, `count` times, `reps` times, after writing
 * `mib` MiB; prints ns per round trip. Run it by its full path.
 *   spawn_wait [count [reps [mib]]]   (default 20 spawns, 3 reps, 64 MiB)
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "timing.h"

extern char **environ;

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child"))
		return 0;
	long count = argc > 1 ? atol(argv[1]) : 20, i;
	int reps = argc > 2 ? atoi(argv[2]) : 3, r, st;
	long bytes = (argc > 3 ? atol(argv[3]) : 64) << 20;
	char *args[] = { argv[0], "child", NULL };
	char *big = malloc(bytes);

	if (count < 1 || reps < 1 || !big)
		return 2;
	memset(big, 1, bytes);
	for (r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (i = 0; i < count; i++) {
			pid_t pid;

			if (posix_spawn(&pid, argv[0], NULL, NULL, args, environ) ||
			    waitpid(pid, &st, 0) != pid || st != 0) {
				printf("spawn_wait: FAIL at %ld\n", i);
				return 1;
			}
		}
		printf("spawn_wait: rep=%d spawns=%ld mib=%ld ns_per_spawn=%.1f\n", r, count, bytes >> 20,
		       (now_ns() - t0) / count);
	}
	return 0;
}
