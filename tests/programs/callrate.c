// SPDX-License-Identifier: GPL-2.0-only
/*
 * Delegated calls at a changing rate, so that atoll run's workers poll,
 * sleep and wake again: each thread writes numbered lines to one O_APPEND
 * file in bursts of 1, 10 and 100 writes, with no pause, 1 ms or 30 ms
 * between bursts, until `seconds` have passed. It prints how many lines it
 * wrote; the test counts them on Linux: every one exactly once.
 *   callrate FILE [threads [seconds]]
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int fd;
static double seconds = 3;

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *writer(void *arg)
{
	static const int bursts[] = { 1, 10, 100 };
	static const long pauses_us[] = { 0, 1000, 30000 };
	long id = (long)arg, lines = 0, round = 0;
	double end = now() + seconds;
	char line[64];

	while (now() < end) {
		for (int i = 0; i < bursts[round % 3]; i++) {
			int n = snprintf(line, sizeof(line), "t%ld n%ld\n", id, lines);

			if (write(fd, line, n) != n) {
				perror("callrate: write");
				exit(1);
			}
			lines++;
		}
		if (pauses_us[round / 3 % 3])
			usleep(pauses_us[round / 3 % 3]);
		round++;
	}
	return (void *)lines;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 3;
	pthread_t t[16];
	long total = 0;

	if (argc < 2 || threads < 1 || threads > 16)
		return 2;
	if (argc > 3)
		seconds = atof(argv[3]);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0) {
		perror("callrate: open");
		return 1;
	}
	for (long i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, writer, (void *)i);
	for (int i = 0; i < threads; i++) {
		void *lines;

		pthread_join(t[i], &lines);
		total += (long)lines;
	}
	printf("callrate: threads=%d lines=%ld\n", threads, total);
	return close(fd) != 0;
}
