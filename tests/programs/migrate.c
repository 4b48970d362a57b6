// SPDX-License-Identifier: GPL-2.0-only
/*
 * Moves itself (sched_setaffinity) onto each CPU it may use in turn and
 * ends on the last: the CPUs it left idle behind it. A regression test
 * runs it again and again with other programs in between (an idle core
 * once kept a freed program's page tables and took the machine down).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>

int main(void)
{
	cpu_set_t all, one;
	int visited = 0;

	if (sched_getaffinity(0, sizeof(all), &all) != 0)
		return 1;
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) != 0)
			return 2;
		for (volatile int spin = 0; spin < 100000; spin++)
			;
		visited += sched_getcpu() == cpu;
	}
	printf("migrate: on each of %d CPUs in turn: %s\n", CPU_COUNT(&all),
	       visited == CPU_COUNT(&all) ? "yes" : "no");
	return visited != CPU_COUNT(&all);
}
