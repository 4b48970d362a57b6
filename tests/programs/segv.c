// SPDX-License-Identifier: GPL-2.0-only
/*
 * Killed by SIGSEGV (shell status 139):
 *   segv          writes to address 0
 *   segv stack    recurses until its stack runs out
 */
#include <stdio.h>
#include <string.h>

/* Ends only when `depth` runs out, which it does not before the stack. */
static int deeper(volatile char *above, long depth)
{
	volatile char frame[4096];

	frame[0] = above ? above[0] + 1 : 0;
	if (depth == 0)
		return frame[0];
	return deeper(frame, depth - 1) + frame[100];
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "stack")) {
		printf("segv: recursing without end\n");
		fflush(stdout);
		deeper(NULL, 1L << 40);
	} else {
		printf("segv: writing to NULL\n");
		fflush(stdout);
		*(volatile int *)0 = 42;
	}
	printf("segv: FAIL: still running\n");
	return 1;
}
