// SPDX-License-Identifier: GPL-2.0-only
/*
 * The analytics of the in-situ workflow: for each snapshot of the
 * simulation's grid, a 64-bin histogram and the sum, minimum and maximum.
 *   insitu_analytics xemem NAME [print]   attaches NAME, names a doorbell
 *       segment of its own in NAME's header, waits for the simulation's
 *       signals on it, reads each snapshot in place (the grid the header
 *       names) and marks it taken; with "print", one line per snapshot:
 *       "snapshot K: sum=S hist=h0,h1,...,h15" (16 bins over 0..100)
 *   insitu_analytics pipe N       reads n * n doubles per snapshot from stdin
 * Prints: insitu_analytics: mode=... snapshots=... last_sum=...
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xpmem.h>
#include "insitu.h"

static double analyse(const double *g, long cells, long *hist)
{
	double sum = 0, lo = g[0], hi = g[0];

	for (long i = 0; i < cells; i++) {
		sum += g[i];
		lo = g[i] < lo ? g[i] : lo;
		hi = g[i] > hi ? g[i] : hi;
	}
	memset(hist, 0, 64 * sizeof(*hist));
	for (long i = 0; i < cells && hi > lo; i++)
		hist[(int)((g[i] - lo) / (hi - lo) * 63.999)]++;
	return sum;
}

static int from_pipe(long n)
{
	size_t bytes = (size_t)n * n * sizeof(double);
	double *g = malloc(bytes), sum = 0;
	long hist[64], snapshots = 0;

	for (;;) {
		size_t got = 0;

		while (got < bytes) {
			ssize_t r = read(0, (char *)g + got, bytes - got);

			if (r <= 0)
				goto out;
			got += (size_t)r;
		}
		sum = analyse(g, n * n, hist);
		snapshots++;
	}
out:
	printf("insitu_analytics: mode=pipe snapshots=%ld last_sum=%.6e\n", snapshots, sum);
	return 0;
}

/* The snapshot's temperatures in 16 bins over 0..100, for people (make demo). */
static void print_snapshot(long k, const double *g, long cells, double sum)
{
	long bins[16] = { 0 };

	for (long i = 0; i < cells; i++) {
		int b = (int)(g[i] / 100.0 * 16);

		bins[b < 0 ? 0 : b > 15 ? 15 : b]++;
	}
	printf("snapshot %ld: sum=%.1f hist=", k, sum);
	for (int b = 0; b < 16; b++)
		printf("%ld%s", bins[b], b < 15 ? "," : "\n");
}

static int from_segment(const char *name, int print)
{
	xpmem_segid_t seg = -1, door;
	xpmem_apid_t apid;
	void *bell = aligned_alloc(4096, 4096);
	struct insitu_header *h;
	long hist[64], snapshots = 0;
	double sum = 0;
	size_t len, stride;

	for (int i = 0; i < 30000 && seg < 0; i++) {
		seg = xemem_lookup_segid(name);
		if (seg < 0)
			usleep(1000);
	}
	apid = xpmem_get(seg, XPMEM_RDWR, XPMEM_PERMIT_MODE, NULL);
	h = xpmem_attach((struct xpmem_addr){ apid, 0 }, 4096, NULL);
	if (seg < 0 || apid < 0 || h == (void *)-1) {
		perror("insitu_analytics: attach");
		return 1;
	}
	stride = (h->n * h->n * sizeof(double) + 4095) & ~(size_t)4095;
	len = INSITU_HEADER_BYTES + 3 * stride;
	xpmem_detach(h);
	h = xpmem_attach((struct xpmem_addr){ apid, 0 }, len, NULL);
	door = bell ? xemem_make(bell, 4096, XPMEM_PERMIT_MODE, (void *)0600, NULL) : -1;
	if (h == (void *)-1 || door < 0) {
		perror("insitu_analytics: attach or doorbell");
		return 1;
	}
	h->doorbell = door;
	while (!h->finished || h->taken != h->published) {
		if (h->taken == h->published) {
			/*
			 * A signal may have come before the doorbell: look again
			 * every 100 ms. After each wake, stop if the simulation's
			 * segment went (its mapping is revoked: no more touching it).
			 */
			int err = xemem_wait(door, 100) ? errno : 0;

			if ((err && err != ETIMEDOUT) || xemem_lookup_segid(name) != seg) {
				printf("insitu_analytics: the segment went away (%s)\n",
				       strerror(err ? err : ENOENT));
				return 1;
			}
			continue;
		}
		const double *g = (const double *)((char *)h + INSITU_HEADER_BYTES +
						   h->snapshot * stride);

		sum = analyse(g, (long)(h->n * h->n), hist);
		if (print)
			print_snapshot(snapshots, g, (long)(h->n * h->n), sum);
		snapshots++;
		h->taken++;
	}
	h->gone = 1;	/* the last touch: the simulation may remove the segment now */
	printf("insitu_analytics: mode=xemem snapshots=%ld last_sum=%.6e\n", snapshots, sum);
	xpmem_detach(h);
	xpmem_release(apid);
	xpmem_remove(door);
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "xemem"))
		return from_segment(argv[2], argc == 4 && !strcmp(argv[3], "print"));
	if (argc == 3 && !strcmp(argv[1], "pipe"))
		return from_pipe(atol(argv[2]));
	fprintf(stderr, "usage: insitu_analytics xemem NAME [print] | pipe N\n");
	return 2;
}
