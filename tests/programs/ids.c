// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who a program is, and becoming another user; prints the same lines on
 * Linux and in an enclave.
 *   ids                  its ids, and setuid/setgid to them
 *   ids UID FILE         then, as root, becomes UID (groups, gid, uid),
 *                        opens FILE, tries to become root again, forks
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *result(int r)
{
	return r ? strerror(errno) : "ok";
}

static void show(const char *when)
{
	uid_t r, e, s;
	gid_t gr, ge, gs;

	if (getresuid(&r, &e, &s) || getresgid(&gr, &ge, &gs)) {
		perror("getres[ug]id");
		exit(1);
	}
	printf("%s: uid %u %u %u, gid %u %u %u, %d groups\n", when, r, e, s, gr, ge, gs,
	       getgroups(0, NULL));
}

int main(int argc, char **argv)
{
	gid_t to;
	pid_t pid;
	int fd;

	show("ids");
	printf("setgid(own): %s\n", result(setgid(getgid())));
	printf("setuid(own): %s\n", result(setuid(getuid())));
	if (argc != 3)
		return 0;
	to = (gid_t)atoi(argv[1]);
	printf("setgroups: %s\n", result(setgroups(1, &to)));
	printf("setgid: %s\n", result(setgid(to)));
	printf("setuid: %s\n", result(setuid((uid_t)to)));
	show("now");
	fd = open(argv[2], O_RDONLY);
	printf("open %s: %s\n", argv[2], fd < 0 ? strerror(errno) : "ok");
	printf("setuid(0): %s\n", result(setuid(0)));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		show("child");
		return 0;
	}
	printf("fork: %s\n", pid < 0 ? strerror(errno) : "ok");
	waitpid(pid, NULL, 0);
	return 0;
}
