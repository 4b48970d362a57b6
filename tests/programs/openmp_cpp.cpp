// SPDX-License-Identifier: GPL-2.0-only
/*
 * C++ with OpenMP, dynamically linked (libstdc++, libgomp): a parallel
 * reduction, a parallel sort of a vector, and an exception. The output
 * does not depend on the number of CPUs, only the thread check does: the
 * team is as large as the CPUs the program may use, as libgomp decides.
 */
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

int main()
{
	const long n = 1000000;
	std::vector<long> v(n);
	std::iota(v.begin(), v.end(), 1);

	long sum = 0;
#pragma omp parallel for reduction(+ : sum)
	for (long i = 0; i < n; i++)
		sum += v[i] % 1000;
	std::printf("reduction: %ld\n", sum);

	std::vector<std::string> words;
	for (int i = 0; i < 1000; i++)
		words.push_back(std::to_string((i * 7919) % 1000));
#pragma omp parallel sections
	{
#pragma omp section
		std::sort(words.begin(), words.begin() + 500);
#pragma omp section
		std::sort(words.begin() + 500, words.end());
	}
	std::inplace_merge(words.begin(), words.begin() + 500, words.end());
	std::printf("sorted: %s ... %s\n", words.front().c_str(), words.back().c_str());

	try {
		throw std::runtime_error("thrown and caught");
	} catch (const std::exception &e) {
		std::printf("exception: %s\n", e.what());
	}

	cpu_set_t set;
	sched_getaffinity(0, sizeof(set), &set);
	int team = 0;
#pragma omp parallel
#pragma omp atomic
	team++;
	std::printf("team as large as the CPUs: %s\n", team == CPU_COUNT(&set) ? "yes" : "no");
	return 0;
}
