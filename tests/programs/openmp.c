// SPDX-License-Identifier: GPL-2.0-only
/*
 * OpenMP (gcc -fopenmp): a parallel reduction with a known answer, in
 * integers and in doubles (every partial sum is an integer below 2^53, so
 * the double sum is exact in any order), and a dynamic loop. Prints the
 * team size and the sums; exits 1 on a wrong result.
 */
#include <omp.h>
#include <stdio.h>
#include "check.h"

#define N 1000000L

int main(void)
{
	long sum = 0, dyn = 0, expected = N * (N - 1) / 2;
	double dsum = 0;
	unsigned long seen = 0;	/* bit t: thread t took part */
	int team = 0;

	printf("max_threads=%d procs=%d\n", omp_get_max_threads(), omp_get_num_procs());
	fflush(stdout);

#pragma omp parallel
	{
#pragma omp single
		team = omp_get_num_threads();
		if (omp_get_thread_num() < 64)
			__atomic_or_fetch(&seen, 1UL << omp_get_thread_num(), __ATOMIC_RELAXED);

		/* _Pragma: checkpatch.pl reads a #pragma's reduction(+:x) as C. */
		_Pragma("omp for reduction(+:sum, dsum) schedule(static)")
		for (long i = 0; i < N; i++) {
			sum += i;
			dsum += (double)i;
		}

		_Pragma("omp for reduction(+:dyn) schedule(dynamic, 1000)")
		for (long i = 0; i < N; i++)
			dyn += i % 7;
	}

	long dyn_expected = 0;

	for (long i = 0; i < N; i++)
		dyn_expected += i % 7;

	printf("team=%d threads_seen=%d\n", team, __builtin_popcountl(seen));
	printf("sum=%ld expected=%ld\n", sum, expected);
	printf("double_sum=%.1f expected=%.1f\n", dsum, (double)expected);
	printf("dynamic_sum=%ld expected=%ld\n", dyn, dyn_expected);
	CHECK(sum == expected, "integer reduction");
	CHECK(dsum == (double)expected, "double reduction");
	CHECK(dyn == dyn_expected, "dynamic loop");
	CHECK(team == omp_get_max_threads(), "team of %d, max_threads %d", team, omp_get_max_threads());
	CHECK(__builtin_popcountl(seen) == (team < 64 ? team : 64), "not every thread took part");
	printf("openmp: %s\n", check_failures ? "FAILED" : "ok");
	return check_failures ? 1 : 0;
}
