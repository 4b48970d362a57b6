// SPDX-License-Identifier: GPL-2.0-only
/*
 * Messages between programs (abi/atoll_msg.h), the same binary in an
 * enclave and on Linux:
 *   msgping serve PORT COUNT          answer COUNT messages on PORT with their bytes
 *   msgping send KERNEL PORT COUNT SIZE [AFTER_MS]
 *                                     COUNT round trips of SIZE bytes to (KERNEL, PORT),
 *                                     answers on PORT + 1, every byte checked; with
 *                                     AFTER_MS, says so and waits that long first
 *   msgping post KERNEL PORT TEXT     one message of TEXT to (KERNEL, PORT)
 *   msgping take PORT TIMEOUT_MS      one message from PORT, printed with its sender
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "atoll_msg.h"

static unsigned char pattern(long round, size_t i)
{
	return (unsigned char)(round * 7 + i * 13);
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int serve(unsigned int port, long count)
{
	static unsigned char buf[ATOLL_MSG_MAX];
	struct atoll_msg_from from;
	long i, n;

	/* Said at once: a caller may wait for the server before it goes on. */
	printf("msgping: serving port %u\n", port);
	fflush(stdout);
	for (i = 0; i < count; i++) {
		n = atoll_msg_recv(port, buf, sizeof(buf), &from, 30000);
		if (n < 0 || atoll_msg_send(from.kernel, from.port, port, buf, n) < 0) {
			perror("msgping serve");
			return 1;
		}
	}
	printf("msgping: served %ld messages on port %u\n", count, port);
	return 0;
}

static int send_rounds(unsigned int kernel, unsigned int port, long count, size_t size,
		       long after_ms)
{
	static unsigned char out[ATOLL_MSG_MAX], in[ATOLL_MSG_MAX];
	struct timespec wait = { after_ms / 1000, after_ms % 1000 * 1000000 };
	struct atoll_msg_from from;
	double t0, best = 1e18, total = 0;
	long r, n, bad = 0;
	size_t i;

	if (after_ms > 0) {
		/* Said before the wait: a caller may start something to overlap the rounds. */
		printf("msgping: sending in %ld ms\n", after_ms);
		fflush(stdout);
		nanosleep(&wait, NULL);
	}
	for (r = 0; r < count; r++) {
		for (i = 0; i < size; i++)
			out[i] = pattern(r, i);
		t0 = now_ns();
		if (atoll_msg_send(kernel, port, port + 1, out, size) < 0) {
			perror("msgping send");
			return 1;
		}
		n = atoll_msg_recv(port + 1, in, sizeof(in), &from, 10000);
		if (n < 0) {
			perror("msgping recv");
			return 1;
		}
		t0 = now_ns() - t0;
		total += t0;
		best = t0 < best ? t0 : best;
		bad += (size_t)n != size || memcmp(in, out, size) || from.kernel != kernel ||
		       from.port != port;
	}
	printf("msgping: %ld round trips of %zu bytes to kernel %u port %u, %ld bad, mean %.1f us, best %.1f us\n",
	       count, size, kernel, port, bad, total / count / 1e3, best / 1e3);
	return bad != 0;
}

static int post(unsigned int kernel, unsigned int port, const char *text)
{
	if (atoll_msg_send(kernel, port, 0, text, strlen(text)) < 0) {
		perror("msgping post");
		return 1;
	}
	printf("msgping: posted '%s' to kernel %u port %u\n", text, kernel, port);
	return 0;
}

static int take(unsigned int port, int timeout_ms)
{
	char buf[ATOLL_MSG_MAX + 1];
	struct atoll_msg_from from;
	long n = atoll_msg_recv(port, buf, ATOLL_MSG_MAX, &from, timeout_ms);

	if (n < 0) {
		perror("msgping take");
		return 1;
	}
	buf[n] = 0;
	printf("msgping: took '%s' from kernel %u port %u\n", buf, from.kernel, from.port);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "serve"))
		return serve(atoi(argv[2]), atol(argv[3]));
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "send"))
		return send_rounds(atoi(argv[2]), atoi(argv[3]), atol(argv[4]), atol(argv[5]),
				   argc == 7 ? atol(argv[6]) : 0);
	if (argc == 5 && !strcmp(argv[1], "post"))
		return post(atoi(argv[2]), atoi(argv[3]), argv[4]);
	if (argc == 4 && !strcmp(argv[1], "take"))
		return take(atoi(argv[2]), atoi(argv[3]));
	fprintf(stderr, "usage: see the comment at the top of msgping.c\n");
	return 2;
}
