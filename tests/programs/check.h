/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Small helpers shared by the test programs: errno names (musl has no
 * strerrorname_np) and a failure counter. Header-only, so each program
 * stays one file to build.
 */
#ifndef ATOLL_TEST_CHECK_H
#define ATOLL_TEST_CHECK_H

#include <errno.h>
#include <stdio.h>

static inline const char *errno_name(int e)
{
	switch (e) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EBADF: return "EBADF";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EEXIST: return "EEXIST";
	case ENOTDIR: return "ENOTDIR";
	case EISDIR: return "EISDIR";
	case EINVAL: return "EINVAL";
	case ENOTTY: return "ENOTTY";
	case ENOSYS: return "ENOSYS";
	case ENOMEM: return "ENOMEM";
	default: return "E?";
	}
}

static int check_failures __attribute__((unused));

/* Prints "FAIL: <what>" on stdout (next to the results) when ok is false. */
#define CHECK(ok, ...)                                   \
	do {                                             \
		if (!(ok)) {                             \
			printf("FAIL: " __VA_ARGS__);    \
			printf("\n");                    \
			check_failures++;                \
		}                                        \
	} while (0)

#endif
