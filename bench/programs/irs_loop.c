// SPDX-License-Identifier: GPL-2.0-only
/*
 * The IRS benchmark's job (issue 15): two threads each compute `units`
 * fixed work quanta (a dependent integer chain), unpinned, as a
 * bulk-synchronous code's ranks would. Writes <dir>/started when both have
 * begun, so the driver can take a CPU away mid-run. The main thread
 * samples the work done every 20 ms (CLOCK_REALTIME, which Linux shares,
 * so the driver can place its own events on the same time line). Prints:
 *   irs: units=... start_real_ns=... elapsed_ns=... thread0_ns=... thread1_ns=...
 *   irs_progress: <ns since start>,<units done> ...
 * Usage: irs_loop <units per thread> <dir>
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "timing.h"

#define QUANTUM 200000	/* iterations per unit: about 1 ms on this machine's vCPUs */
#define MAX_SAMPLES 20000

static long units;
static long done;	/* units finished, both threads */
static int begun;
static double start, ended[2];
static volatile uint64_t sink[2];

static double real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	uint64_t x = id + 1;

	__atomic_add_fetch(&begun, 1, __ATOMIC_SEQ_CST);
	for (long u = 0; u < units; u++) {
		for (int i = 0; i < QUANTUM; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		__atomic_add_fetch(&done, 1, __ATOMIC_RELAXED);
	}
	sink[id] = x;
	ended[id] = now_ns();
	return NULL;
}

int main(int argc, char **argv)
{
	static double at[MAX_SAMPLES];
	static long work[MAX_SAMPLES];
	struct timespec tick = { 0, 20000000 };
	double start_real;
	pthread_t t[2];
	char path[256];
	int n = 0;
	FILE *f;

	if (argc != 3)
		return 2;
	units = atol(argv[1]);
	if (units < 1)
		return 2;
	start_real = real_ns();
	start = now_ns();
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	while (__atomic_load_n(&begun, __ATOMIC_SEQ_CST) < 2)
		nanosleep(&(struct timespec){ 0, 100000 }, NULL);
	snprintf(path, sizeof(path), "%s/started", argv[2]);
	f = fopen(path, "w");
	if (f)
		fclose(f);
	while (n < MAX_SAMPLES) {
		at[n] = real_ns() - start_real;
		work[n] = __atomic_load_n(&done, __ATOMIC_RELAXED);
		if (work[n++] == 2 * units)
			break;
		nanosleep(&tick, NULL);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("irs: units=%ld start_real_ns=%.0f elapsed_ns=%.0f thread0_ns=%.0f thread1_ns=%.0f\n",
	       units, start_real, now_ns() - start, ended[0] - start, ended[1] - start);
	printf("irs_progress:");
	for (int i = 0; i < n; i++)
		printf(" %.0f,%ld", at[i], work[i]);
	printf("\n");
	return 0;
}
