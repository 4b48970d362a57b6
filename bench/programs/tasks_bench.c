// SPDX-License-Identifier: GPL-2.0-only
/*
 * The task runtime (hrt/tasks) at work: a parallel quicksort and a parallel
 * reduction, forked down to a cutoff and joined, on one worker per CPU.
 * Built twice from this source: on the hybrid-runtime API (tasks_hrt, for
 * an enclave, ring 3 or CPL 0) and on pthreads (tasks_pthreads, Linux).
 *   tasks_bench [runs] [sort elements] [reduction terms]
 * Prints per kernel: "tasks_bench kernel=K workers=W n=N median_ns=...
 * best_ns=... worst_ns=..." and whether every result was right.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tasks.h"
#include "timing.h"

#define CUTOFF 2048
#define MAX_RUNS 64

/* ---- quicksort ---- */

struct range {
	uint32_t *a;
	long n;
};

/* Hoare's partition around the middle element: a[0..*j] <= p <= a[*i..n). */
static void partition(uint32_t *a, long n, long *left_end, long *right_start)
{
	uint32_t p = a[n / 2], t;
	long i = 0, j = n - 1;

	while (i <= j) {
		while (a[i] < p)
			i++;
		while (a[j] > p)
			j--;
		if (i <= j) {
			t = a[i];
			a[i++] = a[j];
			a[j--] = t;
		}
	}
	*left_end = j;
	*right_start = i;
}

static void serial_sort(uint32_t *a, long n)
{
	while (n > 16) {
		long i, j;

		partition(a, n, &j, &i);
		serial_sort(a, j + 1);
		a += i;
		n -= i;
	}
	for (long i = 1; i < n; i++)
		for (long j = i; j > 0 && a[j - 1] > a[j]; j--) {
			uint32_t t = a[j];

			a[j] = a[j - 1];
			a[j - 1] = t;
		}
}

static void sort_task(void *arg)
{
	struct range *r = arg;
	uint32_t *a = r->a;
	long n = r->n, i, j;

	if (n <= CUTOFF) {
		serial_sort(a, n);
		return;
	}
	partition(a, n, &j, &i);
	{
		struct range left = { a, j + 1 }, right = { a + i, n - i };
		struct task lt;

		tasks_fork(&lt, sort_task, &left);
		sort_task(&right);
		tasks_join(&lt);
	}
}

/* ---- reduction: the sum of a hash of 0 .. n-1 ---- */

struct sum {
	uint64_t lo, hi, result;
};

static uint64_t term(uint64_t i)
{
	i ^= i >> 17;
	i *= 0xed5ad4bbU;
	i ^= i >> 11;
	return i & 0xffff;
}

static void sum_task(void *arg)
{
	struct sum *s = arg;

	if (s->hi - s->lo <= 64 * CUTOFF) {
		uint64_t acc = 0;

		for (uint64_t i = s->lo; i < s->hi; i++)
			acc += term(i);
		s->result = acc;
		return;
	}
	{
		uint64_t mid = s->lo + (s->hi - s->lo) / 2;
		struct sum left = { s->lo, mid, 0 }, right = { mid, s->hi, 0 };
		struct task lt;

		tasks_fork(&lt, sum_task, &left);
		sum_task(&right);
		tasks_join(&lt);
		s->result = left.result + right.result;
	}
}

static void report(const char *kernel, double *t, int runs, long n, int ok)
{
	sort_times(t, runs);
	printf("tasks_bench kernel=%s workers=%d n=%ld median_ns=%.0f best_ns=%.0f worst_ns=%.0f %s\n",
	       kernel, tasks_workers(), n, t[runs / 2], t[0], t[runs - 1], ok ? "right" : "WRONG");
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 10;
	long n = argc > 2 ? atol(argv[2]) : 1 << 20;
	uint64_t terms = argc > 3 ? strtoull(argv[3], NULL, 10) : 1 << 24, want = 0;
	uint32_t *a = malloc(n * sizeof(*a));
	double t[MAX_RUNS];
	int ok = 1;

	if (!a || runs < 1 || runs > MAX_RUNS || n < 1 || tasks_start(64)) {
		printf("tasks_bench: cannot start\n");
		return 2;
	}
	for (int r = 0; r < runs; r++) {
		struct range all = { a, n };
		uint32_t x = 12345;
		double t0;

		for (long i = 0; i < n; i++) {
			x = x * 1103515245 + 12345;
			a[i] = x >> 1;
		}
		t0 = now_ns();
		sort_task(&all);
		t[r] = now_ns() - t0;
		for (long i = 1; i < n; i++)
			ok &= a[i - 1] <= a[i];
	}
	report("quicksort", t, runs, n, ok);
	for (uint64_t i = 0; i < terms; i++)
		want += term(i);
	ok = 1;
	for (int r = 0; r < runs; r++) {
		struct sum s = { 0, terms, 0 };
		double t0 = now_ns();

		sum_task(&s);
		t[r] = now_ns() - t0;
		ok &= s.result == want;
	}
	report("reduction", t, runs, (long)terms, ok);
	tasks_stop();
	return 0;
}
