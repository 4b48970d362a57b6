// SPDX-License-Identifier: GPL-2.0-only
/*
 * Delegated file I/O an enclave program hands to Linux: 1-byte pwrite()s
 * to a file and 4 KiB pread()s from a file in Linux's page cache (written
 * and read once before the clock starts), `calls` of each, `reps` times.
 *   file_rw DIR [calls [reps]]     (default 5000 calls, 3 reps)
 * Prints "file_rw: rep=R pwrite_ns=N pread_ns=N" per rep, then the medians
 * and a count of calls that returned the wrong size or the wrong bytes.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "timing.h"

#define FILE_SIZE (1 << 20)
#define BLOCK 4096

static char block[BLOCK];

static double per_call(double t0, long calls)
{
	return (now_ns() - t0) / calls;
}

int main(int argc, char **argv)
{
	long calls = argc > 2 ? atol(argv[2]) : 5000, i, bad = 0;
	int reps = argc > 3 ? atoi(argv[3]) : 3, r, fd;
	double w[100], rd[100];
	char path[4096];

	if (argc < 2 || calls < 1 || reps < 1 || reps > 100)
		return 2;
	snprintf(path, sizeof(path), "%s/file_rw.%d", argv[1], getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	unlink(path);
	for (i = 0; i < BLOCK; i++)
		block[i] = (char)(i * 7 + 1);
	/* The file in the page cache, every block's bytes known. */
	for (i = 0; i < FILE_SIZE / BLOCK; i++)
		bad += pwrite(fd, block, BLOCK, i * BLOCK) != BLOCK;
	for (i = 0; i < FILE_SIZE / BLOCK; i++)
		bad += pread(fd, block, BLOCK, i * BLOCK) != BLOCK;
	for (r = 0; r < reps; r++) {
		double t0 = now_ns();

		/* One byte into the middle of each block, the byte it already holds. */
		for (i = 0; i < calls; i++)
			bad += pwrite(fd, &block[100], 1, (i % (FILE_SIZE / BLOCK)) * BLOCK + 100) != 1;
		w[r] = per_call(t0, calls);
		t0 = now_ns();
		for (i = 0; i < calls; i++) {
			char buf[BLOCK];

			bad += pread(fd, buf, BLOCK, (i % (FILE_SIZE / BLOCK)) * BLOCK) != BLOCK ||
			       memcmp(buf, block, BLOCK) != 0;
		}
		rd[r] = per_call(t0, calls);
		printf("file_rw: rep=%d calls=%ld pwrite_ns=%.1f pread_ns=%.1f\n", r, calls, w[r], rd[r]);
		fflush(stdout);
	}
	sort_times(w, reps);
	sort_times(rd, reps);
	printf("file_rw: pwrite_median_ns=%.1f pread_median_ns=%.1f wrong=%ld\n", w[reps / 2],
	       rd[reps / 2], bad);
	close(fd);
	return bad != 0;
}
