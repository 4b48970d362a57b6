// SPDX-License-Identifier: GPL-2.0-only
/*
 * STREAM's triad, a[i] = b[i] + s * c[i], over `n` doubles per array with
 * OpenMP (static schedule; each thread first touches the part it works on).
 * One untimed warm-up, then `runs` timed triads of `sweeps` passes each.
 *   stream [n [runs [sweeps]]]     (default 4194304 doubles, 10 runs, 1 sweep)
 * Prints "stream: run=<i> seconds=<t> mbps=<MB/s>" per run (24 bytes per
 * element per pass, as STREAM counts), then a summary; exits 1 if any a[i]
 * is wrong.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "timing.h"

static void triad(double *a, const double *b, const double *c, double s, long n)
{
#pragma omp parallel for schedule(static)
	for (long i = 0; i < n; i++)
		a[i] = b[i] + s * c[i];
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 4194304, wrong = 0;
	int runs = argc > 2 ? atoi(argv[2]) : 10, sweeps = argc > 3 ? atoi(argv[3]) : 1;
	double *a = malloc(n * sizeof(double)), *b = malloc(n * sizeof(double));
	double *c = malloc(n * sizeof(double)), best = 1e30, worst = 0, sum = 0;

	if (!a || !b || !c || n < 1 || runs < 1 || sweeps < 1) {
		fprintf(stderr, "stream: bad arguments or out of memory\n");
		return 2;
	}
#pragma omp parallel for schedule(static)
	for (long i = 0; i < n; i++) {
		a[i] = 0;
		b[i] = 2.0;
		c[i] = 0.5;
	}
	printf("stream: threads=%d n=%ld mib=%.0f runs=%d sweeps=%d\n", omp_get_max_threads(), n,
	       3.0 * n * sizeof(double) / 1048576, runs, sweeps);
	fflush(stdout);
	triad(a, b, c, 3.0, n);
	for (int r = 0; r < runs; r++) {
		double t0 = now_s(), t;

		for (int k = 0; k < sweeps; k++)
			triad(a, b, c, 3.0, n);
		t = now_s() - t0;
		best = t < best ? t : best;
		worst = t > worst ? t : worst;
		sum += t;
		printf("stream: run=%d seconds=%.6f mbps=%.1f\n", r, t, 24.0 * n * sweeps / t / 1e6);
		fflush(stdout);
	}
	for (long i = 0; i < n; i++)
		wrong += a[i] != 3.5;
	printf("stream: best=%.6f mean=%.6f worst=%.6f wrong=%ld %s\n", best, sum / runs, worst, wrong,
	       wrong ? "FAILED" : "ok");
	return wrong != 0;
}
