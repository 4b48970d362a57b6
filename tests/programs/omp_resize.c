// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenMP while its enclave grows and shrinks (issue 15): a team of 3
 * threads sums known series in rounds. Round r computes until <dir>/go.<r>
 * appears (the test resizes the enclave meanwhile), then each thread
 * reports how many CPUs sched_getaffinity gives it and where it runs, and
 * <dir>/round.<r> is written. At the end of round 1 the last thread pins
 * itself to the highest CPU it may use; later rounds show where it went.
 * Usage: omp_resize <dir> <rounds>. Exits 1 on a wrong sum.
 */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "check.h"

#define TEAM 3
#define CHUNK 200000L

static int exists(const char *dir, const char *what, int r)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s.%d", dir, what, r);
	return access(path, F_OK) == 0;
}

static void touch(const char *dir, const char *what, int r)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.%d", dir, what, r);
	f = fopen(path, "w");
	if (f)
		fclose(f);
}

/* A sum with a known answer: wrong ones are counted. */
static long chunk(long base)
{
	long s = 0;

	for (long i = 0; i < CHUNK; i++)
		s += base + i;
	return s != CHUNK * base + CHUNK * (CHUNK - 1) / 2;
}

/* The lowest CPU set in m, or -1; the highest when last. */
static int cpu_in(const cpu_set_t *m, int last)
{
	int found = -1;

	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, m)) {
			found = c;
			if (!last)
				break;
		}
	return found;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 0;
	const char *dir = argc > 1 ? argv[1] : ".";
	long wrong = 0, chunks = 0;

	omp_set_num_threads(TEAM);
	for (int r = 0; r < rounds; r++) {
		int count[TEAM] = { 0 }, where[TEAM] = { 0 }, pinned = -1;
		volatile int stop = 0;

		/* _Pragma: checkpatch.pl reads a #pragma's reduction(+:x) as C. */
		_Pragma("omp parallel reduction(+:wrong, chunks)")
		{
			int t = omp_get_thread_num();
			cpu_set_t m;

			for (long k = 0; !stop; k++) {
				wrong += chunk(k * CHUNK + t);
				chunks++;
				if (t == 0 && k % 8 == 0 && exists(dir, "go", r))
					stop = 1;
			}
#pragma omp barrier
			CPU_ZERO(&m);
			if (t < TEAM && sched_getaffinity(0, sizeof(m), &m) == 0) {
				count[t] = CPU_COUNT(&m);
				where[t] = sched_getcpu();
				if (t == TEAM - 1 && r == 1) {
					pinned = cpu_in(&m, 1);
					CPU_ZERO(&m);
					CPU_SET(pinned, &m);
					CHECK(sched_setaffinity(0, sizeof(m), &m) == 0, "pin to CPU %d", pinned);
				}
				if (t == TEAM - 1 && r > 1 && count[t] == 1)
					pinned = cpu_in(&m, 0);
			}
		}
		printf("round %d: team=%d affinity=%d,%d,%d cpus=%d,%d,%d pinned=%d chunks=%ld wrong=%ld\n",
		       r, omp_get_max_threads(), count[0], count[1], count[2],
		       where[0], where[1], where[2], pinned, chunks, wrong);
		fflush(stdout);
		touch(dir, "round", r);
	}
	CHECK(wrong == 0, "%ld wrong sums", wrong);
	printf("omp_resize: %s\n", check_failures ? "FAILED" : "ok");
	return check_failures ? 1 : 0;
}
