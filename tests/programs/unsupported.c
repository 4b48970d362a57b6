// SPDX-License-Identifier: GPL-2.0-only
/*
 * Calls two harmless system calls the enclave does not provide,
 * getpriority (140) and ioprio_get (252), `count` times each, and prints what
 * the first call returned: "ENOSYS" in an enclave, a value on Linux.
 *   unsupported [count]
 * With `atoll run --strict` the program dies at its first call, after the
 * "calling" line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "check.h"

static void try(long nr, const char *name, int count, long a0, long a1)
{
	long first = 0;
	int err = 0, i, same = 1;

	for (i = 0; i < count; i++) {
		long r;

		errno = 0;
		r = syscall(nr, a0, a1);
		if (i == 0) {
			first = r;
			err = r == -1 ? errno : 0;
		} else if ((r == -1 ? errno : 0) != err) {
			same = 0;
		}
	}
	if (err)
		printf("syscall %ld (%s) x%d: %s%s\n", nr, name, count, errno_name(err),
		       same ? "" : " (later calls differed)");
	else
		printf("syscall %ld (%s) x%d: returned %ld\n", nr, name, count, first);
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 1;

	printf("unsupported: calling\n");
	fflush(stdout);
	try(SYS_getpriority, "getpriority", count, PRIO_PROCESS, 0);
	try(SYS_ioprio_get, "ioprio_get", count, 1 /* IOPRIO_WHO_PROCESS */, 0);
	printf("unsupported: done\n");
	return 0;
}
