// SPDX-License-Identifier: GPL-2.0-only
/*
 * MPI ping-pong between ranks 0 and 1: for each message size from 8 B to
 * 4 MiB, the median round trip of REPS (after a warm-up), as
 * one-way latency and bandwidth. Prints, from rank 0:
 *   mpi_pingpong: bytes=N half_rtt_ns=T mb_per_s=B
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define REPS 31

static const long SIZES[] = { 8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20 };

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int rank;
	char *buf = malloc(4 << 20);
	double t[REPS];

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (unsigned int s = 0; s < sizeof(SIZES) / sizeof(SIZES[0]); s++) {
		long bytes = SIZES[s];
		int inner = bytes <= 4096 ? 100 : bytes <= (64 << 10) ? 20 : 4;

		for (int rep = -3; rep < REPS; rep++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double start = MPI_Wtime();

			for (int i = 0; i < inner; i++) {
				if (rank == 0) {
					MPI_Send(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD);
					MPI_Recv(buf, bytes, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				} else if (rank == 1) {
					MPI_Recv(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
					MPI_Send(buf, bytes, MPI_CHAR, 0, 0, MPI_COMM_WORLD);
				}
			}
			if (rep >= 0)
				t[rep] = (MPI_Wtime() - start) / inner;
		}
		qsort(t, REPS, sizeof(t[0]), by_value);
		if (rank == 0)
			printf("mpi_pingpong: bytes=%ld half_rtt_ns=%.0f mb_per_s=%.1f\n", bytes,
			       t[REPS / 2] / 2 * 1e9, bytes / (t[REPS / 2] / 2) / 1e6);
	}
	MPI_Finalize();
	return 0;
}
