// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU share: counts rounds of fixed work for `seconds` of wall time and
 * prints the rate (rounds per second). Two copies sharing one core should
 * each get about half of what one alone gets.
 *   spin_rate [seconds]   (default 3)
 */
#include <stdio.h>
#include <stdlib.h>

#include "timing.h"

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 3, t0 = now_s(), end = t0 + seconds;
	volatile unsigned long x = 1;
	unsigned long rounds = 0;
	int i;

	while (now_s() < end) {
		for (i = 0; i < 10000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		rounds++;
	}
	printf("spin_rate: rounds_per_s=%.1f\n", rounds / (now_s() - t0));
	return 0;
}
