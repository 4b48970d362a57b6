// SPDX-License-Identifier: GPL-2.0-only
/*
 * Conjugate gradients on the 2D Poisson equation: the 5-point Laplacian on
 * an n x n grid (zero Dirichlet boundary, matrix-free), right-hand side 1,
 * a fixed number of iterations from x = 0, `runs` times. OpenMP with one
 * parallel region per solve; each thread owns a block of rows, and the dot
 * products are summed in thread order, so for a given thread count the
 * result is the same bit for bit on any machine or kernel.
 *   cg [n [iterations [runs]]]     (default 256, 200, 10)
 * Prints "cg: run=<i> seconds=<t> relres=<|b-Ax|/|b|>" per run, then a
 * summary. Exits 1 if the runs disagree, or if the residual CG carries along
 * (r -= alpha q) strays from the true one, b - Ax: what a missing barrier or
 * a lost update between threads would do. (The 2-norm of CG's residual need
 * not fall at every step, so its size is not checked.)
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "timing.h"

#define PAD 8	/* partial sums a cache line apart */

static long n, N;
static double *x, *r, *p, *q, *part;

/* q = A v on rows [lo, hi): 4 v[i] minus the four neighbours inside the grid. */
static void matvec(double *out, const double *v, long lo, long hi)
{
	for (long i = lo; i < hi; i++) {
		long gx = i % n, gy = i / n;
		double s = 4 * v[i];

		if (gx > 0)
			s -= v[i - 1];
		if (gx < n - 1)
			s -= v[i + 1];
		if (gy > 0)
			s -= v[i - n];
		if (gy < n - 1)
			s -= v[i + n];
		out[i] = s;
	}
}

/* Every thread's partial, summed in thread order: the same in every thread. */
static double sum_parts(int threads)
{
	double s = 0;

	for (int t = 0; t < threads; t++)
		s += part[t * PAD];
	return s;
}

/*
 * Solves A x = 1 with `iterations` CG steps; returns |1 - A x| / |1| and
 * sets *carried to the recurrence's |r| / |1|.
 */
static double solve(int iterations, double *carried)
{
	double res = 0, rr_end = 0;

#pragma omp parallel
	{
		int t = omp_get_thread_num(), T = omp_get_num_threads();
		long lo = N * t / T, hi = N * (t + 1) / T;
		double rr, local;

		local = 0;
		for (long i = lo; i < hi; i++) {
			x[i] = 0;
			r[i] = 1;	/* b - A*0 */
			p[i] = 1;
			local += 1;
		}
		part[t * PAD] = local;
#pragma omp barrier
		rr = sum_parts(T);
#pragma omp barrier
		for (int it = 0; it < iterations; it++) {
			double alpha, rr_new;

			if (rr == 0)	/* solved exactly: every thread sees the same rr */
				break;
			matvec(q, p, lo, hi);
			local = 0;
			for (long i = lo; i < hi; i++)
				local += p[i] * q[i];
			part[t * PAD] = local;
#pragma omp barrier
			alpha = rr / sum_parts(T);
#pragma omp barrier
			local = 0;
			for (long i = lo; i < hi; i++) {
				x[i] += alpha * p[i];
				r[i] -= alpha * q[i];
				local += r[i] * r[i];
			}
			part[t * PAD] = local;
#pragma omp barrier
			rr_new = sum_parts(T);
			for (long i = lo; i < hi; i++)
				p[i] = r[i] + (rr_new / rr) * p[i];
			rr = rr_new;
#pragma omp barrier
		}
		/* The true residual, not the recurrence's. */
		matvec(q, x, lo, hi);
		local = 0;
		for (long i = lo; i < hi; i++)
			local += (1 - q[i]) * (1 - q[i]);
		part[t * PAD] = local;
#pragma omp barrier
#pragma omp single
		{
			res = sqrt(sum_parts(T) / N);
			rr_end = rr;
		}
	}
	*carried = sqrt(rr_end / N);
	return res;
}

int main(int argc, char **argv)
{
	int iterations, runs, bad = 0;
	double first = -1, best = 1e30, worst = 0, sum = 0;

	n = argc > 1 ? atol(argv[1]) : 256;
	iterations = argc > 2 ? atoi(argv[2]) : 200;
	runs = argc > 3 ? atoi(argv[3]) : 10;
	N = n * n;
	x = malloc(N * sizeof(double));
	r = malloc(N * sizeof(double));
	p = malloc(N * sizeof(double));
	q = malloc(N * sizeof(double));
	part = calloc((size_t)omp_get_max_threads() * PAD, sizeof(double));
	if (!x || !r || !p || !q || !part || n < 2 || iterations < 1 || runs < 1) {
		fprintf(stderr, "cg: bad arguments or out of memory\n");
		return 2;
	}
	printf("cg: threads=%d n=%ld unknowns=%ld iterations=%d runs=%d\n", omp_get_max_threads(), n, N,
	       iterations, runs);
	fflush(stdout);
	for (int k = 0; k < runs; k++) {
		double carried, t0 = now_s(), res = solve(iterations, &carried), t = now_s() - t0;

		if (first < 0)
			first = res;
		/* Relative to |b|; 1e-9 is above where rounding leaves the true residual. */
		bad += res != first || !isfinite(res) || !(fabs(res - carried) <= 1e-6 * res + 1e-9);
		if (!(fabs(res - carried) <= 1e-6 * res + 1e-9))
			printf("cg: FAIL: run %d: true residual %.17g, carried %.17g\n", k, res, carried);
		best = t < best ? t : best;
		worst = t > worst ? t : worst;
		sum += t;
		printf("cg: run=%d seconds=%.6f relres=%.17g\n", k, t, res);
		fflush(stdout);
	}
	printf("cg: best=%.6f mean=%.6f worst=%.6f relres=%.17g %s\n", best, sum / runs, worst, first,
	       bad ? "FAILED" : "ok");
	return bad != 0;
}
