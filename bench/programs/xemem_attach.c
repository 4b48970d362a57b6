// SPDX-License-Identifier: GPL-2.0-only
/*
 * Attaching a segment against copying it.
 *   xemem_attach make SIZE NAME DIR   makes NAME (SIZE bytes, written), says
 *       DIR/NAME.ready, waits for DIR/NAME.done
 *   xemem_attach time SIZE NAME DIR   times xpmem_get + xpmem_attach of NAME,
 *       then a first read of every page through it, then a memcpy of all
 *       SIZE bytes from it into memory of its own (already touched)
 * Prints: xemem_attach: bytes=... attach_ns=... touch_ns=... copy_ns=...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <xpmem.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void flag(const char *dir, const char *name, const char *what, int create)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s.%s", dir, name, what);
	if (create) {
		close(open(p, O_CREAT | O_WRONLY, 0644));
		return;
	}
	while (access(p, F_OK))
		usleep(10000);
}

static char *memory(size_t size)
{
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("xemem_attach: mmap");
		exit(1);
	}
	/* As an HPC code's large arrays are: 2 MiB pages where Linux has them. */
	madvise(p, size, MADV_HUGEPAGE);
	memset(p, 1, size);
	return p;
}

int main(int argc, char **argv)
{
	size_t size;
	xpmem_segid_t seg;
	xpmem_apid_t apid;
	long long t0, attach, touch, copy;
	volatile char *p;
	char *mine;
	long sum = 0;

	if (argc != 5) {
		fprintf(stderr, "usage: xemem_attach make|time SIZE NAME DIR\n");
		return 2;
	}
	size = strtoul(argv[2], NULL, 0);
	if (!strcmp(argv[1], "make")) {
		mine = memory(size);
		if (xemem_make(mine, size, XPMEM_PERMIT_MODE, (void *)0600, argv[3]) < 0) {
			perror("xemem_attach: make");
			return 1;
		}
		flag(argv[4], argv[3], "ready", 1);
		flag(argv[4], argv[3], "done", 0);
		return 0;
	}
	flag(argv[4], argv[3], "ready", 0);
	mine = memory(size);
	seg = xemem_lookup_segid(argv[3]);
	t0 = now_ns();
	apid = xpmem_get(seg, XPMEM_RDONLY, XPMEM_PERMIT_MODE, NULL);
	p = xpmem_attach((struct xpmem_addr){ apid, 0 }, size, NULL);
	attach = now_ns() - t0;
	if (seg < 0 || apid < 0 || p == (void *)-1) {
		perror("xemem_attach: attach");
		return 1;
	}
	t0 = now_ns();
	for (size_t i = 0; i < size; i += 4096)
		sum += p[i];
	touch = now_ns() - t0;
	t0 = now_ns();
	memcpy(mine, (const char *)p, size);
	copy = now_ns() - t0;
	xpmem_detach((void *)p);
	xpmem_release(apid);
	flag(argv[4], argv[3], "done", 1);
	printf("xemem_attach: bytes=%zu attach_ns=%lld touch_ns=%lld copy_ns=%lld check=%ld\n", size,
	       attach, touch, copy, sum + mine[size - 1]);
	return 0;
}
