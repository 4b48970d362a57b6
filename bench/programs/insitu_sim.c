// SPDX-License-Identifier: GPL-2.0-only
/*
 * The simulation of the in-situ workflow: a 2-D Jacobi stencil (5 points,
 * n x n doubles, fixed hot edge) that publishes its grid every `every`
 * steps, and times each step.
 *   insitu_sim alone  N STEPS EVERY
 *   insitu_sim xemem  N STEPS EVERY NAME   the grids live in an XEMEM
 *       segment NAME: publishing names the grid the step just wrote and
 *       signals the analytics' doorbell segment (only if the analytics took
 *       the last snapshot, so the simulation never waits; nothing is copied)
 *   insitu_sim pipe   N STEPS EVERY        the grid written to stdout
 * Prints (to stderr for pipe) one line: insitu_sim: mode=... mean_ns=...
 * best_ns=... worst_ns=... published=... skipped=... checksum=...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xpmem.h>
#include "insitu.h"

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void step(const double *in, double *out, long n)
{
	for (long i = 1; i < n - 1; i++)
		for (long j = 1; j < n - 1; j++)
			out[i * n + j] = 0.25 * (in[(i - 1) * n + j] + in[(i + 1) * n + j] +
						 in[i * n + j - 1] + in[i * n + j + 1]);
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t w = write(fd, p, len);

		if (w <= 0) {
			perror("insitu_sim: write");
			exit(1);
		}
		p += w;
		len -= (size_t)w;
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long n, steps, every;
	double *grid[3], sum = 0;
	int cur = 0, snap = -1;		/* the input grid; the one being analysed */
	struct insitu_header *h = NULL;
	xpmem_segid_t seg = -1;
	long long mean = 0, best = -1, worst = 0, t0, dt;
	long published = 0, skipped = 0;
	size_t bytes;

	if (argc < 5 || (strcmp(mode, "alone") && strcmp(mode, "pipe") &&
			 (strcmp(mode, "xemem") || argc < 6))) {
		fprintf(stderr, "usage: insitu_sim alone|pipe|xemem N STEPS EVERY [NAME]\n");
		return 2;
	}
	n = atol(argv[2]);
	steps = atol(argv[3]);
	every = atol(argv[4]);
	bytes = (size_t)n * n * sizeof(double);
	size_t stride = (bytes + 4095) & ~(size_t)4095, len = INSITU_HEADER_BYTES + 3 * stride;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return 1;
	for (int g = 0; g < 3; g++) {
		grid[g] = (double *)(m + INSITU_HEADER_BYTES + g * stride);
		for (long j = 0; j < n; j++)
			grid[g][j] = 100.0;	/* the hot edge */
	}
	if (!strcmp(mode, "xemem")) {
		h = (struct insitu_header *)m;
		h->n = n;
		seg = xemem_make(m, len, XPMEM_PERMIT_MODE, (void *)0600, argv[5]);
		if (seg < 0) {
			perror("insitu_sim: xemem_make");
			return 1;
		}
	}
	for (long s = 1; s <= steps; s++) {
		int out = 0;

		t0 = now_ns();
		if (h && snap >= 0 && h->taken == h->published)
			snap = -1;	/* the analytics is done with it */
		while (out == cur || out == snap)
			out++;
		step(grid[cur], grid[out], n);
		cur = out;
		if (s % every == 0) {
			if (h && snap < 0) {
				snap = cur;
				h->snapshot = cur;
				h->published++;
				if (h->doorbell > 0)
					xemem_signal(h->doorbell);
				published++;
			} else if (h) {
				skipped++;
			} else if (!strcmp(mode, "pipe")) {
				write_all(1, grid[cur], bytes);
				published++;
			}
		}
		dt = now_ns() - t0;
		mean += dt;
		best = best < 0 || dt < best ? dt : best;
		worst = dt > worst ? dt : worst;
	}
	for (long i = 0; i < n * n; i++)
		sum += grid[cur][i];
	if (h) {
		h->finished = 1;
		if (h->doorbell > 0)
			xemem_signal(h->doorbell);
		/* Removing revokes the analytics' attachment: wait until it is done (a minute at most). */
		for (int i = 0; i < 60000 && !h->gone; i++)
			usleep(1000);
		xpmem_remove(seg);
	}
	fprintf(strcmp(mode, "pipe") ? stdout : stderr,
		"insitu_sim: mode=%s n=%ld steps=%ld mean_ns=%lld best_ns=%lld worst_ns=%lld "
		"published=%ld skipped=%ld checksum=%.6e\n",
		mode, n, steps, mean / steps, best, worst, published, skipped, sum);
	return 0;
}
