// SPDX-License-Identifier: GPL-2.0-only
/*
 * execve as a program sees it; prints the same lines on Linux and in an
 * enclave: an exec chain keeping its pid, a failed exec that returns,
 * close-on-exec descriptors, posix_spawn and system() of a shell command
 * (/bin/sh). Run it by its full path: it execs itself (argv[0]).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static char self[4096];

static void chain(int left, const char *pid0, const char *keep_fd, const char *lose_fd)
{
	char n[16];

	if (left == 0) {
		printf("chain: done, same pid: %s, kept fd open: %s, cloexec fd closed: %s\n",
		       atoi(pid0) == getpid() ? "yes" : "no",
		       fcntl(atoi(keep_fd), F_GETFD) >= 0 ? "yes" : "no",
		       fcntl(atoi(lose_fd), F_GETFD) < 0 && errno == EBADF ? "yes" : "no");
		exit(0);
	}
	printf("chain: %d to go\n", left);
	snprintf(n, sizeof(n), "%d", left - 1);
	execl(self, self, "chain", n, pid0, keep_fd, lose_fd, (char *)NULL);
	printf("chain: execl failed: %s\n", strerror(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	char pid[16], keep[16], lose[16];
	int fds[2], st;
	pid_t child;
	char *spawn_argv[] = { self, "spawned", NULL };

	setvbuf(stdout, NULL, _IONBF, 0);
	snprintf(self, sizeof(self), "%s", argv[0]);
	if (argc == 6 && !strcmp(argv[1], "chain"))
		chain(atoi(argv[2]), argv[3], argv[4], argv[5]);
	if (argc == 2 && !strcmp(argv[1], "spawned")) {
		printf("spawned: running\n");
		return 4;
	}
	/* A failed exec returns, and the program goes on. */
	execl("/no/such/program", "x", (char *)NULL);
	printf("exec of a missing file: %s\n", errno == ENOENT ? "ENOENT" : strerror(errno));

	if (pipe(fds) || fcntl(fds[1], F_SETFD, FD_CLOEXEC))
		return 1;
	child = fork();
	if (child == 0) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		snprintf(keep, sizeof(keep), "%d", fds[0]);
		snprintf(lose, sizeof(lose), "%d", fds[1]);
		chain(3, pid, keep, lose);
	}
	waitpid(child, &st, 0);
	printf("chain: exit code %d\n", WEXITSTATUS(st));

	if (posix_spawn(&child, self, NULL, NULL, spawn_argv, environ))
		printf("posix_spawn failed\n");
	waitpid(child, &st, 0);
	printf("posix_spawn: exit code %d\n", WEXITSTATUS(st));

	setenv("SHELL_GREETING", "hello from a shell", 1);
	st = system("echo \"system: $SHELL_GREETING\"; exit 3");
	printf("system: exit code %d\n", WEXITSTATUS(st));
	printf("exec: done\n");
	return 0;
}
