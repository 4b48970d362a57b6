// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU-time accounting as programs read it: spins 300 ms, sleeps 300 ms,
 * then checks that getrusage, times and the CPU-time clocks counted the
 * spin and not the sleep, for the process and for a second thread. Prints
 * verdicts, not figures, so Linux and an enclave print the same lines.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/times.h>
#include <time.h>
#include <unistd.h>

static double now(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Computes for `seconds`, looking at the clock rarely: user time. */
static void spin(double seconds)
{
	double end = now(CLOCK_MONOTONIC) + seconds;
	volatile unsigned long x = 1;
	int i;

	while (now(CLOCK_MONOTONIC) < end)
		for (i = 0; i < 20000; i++)
			x = x * 6364136223846793005UL + 1;
}

static void *worker(void *arg)
{
	spin(0.3);
	*(double *)arg = now(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

static const char *within(double x, double lo, double hi)
{
	return x >= lo && x <= hi ? "yes" : "no";
}

int main(void)
{
	struct timespec nap = { 0, 300 * 1000 * 1000 };
	struct rusage ru;
	struct tms t;
	pthread_t th;
	double thread_cpu, process_cpu, worker_cpu, rusage_cpu;
	long tick = sysconf(_SC_CLK_TCK);

	spin(0.3);
	nanosleep(&nap, NULL);
	thread_cpu = now(CLOCK_THREAD_CPUTIME_ID);
	process_cpu = now(CLOCK_PROCESS_CPUTIME_ID);
	getrusage(RUSAGE_SELF, &ru);
	rusage_cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
		     ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	times(&t);
	printf("thread clock: spin counted, sleep not: %s\n", within(thread_cpu, 0.2, 0.55));
	printf("process clock: same: %s\n", within(process_cpu, 0.2, 0.55));
	printf("getrusage: same: %s, mostly user time: %s, maxrss: %s\n", within(rusage_cpu, 0.2, 0.55),
	       ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec > 0.15e6 ? "yes" : "no",
	       ru.ru_maxrss > 0 ? "yes" : "no");
	printf("times: same: %s\n", within((double)(t.tms_utime + t.tms_stime) / tick, 0.18, 0.56));

	pthread_create(&th, NULL, worker, &worker_cpu);
	pthread_join(th, NULL);
	printf("second thread: its own clock: %s, process clock grew by it: %s\n",
	       within(worker_cpu, 0.2, 0.55),
	       within(now(CLOCK_PROCESS_CPUTIME_ID) - process_cpu, 0.2, 0.6));
	return 0;
}
