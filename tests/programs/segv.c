// SPDX-License-Identifier: GPL-2.0-only
/* Writes to address 0: killed by SIGSEGV (shell status 139). */
#include <stdio.h>

int main(void)
{
	printf("segv: writing to NULL\n");
	fflush(stdout);
	*(volatile int *)0 = 42;
	printf("segv: FAIL: still running\n");
	return 1;
}
