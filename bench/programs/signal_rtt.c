// SPDX-License-Identifier: GPL-2.0-only
/*
 * A signal round trip: kill(getpid(), SIGUSR1), the handler runs, and
 * rt_sigreturn comes back, `count` times, `reps` times; prints ns per trip.
 *   signal_rtt [count [reps]]   (default 100000 signals, 3 reps)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "timing.h"

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	handled++;
}

int main(int argc, char **argv)
{
	long count = argc > 1 ? atol(argv[1]) : 100000, i;
	int reps = argc > 2 ? atoi(argv[2]) : 3, r;
	struct sigaction sa = { .sa_handler = on_usr1 };
	pid_t me = getpid();

	if (count < 1 || reps < 1)
		return 2;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	for (r = 0; r < reps; r++) {
		double t0 = now_ns();

		handled = 0;
		for (i = 0; i < count; i++)
			kill(me, SIGUSR1);
		if (handled != count) {
			printf("signal_rtt: FAIL: %d of %ld handled\n", (int)handled, count);
			return 1;
		}
		printf("signal_rtt: rep=%d signals=%ld ns_per_signal=%.1f\n", r, count, (now_ns() - t0) / count);
	}
	return 0;
}
