// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's copy alone under MPI's single-copy path: process_vm_readv
 * of 256 KiB .. 4 MiB from a forked child's memory, best of 9, in TSC
 * cycles (the same clock on Linux and in an enclave). Separates the copy
 * from the MPI library around it (bench/mpi_bench.py). Prints:
 *   cma_copy: bytes=N cycles=C
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#define MAX (4 << 20)
#define REPS 9

int main(void)
{
	char *src = malloc(MAX), *dst = malloc(MAX);
	pid_t child;

	if (!src || !dst)
		return 1;
	memset(src, 1, MAX);
	memset(dst, 2, MAX);
	child = fork();
	if (child == 0) {
		pause();	/* its memory is read until the parent kills it */
		_exit(0);
	}
	for (long n = 256 << 10; n <= MAX; n *= 2) {
		unsigned long long best = ~0ULL;

		for (int r = 0; r < REPS; r++) {
			struct iovec to = { dst, n }, from = { src, n };
			unsigned long long t0 = __rdtsc();
			ssize_t got = process_vm_readv(child, &to, 1, &from, 1, 0);
			unsigned long long t1 = __rdtsc();

			if (got != n) {
				perror("cma_copy: process_vm_readv");
				kill(child, SIGKILL);
				return 1;
			}
			if (t1 - t0 < best)
				best = t1 - t0;
		}
		printf("cma_copy: bytes=%ld cycles=%llu\n", n, best);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}
