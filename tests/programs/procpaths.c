// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc as a program sees it: /proc/self/exe is the program itself, and
 * /proc/<getpid()> is this process, whose fd directory reopens its files
 * (as UCX opens a peer's shared-memory file); the CPU count that glibc
 * reads from /sys and the processors /proc/cpuinfo lists are the CPUs the
 * program may use, and the memory /proc/meminfo and NUMA node 0's meminfo
 * (hwloc's) tell is the memory sysinfo tells. The same output on Linux (a
 * one-node machine) and in an enclave.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>

/* "processor" lines in /proc/cpuinfo. */
static int processors(void)
{
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		n += strncmp(line, "processor", 9) == 0;
	if (f)
		fclose(f);
	return n;
}

/* The kB count of line `key` in meminfo file `path`; -1 if missing. */
static long long kib(const char *path, const char *key)
{
	char line[256];
	long long n = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f)) {
		char *at = strstr(line, key);

		if (at && at[strlen(key)] == ':')
			n = atoll(at + strlen(key) + 1);
	}
	if (f)
		fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	char exe[PATH_MAX] = "", real[PATH_MAX] = "", path[64], buf[16] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (argc < 2 || n < 0 || !realpath(argv[0], real))
		return 2;
	printf("/proc/self/exe is the program: %s\n", strcmp(exe, real) == 0 ? "yes" : exe);

	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || write(fd, "through fd", 10) != 10)
		return 3;
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", getpid(), fd);
	int again = open(path, O_RDONLY);

	printf("reopened through /proc/<getpid()>/fd: %s\n",
	       again >= 0 && read(again, buf, 10) == 10 && strcmp(buf, "through fd") == 0 ? "yes" : "no");
	snprintf(path, sizeof(path), "/proc/%d/exe", getpid());
	n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	printf("/proc/<getpid()>/exe is the program: %s\n", strcmp(exe, real) == 0 ? "yes" : exe);
	unlink(argv[1]);

	cpu_set_t mine;

	sched_getaffinity(0, sizeof(mine), &mine);
	printf("get_nprocs and /proc/cpuinfo count the CPUs it may use: %s\n",
	       get_nprocs() == CPU_COUNT(&mine) && processors() == CPU_COUNT(&mine) ? "yes" : "no");

	struct sysinfo si;
	long long total = sysinfo(&si) == 0 ? (long long)si.totalram * si.mem_unit / 1024 : -2;
	long long node = kib("/sys/devices/system/node/node0/meminfo", "MemTotal");
	long long free = kib("/proc/meminfo", "MemFree");

	printf("/proc/meminfo and node 0 tell sysinfo's memory: %s\n",
	       kib("/proc/meminfo", "MemTotal") == total && node == total && free > 0 && free <= total ?
	       "yes" : "no");
	return 0;
}
