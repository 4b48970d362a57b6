// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sleeps 50 ms at a time until killed (the SIGINT test): prints one line
 * when it starts, so whoever waits for it knows it is running.
 */
#include <stdio.h>
#include <time.h>

int main(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	unsigned long naps = 0;

	printf("sleep: sleeping\n");
	fflush(stdout);
	for (;;) {
		nanosleep(&ts, NULL);
		naps++;
	}
	return naps == 0;
}
