// SPDX-License-Identifier: GPL-2.0-only
/*
 * An MPI job's usual traffic, with results that do not depend on timing
 * or placement, printed by rank 0: hello from every rank (gathered), a
 * token passed ten times around a ring, an allreduce of arrays, and a 1-D
 * Jacobi relaxation with halo exchange (MPI_Sendrecv) and a global residual.
 * With "die", rank 1 kills itself (SIGKILL) in the middle of the job.
 * Built against Debian's Open MPI and MPICH (scripts/build-programs.sh).
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define CELLS 1000		/* per rank */
#define STEPS 200

static void hello(int rank, int size)
{
	char line[64], *all = NULL;
	char buf[64 * 64];

	snprintf(line, sizeof(line), "hello from rank %d of %d", rank, size);
	if (rank == 0)
		all = buf;
	MPI_Gather(line, sizeof(line), MPI_CHAR, all, sizeof(line), MPI_CHAR, 0, MPI_COMM_WORLD);
	for (int r = 0; rank == 0 && r < size && r < 64; r++)
		printf("%s\n", all + r * 64);
}

static void ring(int rank, int size)
{
	long token = 0;

	for (int lap = 0; lap < 10; lap++) {
		if (rank == 0) {
			MPI_Send(&token, 1, MPI_LONG, 1 % size, 0, MPI_COMM_WORLD);
			MPI_Recv(&token, 1, MPI_LONG, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(&token, 1, MPI_LONG, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			token += rank;
			MPI_Send(&token, 1, MPI_LONG, (rank + 1) % size, 0, MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		printf("ring: token %ld after 10 laps\n", token);
}

static void allreduce(int rank)
{
	static double mine[4096], sum[4096];
	double check = 0;

	for (int i = 0; i < 4096; i++)
		mine[i] = (rank + 1) * (i % 17);
	MPI_Allreduce(mine, sum, 4096, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int i = 0; i < 4096; i++)
		check += sum[i];
	if (rank == 0)
		printf("allreduce: checksum %.1f\n", check);
}

static void halo(int rank, int size)
{
	static double u[CELLS + 2], next[CELLS + 2];
	int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
	int right = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
	double local = 0, residual = 0;

	for (int i = 1; i <= CELLS; i++)
		u[i] = (double)((rank * CELLS + i) % 100);
	for (int step = 0; step < STEPS; step++) {
		MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, left, 1, &u[CELLS + 1], 1, MPI_DOUBLE, right, 1,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		MPI_Sendrecv(&u[CELLS], 1, MPI_DOUBLE, right, 2, &u[0], 1, MPI_DOUBLE, left, 2,
			     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		if (left == MPI_PROC_NULL)
			u[0] = u[1];
		if (right == MPI_PROC_NULL)
			u[CELLS + 1] = u[CELLS];
		for (int i = 1; i <= CELLS; i++)
			next[i] = (u[i - 1] + u[i] + u[i + 1]) / 3;
		memcpy(&u[1], &next[1], CELLS * sizeof(double));
	}
	for (int i = 1; i <= CELLS; i++)
		local += u[i] * u[i];
	MPI_Reduce(&local, &residual, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("halo: sum of squares %.6e after %d steps\n", residual, STEPS);
}

int main(int argc, char **argv)
{
	int rank, size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	hello(rank, size);
	if (argc > 1 && strcmp(argv[1], "die") == 0) {
		for (int i = 0; i < 1000; i++) {
			MPI_Barrier(MPI_COMM_WORLD);
			if (rank == 1 && i == 5)
				raise(SIGKILL);
		}
	}
	ring(rank, size);
	allreduce(rank);
	halo(rank, size);
	MPI_Finalize();
	return 0;
}
