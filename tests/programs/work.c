// SPDX-License-Identifier: GPL-2.0-only
/*
 * A CPU-bound program with a result that can be checked: `work NAME N`
 * runs N rounds of a xorshift generator seeded from NAME and prints
 * "work NAME: <final value>", the same on Linux and in an enclave. With
 * "forever" as N it prints "work NAME: running" and spins until killed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t seed(const char *name)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ULL;
	return h | 1;
}

static uint64_t rounds(uint64_t x, uint64_t n)
{
	while (n--) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

int main(int argc, char **argv)
{
	volatile uint64_t sink;

	if (argc != 3) {
		fprintf(stderr, "usage: work NAME ROUNDS|forever\n");
		return 2;
	}
	if (!strcmp(argv[2], "forever")) {
		printf("work %s: running\n", argv[1]);
		fflush(stdout);
		for (sink = seed(argv[1]);; sink = rounds(sink, 1000))
			;
	}
	printf("work %s: %016llx\n", argv[1],
	       (unsigned long long)rounds(seed(argv[1]), strtoull(argv[2], NULL, 10)));
	return 0;
}
