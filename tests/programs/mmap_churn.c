// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory churn: one thread per CPU in the affinity mask (or the count
 * given), each mapping anonymous memory `iterations` times with sizes from
 * 4 KiB to 4 MiB, writing a word on every page, checking it, unmapping it;
 * every 8th mapping is made read-only with mprotect and read, every 16th
 * grows with mremap (its contents must move along). Prints a summary and
 * exits 1 on any wrong byte or failed call.
 *   mmap_churn [iterations [threads]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096UL
#define MAX_SHIFT 10	/* sizes 4 KiB << 0..10: 4 KiB .. 4 MiB */

struct work {
	int id, iterations;
	unsigned long maps, mprotects, mremaps, pages, errors;
	pthread_t thread;
};

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fill(struct work *w, char *p, size_t len, uint64_t tag)
{
	size_t off;

	for (off = 0; off < len; off += PAGE) {
		*(uint64_t *)(p + off) = tag ^ off;
		w->pages++;
	}
}

static void check(struct work *w, const char *p, size_t len, uint64_t tag, const char *what)
{
	size_t off;

	for (off = 0; off < len; off += PAGE)
		if (*(const uint64_t *)(p + off) != (tag ^ off)) {
			if (w->errors++ < 3)
				printf("FAIL: thread %d: %s: wrong word at offset %zu\n", w->id, what, off);
			return;
		}
}

static void *churn(void *arg)
{
	struct work *w = arg;
	uint64_t rng = 0x2545F4914F6CDD1Dull + (uint64_t)w->id * 0x9E3779B97F4A7C15ull;
	int i;

	for (i = 0; i < w->iterations; i++) {
		size_t len = PAGE << (next(&rng) % (MAX_SHIFT + 1));
		uint64_t tag = next(&rng);
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			if (w->errors++ < 3)
				printf("FAIL: thread %d: mmap %zu bytes failed\n", w->id, len);
			continue;
		}
		w->maps++;
		if (*(volatile uint64_t *)(p + len - PAGE) != 0 && w->errors++ < 3)
			printf("FAIL: thread %d: fresh anonymous memory is not zero\n", w->id);
		fill(w, p, len, tag);
		check(w, p, len, tag, "after writing");

		if (i % 8 == 7) {
			if (mprotect(p, len, PROT_READ)) {
				w->errors++;
			} else {
				w->mprotects++;
				check(w, p, len, tag, "read-only");
				if (mprotect(p, len, PROT_READ | PROT_WRITE))
					w->errors++;
			}
		}
		if (i % 16 == 15) {
			char *q = mremap(p, len, 2 * len, MREMAP_MAYMOVE);

			if (q == MAP_FAILED) {
				w->errors++;
			} else {
				w->mremaps++;
				p = q;
				check(w, p, len, tag, "after mremap");
				fill(w, p + len, len, tag ^ 1);
				check(w, p + len, len, tag ^ 1, "grown part");
				len *= 2;
			}
		}
		if (munmap(p, len))
			w->errors++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct work *w;
	cpu_set_t set;
	int iterations = argc > 1 ? atoi(argv[1]) : 1000, threads, i;
	unsigned long maps = 0, mprotects = 0, mremaps = 0, pages = 0, errors = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	threads = argc > 2 ? atoi(argv[2]) : CPU_COUNT(&set);
	if (iterations < 1 || threads < 1 || threads > 256)
		return 2;
	printf("mmap_churn: threads=%d iterations=%d\n", threads, iterations);
	fflush(stdout);
	w = calloc(threads, sizeof(*w));
	for (i = 0; i < threads; i++) {
		w[i].id = i;
		w[i].iterations = iterations;
		if (pthread_create(&w[i].thread, NULL, churn, &w[i])) {
			printf("FAIL: pthread_create\n");
			return 1;
		}
	}
	for (i = 0; i < threads; i++) {
		pthread_join(w[i].thread, NULL);
		maps += w[i].maps;
		mprotects += w[i].mprotects;
		mremaps += w[i].mremaps;
		pages += w[i].pages;
		errors += w[i].errors;
	}
	printf("maps=%lu expected=%lu\n", maps, (unsigned long)threads * iterations);
	printf("mprotects=%lu expected=%lu\n", mprotects, (unsigned long)threads * (iterations / 8));
	printf("mremaps=%lu expected=%lu\n", mremaps, (unsigned long)threads * (iterations / 16));
	printf("pages_touched=%lu errors=%lu\n", pages, errors);
	errors += maps != (unsigned long)threads * iterations;
	errors += mprotects != (unsigned long)threads * (iterations / 8);
	errors += mremaps != (unsigned long)threads * (iterations / 16);
	printf("mmap_churn: %s\n", errors ? "FAILED" : "ok");
	return errors ? 1 : 0;
}
