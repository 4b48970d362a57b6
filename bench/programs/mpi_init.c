// SPDX-License-Identifier: GPL-2.0-only
/* The smallest MPI job, for start-up time: MPI_Init, a barrier, Finalize. */
#include <mpi.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
