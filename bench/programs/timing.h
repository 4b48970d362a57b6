/* SPDX-License-Identifier: GPL-2.0-only */
/* Timing helpers shared by the benchmark programs. */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* CLOCK_MONOTONIC in seconds. */
static inline double now_s(void)
{
	return now_ns() * 1e-9;
}

static inline int timing_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts n timings ascending: [0] is the best, [n / 2] the median. */
static inline void sort_times(double *t, int n)
{
	qsort(t, n, sizeof(t[0]), timing_cmp);
}

#endif
