// SPDX-License-Identifier: GPL-2.0-only
/*
 * OS noise on a Linux CPU, selfish-detour style: the Linux twin of the LWK's
 * `noise=` command (kernel/src/bench/noise.rs), same output format.
 *   selfish <cpu> <seconds> [threshold_ns]
 * Built static so it runs in the test VM's busybox initramfs.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

#define MAX_LISTED 4000

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* TSC cycles per nanosecond, against the monotonic clock over 200 ms. */
static double tsc_per_ns(void)
{
	uint64_t t0 = now_ns(), c0 = __rdtsc(), t1;

	do
		t1 = now_ns();
	while (t1 - t0 < 200000000ull);
	return (double)(__rdtsc() - c0) / (double)(t1 - t0);
}

int main(int argc, char **argv)
{
	static uint64_t at[MAX_LISTED], len[MAX_LISTED];
	uint64_t count = 0, total = 0, max = 0, loops = 0, start, end, last, threshold;
	double per_ns;
	cpu_set_t set;
	int cpu, i;

	if (argc < 3) {
		fprintf(stderr, "usage: selfish <cpu> <seconds> [threshold_ns]\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("selfish: sched_setaffinity");
		return 1;
	}
	per_ns = tsc_per_ns();
	threshold = (uint64_t)((argc > 3 ? atof(argv[3]) : 2000.0) * per_ns);
	start = __rdtsc();
	end = start + (uint64_t)(atof(argv[2]) * 1e9 * per_ns);
	for (last = start; last < end; loops++) {
		uint64_t t = __rdtsc(), gap = t - last;

		if (gap > threshold) {
			if (count < MAX_LISTED) {
				at[count] = last - start;
				len[count] = gap;
			}
			count++;
			total += gap;
			if (gap > max)
				max = gap;
		}
		last = t;
	}
	printf("noise: os=linux cpu=%d duration_ns=%.0f threshold_ns=%.0f loops=%llu detours=%llu total_ns=%.0f max_ns=%.0f\n",
	       cpu, (last - start) / per_ns, threshold / per_ns, (unsigned long long)loops,
	       (unsigned long long)count, total / per_ns, max / per_ns);
	for (i = 0; i < (int)count && i < MAX_LISTED; i++)
		printf("detour %.0f %.0f\n", at[i] / per_ns, len[i] / per_ns);
	printf("noise: end\n");
	return 0;
}
