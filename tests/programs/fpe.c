// SPDX-License-Identifier: GPL-2.0-only
/* Integer division by zero: killed by SIGFPE (shell status 136). */
#include <stdio.h>

int main(void)
{
	volatile int num = 1, zero = 0;

	printf("fpe: dividing by zero\n");
	fflush(stdout);
	num = num / zero;
	printf("fpe: FAIL: still running (%d)\n", num);
	return 1;
}
