// SPDX-License-Identifier: GPL-2.0-only
/*
 * A pipe round trip between two threads of one program: one byte to the
 * other thread through one pipe and back through another, `rounds` times,
 * `reps` times. In an enclave both ends are the program's own.
 *   pipe_threads [rounds [reps]]   (default 2000 rounds, 3 reps)
 * Prints "pipe_threads: rep=R ns_per_round_trip=N" per rep, then the
 * median and a count of bytes that came back wrong.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "timing.h"

static int to_echo[2], from_echo[2];
static long total;

/* Sends every byte back, one more than it came. */
static void *echo(void *unused)
{
	char c;
	long i;

	(void)unused;
	for (i = 0; i < total; i++) {
		if (read(to_echo[0], &c, 1) != 1)
			break;
		c++;
		if (write(from_echo[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 2000, i, bad = 0;
	int reps = argc > 2 ? atoi(argv[2]) : 3, r;
	double ns[100];
	pthread_t t;

	if (rounds < 1 || reps < 1 || reps > 100)
		return 2;
	if (pipe(to_echo) || pipe(from_echo)) {
		perror("pipe_threads: pipe");
		return 1;
	}
	total = rounds * reps;
	if (pthread_create(&t, NULL, echo, NULL)) {
		fprintf(stderr, "pipe_threads: pthread_create failed\n");
		return 1;
	}
	for (r = 0; r < reps; r++) {
		double t0 = now_ns();

		for (i = 0; i < rounds; i++) {
			char c = (char)i, back = 0;

			bad += write(to_echo[1], &c, 1) != 1 || read(from_echo[0], &back, 1) != 1 ||
			       back != (char)(c + 1);
		}
		ns[r] = (now_ns() - t0) / rounds;
		printf("pipe_threads: rep=%d rounds=%ld ns_per_round_trip=%.1f\n", r, rounds, ns[r]);
		fflush(stdout);
	}
	pthread_join(t, NULL);
	sort_times(ns, reps);
	printf("pipe_threads: median_ns=%.1f wrong=%ld\n", ns[reps / 2], bad);
	return bad != 0;
}
