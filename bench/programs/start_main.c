// SPDX-License-Identifier: GPL-2.0-only
/*
 * The start-to-main figure (issue 41, Fig 5.3 of the seed): a static
 * program that reads the TSC first thing in main.
 *   start_main                  prints "start_main tsc=N" (in an enclave,
 *                               against `atoll run --stats`'s TSC of the run
 *                               request)
 *   start_main --launch COUNT   Linux's fork + exec of this very program to
 *                               its main, COUNT times: each child prints
 *                               "start_main cycles=N" since its fork; then
 *                               "start_main tsc_mhz=M"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static double tsc_mhz(void)
{
	struct timespec a, b, pause = { 0, 100000000 };
	uint64_t t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	t0 = rdtsc();
	nanosleep(&pause, NULL);
	t1 = rdtsc();
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (t1 - t0) / ((b.tv_sec - a.tv_sec) * 1e6 + (b.tv_nsec - a.tv_nsec) / 1e3);
}

int main(int argc, char **argv)
{
	uint64_t now = rdtsc();

	if (argc == 3 && !strcmp(argv[1], "--since")) {
		printf("start_main cycles=%llu\n", (unsigned long long)(now - strtoull(argv[2], NULL, 10)));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "--launch")) {
		for (int i = 0; i < atoi(argv[2]); i++) {
			char since[32];
			uint64_t t0;
			pid_t pid;

			fflush(stdout);
			t0 = rdtsc();
			pid = fork();
			if (pid == 0) {
				snprintf(since, sizeof(since), "%llu", (unsigned long long)t0);
				execl("/proc/self/exe", "start_main", "--since", since, (char *)NULL);
				_exit(127);
			}
			waitpid(pid, NULL, 0);
		}
		printf("start_main tsc_mhz=%.1f\n", tsc_mhz());
		return 0;
	}
	printf("start_main tsc=%llu\n", (unsigned long long)now);
	return 0;
}
