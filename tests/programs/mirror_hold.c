// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program whose mirror (its memory mapped in `atoll run`) holds pages
 * while the enclave's memory changes around it (tests/test_resize.py).
 * A round fills the first half of a mapping with a pattern, writes it to
 * DIR/<role>.data and reads that back into the second half: `atoll run`'s
 * worker reads and writes both halves through the mirror.
 *   mirror_hold keep MIB DIR   a round, says DIR/keep.ready, waits for
 *       SIGHUP without a delegated call, then a round with a new pattern in
 *       the same memory, says DIR/keep.done and waits for DIR/keep.end:
 *       "mirror_hold: keep ok".
 *   mirror_hold drop DIR   takes what memory it will keep (its stack, its
 *       heap, and 2 MiB near DROP_AT, so that the page tables there exist),
 *       says DIR/drop.started and waits for DIR/drop.go, which holds a size
 *       in MiB: a block is added meanwhile, and the LWK gives the lowest
 *       memory first. Then a round in that many MiB of 2 MiB pages at
 *       DROP_AT (no new page table: unmapping frees every frame of it), says
 *       DIR/drop.ready, unmaps it (the mirror keeps its stale mappings until
 *       it is zapped), waits for SIGHUP without a delegated call, then a
 *       round in 16 MiB of new memory: "mirror_hold: drop ok".
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define DROP_AT 0x200000000000UL	/* 32 TiB: 1 GiB-aligned, nothing else there */
#define ANCHOR_AT (DROP_AT + (512UL << 20))	/* in the same 1 GiB: its page tables */

static volatile sig_atomic_t hup;

static void on_hup(int sig)
{
	hup = 1;
}

/* One round in [p, p + len): 1 if the bytes read back are the ones written. */
static int round_trip(const char *dir, const char *role, unsigned char *p, size_t len,
		      unsigned int seed)
{
	size_t half = len / 2, done = 0, i;
	char path[512];
	ssize_t n;
	int fd;

	for (i = 0; i < half; i++)
		p[i] = (unsigned char)(i * 13 + (i >> 12) + seed);
	memset(p + half, 0, half);
	snprintf(path, sizeof(path), "%s/%s.data", dir, role);
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (fd < 0)
		return 0;
	while (done < half) {
		n = write(fd, p + done, half - done);
		if (n <= 0)
			return 0;
		done += n;
	}
	for (done = 0; done < half; done += n) {
		n = pread(fd, p + half + done, half - done, done);
		if (n <= 0)
			return 0;
	}
	close(fd);
	return !memcmp(p, p + half, half);
}

static unsigned char *map(void *at, size_t len)
{
	unsigned char *p = mmap(at, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);

	if (p == MAP_FAILED) {
		perror("mirror_hold: mmap");
		exit(1);
	}
	return p;
}

static void say(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	close(open(path, O_CREAT | O_WRONLY, 0644));
}

/* Waits for DIR/name to exist; its first line as a number. */
static size_t wait_for(const char *dir, const char *name)
{
	char path[512], line[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (!(f = fopen(path, "r")))
		usleep(20000);
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return strtoul(line, NULL, 0);
}

int main(int argc, char **argv)
{
	int keep = argc == 4 && !strcmp(argv[1], "keep");
	const char *dir = argv[argc - 1], *role = argv[1];
	struct sigaction sa = { .sa_handler = on_hup };
	sigset_t hup_only, old;
	unsigned char *p;
	size_t len;

	if (!keep && (argc != 3 || strcmp(argv[1], "drop"))) {
		fprintf(stderr, "usage: mirror_hold keep MIB DIR | mirror_hold drop DIR\n");
		return 2;
	}
	sigemptyset(&hup_only);
	sigaddset(&hup_only, SIGHUP);
	sigprocmask(SIG_BLOCK, &hup_only, &old);
	sigaction(SIGHUP, &sa, NULL);
	alarm(600);	/* a test that never sends SIGHUP fails, it does not hang */

	if (keep) {
		len = strtoul(argv[2], NULL, 0) << 20;
		p = map(NULL, len);
	} else {
		volatile char deep[256 << 10];

		memset((char *)deep, 1, sizeof(deep));	/* the stack round_trip needs */
		map((void *)ANCHOR_AT, 2 << 20)[0] = 1;
		say(dir, "drop.started");
		len = wait_for(dir, "drop.go") << 20;
		p = map((void *)DROP_AT, len);
	}
	if (!len || !round_trip(dir, role, p, len, 1)) {
		printf("mirror_hold: %s round 1 wrong\n", role);
		return 1;
	}
	say(dir, keep ? "keep.ready" : "drop.ready");
	if (!keep)
		munmap(p, len);
	/* Local calls only from here until SIGHUP: no delegated call zaps the mirror. */
	while (!hup)
		sigsuspend(&old);
	if (!keep) {
		len = 16 << 20;
		p = map(NULL, len);
	}
	if (!round_trip(dir, role, p, len, 2)) {
		printf("mirror_hold: %s round 2 wrong\n", role);
		return 1;
	}
	if (keep) {
		say(dir, "keep.done");
		wait_for(dir, "keep.end");
	}
	printf("mirror_hold: %s ok\n", role);
	return 0;
}
