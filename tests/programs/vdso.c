// SPDX-License-Identifier: GPL-2.0-only
/*
 * The vDSO as a program sees it; prints the same lines on Linux and in an
 * enclave: there is one, and the C library's clock_gettime, gettimeofday
 * and time (which use it) agree with the system calls read around them,
 * and CLOCK_MONOTONIC never goes back however the two are mixed.
 * Per-call costs go to stderr.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long long ns(const struct timespec *t)
{
	return t->tv_sec * 1000000000LL + t->tv_nsec;
}

static long long by_syscall(clockid_t clock)
{
	struct timespec t;

	syscall(SYS_clock_gettime, clock, &t);
	return ns(&t);
}

static long long by_libc(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return ns(&t);
}

/* Is libc's reading of `clock` between two system calls' (to `slack` ns)? */
static int between(clockid_t clock, long long slack)
{
	long long before = by_syscall(clock), mine = by_libc(clock), after = by_syscall(clock);

	return before - slack <= mine && mine <= after + slack;
}

static double per_call_ns(long long (*read)(clockid_t), int n)
{
	long long t0 = by_syscall(CLOCK_MONOTONIC);

	for (int i = 0; i < n; i++)
		read(CLOCK_MONOTONIC);
	return (double)(by_syscall(CLOCK_MONOTONIC) - t0) / n;
}

int main(void)
{
	struct timeval tv;
	long long before, last = 0;
	int backwards = 0, ok;

	printf("vdso: there is one: %s\n", getauxval(AT_SYSINFO_EHDR) ? "yes" : "no");
	printf("vdso: CLOCK_MONOTONIC between two system calls: %s\n",
	       between(CLOCK_MONOTONIC, 0) ? "yes" : "no");
	printf("vdso: CLOCK_REALTIME between two system calls: %s\n",
	       between(CLOCK_REALTIME, 0) ? "yes" : "no");
	printf("vdso: CLOCK_BOOTTIME between two system calls: %s\n",
	       between(CLOCK_BOOTTIME, 0) ? "yes" : "no");
	before = by_syscall(CLOCK_REALTIME);
	gettimeofday(&tv, NULL);
	ok = tv.tv_sec * 1000000LL + tv.tv_usec >= before / 1000 &&
	     tv.tv_sec * 1000000LL + tv.tv_usec <= by_syscall(CLOCK_REALTIME) / 1000;
	printf("vdso: gettimeofday between two system calls: %s\n", ok ? "yes" : "no");
	before = by_syscall(CLOCK_REALTIME) / 1000000000;
	ok = time(NULL) >= before && time(NULL) <= by_syscall(CLOCK_REALTIME) / 1000000000;
	printf("vdso: time between two system calls: %s\n", ok ? "yes" : "no");
	for (int i = 0; i < 200000; i++) {
		long long now = i % 3 ? by_libc(CLOCK_MONOTONIC) : by_syscall(CLOCK_MONOTONIC);

		backwards += now < last;
		last = now;
	}
	printf("vdso: CLOCK_MONOTONIC went back in 200000 mixed reads: %d times\n", backwards);
	printf("vdso: CLOCK_PROCESS_CPUTIME_ID through libc: %s\n",
	       by_libc(CLOCK_PROCESS_CPUTIME_ID) > 0 ? "counts" : "zero");
	fprintf(stderr, "vdso: clock_gettime %.0f ns a call through libc, %.0f ns by system call\n",
		per_call_ns(by_libc, 100000), per_call_ns(by_syscall, 100000));
	return 0;
}
