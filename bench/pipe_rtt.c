// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Linux baseline for the control channel's round trip: one byte
 * ping-ponged through two pipes between two processes pinned to two CPUs.
 *   pipe_rtt <cpu_a> <cpu_b> <rounds>
 * Prints: pipe_rtt: rounds=... min_ns=... median_ns=... mean_ns=...
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("pipe_rtt: sched_setaffinity");
		exit(1);
	}
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int there[2], back[2], rounds, i;
	uint64_t *rtt, sum = 0;
	char c = 'x';

	if (argc != 4) {
		fprintf(stderr, "usage: pipe_rtt <cpu_a> <cpu_b> <rounds>\n");
		return 2;
	}
	rounds = atoi(argv[3]);
	rtt = calloc(rounds, sizeof(*rtt));
	if (!rtt || pipe(there) || pipe(back))
		return 1;
	if (fork() == 0) {
		pin(atoi(argv[2]));
		for (i = 0; i < rounds; i++)
			if (read(there[0], &c, 1) != 1 || write(back[1], &c, 1) != 1)
				return 1;
		return 0;
	}
	pin(atoi(argv[1]));
	for (i = 0; i < rounds; i++) {
		uint64_t t0 = now_ns();

		if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
			return 1;
		rtt[i] = now_ns() - t0;
		sum += rtt[i];
	}
	wait(NULL);
	qsort(rtt, rounds, sizeof(*rtt), cmp);
	printf("pipe_rtt: rounds=%d min_ns=%llu median_ns=%llu mean_ns=%llu\n", rounds,
	       (unsigned long long)rtt[0], (unsigned long long)rtt[rounds / 2],
	       (unsigned long long)(sum / rounds));
	return 0;
}
