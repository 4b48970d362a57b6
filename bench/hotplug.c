// SPDX-License-Identifier: GPL-2.0-only
/*
 * Linux's own hotplug times, the baseline for Atoll's create/destroy
 * (the Pisces Table 5 analogue):
 *   hotplug cpu <n>      offline, then online CPU n
 *   hotplug mem <block>  offline, then online_movable memory block <block>
 * then offlines it again and, after a pause of half a second, onlines it:
 * a hotplug step right after another skips the RCU grace period the
 * first one waited for, so the online right after the offline is the
 * cheapest Linux has, the one after the pause what a step alone costs.
 * Prints one line:
 *   hotplug: kind=... id=... offline_ns=... online_ns=... online_after_pause_ns=...
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Writes value to path; returns the time it took, or exits on failure. */
static uint64_t timed_write(const char *path, const char *value)
{
	uint64_t t0 = now_ns();
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t)strlen(value)) {
		perror(path);
		exit(1);
	}
	close(fd);
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	char path[128];
	const char *off_value, *on_value;
	uint64_t off, on, on_alone;

	if (argc != 3 || (strcmp(argv[1], "cpu") && strcmp(argv[1], "mem"))) {
		fprintf(stderr, "usage: hotplug cpu <n> | hotplug mem <block>\n");
		return 2;
	}
	if (!strcmp(argv[1], "cpu")) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%s/online", argv[2]);
		off_value = "0";
		on_value = "1";
	} else {
		snprintf(path, sizeof(path), "/sys/devices/system/memory/memory%s/state", argv[2]);
		off_value = "offline";
		on_value = "online_movable";
	}
	off = timed_write(path, off_value);
	on = timed_write(path, on_value);
	timed_write(path, off_value);
	usleep(500000);
	on_alone = timed_write(path, on_value);
	printf("hotplug: kind=%s id=%s offline_ns=%llu online_ns=%llu online_after_pause_ns=%llu\n", argv[1],
	       argv[2], (unsigned long long)off, (unsigned long long)on, (unsigned long long)on_alone);
	return 0;
}
