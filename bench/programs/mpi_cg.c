// SPDX-License-Identifier: GPL-2.0-only
/*
 * An allreduce-heavy loop: conjugate gradient on a 1-D Laplacian split
 * over the ranks (halo exchange for the matrix-vector product, two
 * MPI_Allreduce per iteration for the dot products). Each of RUNS solves
 * is timed; rank 0 prints
 *   mpi_cg: run=R seconds=S iterations=I residual=X
 * usage: mpi_cg [CELLS_PER_RANK] [ITERATIONS] [RUNS]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n, rank, size;

/* y = A x for the 1-D Laplacian (2 on the diagonal, -1 beside it). */
static void apply(double *x, double *y)
{
	int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
	int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;

	x[0] = x[n + 1] = 0;
	MPI_Sendrecv(&x[1], 1, MPI_DOUBLE, left, 0, &x[n + 1], 1, MPI_DOUBLE, right, 0,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	MPI_Sendrecv(&x[n], 1, MPI_DOUBLE, right, 1, &x[0], 1, MPI_DOUBLE, left, 1,
		     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	for (int i = 1; i <= n; i++)
		y[i] = 2 * x[i] - x[i - 1] - x[i + 1];
}

static double dot(const double *a, const double *b)
{
	double local = 0, all;

	for (int i = 1; i <= n; i++)
		local += a[i] * b[i];
	MPI_Allreduce(&local, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return all;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	n = argc > 1 ? atoi(argv[1]) : 20000;
	int iterations = argc > 2 ? atoi(argv[2]) : 500;
	int runs = argc > 3 ? atoi(argv[3]) : 10;
	double *x = calloc(n + 2, sizeof(double)), *r = calloc(n + 2, sizeof(double));
	double *p = calloc(n + 2, sizeof(double)), *q = calloc(n + 2, sizeof(double));

	for (int run = 0; run < runs; run++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double start = MPI_Wtime();

		memset(x, 0, (n + 2) * sizeof(double));
		for (int i = 1; i <= n; i++)
			r[i] = p[i] = 1.0;
		double rr = dot(r, r);

		for (int it = 0; it < iterations; it++) {
			apply(p, q);
			double alpha = rr / dot(p, q);

			for (int i = 1; i <= n; i++) {
				x[i] += alpha * p[i];
				r[i] -= alpha * q[i];
			}
			double next = dot(r, r);

			for (int i = 1; i <= n; i++)
				p[i] = r[i] + next / rr * p[i];
			rr = next;
		}
		double seconds = MPI_Wtime() - start;

		if (rank == 0)
			printf("mpi_cg: run=%d seconds=%.6f iterations=%d residual=%.6e\n", run, seconds,
			       iterations, sqrt(rr));
	}
	MPI_Finalize();
	return 0;
}
