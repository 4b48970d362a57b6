// SPDX-License-Identifier: GPL-2.0-only
/* ud2, an undefined instruction: killed by SIGILL (shell status 132). */
#include <stdio.h>

int main(void)
{
	printf("ill: executing ud2\n");
	fflush(stdout);
	__asm__ volatile("ud2");
	printf("ill: FAIL: still running\n");
	return 1;
}
