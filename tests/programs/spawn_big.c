// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program holding much memory starts others: posix_spawn and vfork +
 * execve of PROGRAM, three times each, after writing MIB MiB. Linux and
 * an enclave run such children on the parent's memory, no copy, so this
 * works even when the enclave could not hold a second copy of the parent.
 * Then posix_spawn of a missing file (the error comes back through
 * posix_spawn, which learns it from the child's write to its caller's
 * frame), a vfork child that sets its caller's variable, vfork children
 * that map memory over the parent's (it reads as zeros) and that fork
 * (the grandchild sees the parent's bytes; only with "fork": that copies
 * all of the parent's memory).
 * Prints the same lines on Linux.
 *   spawn_big MIB PROGRAM [fork]
 */
#include <spawn.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int exit_code(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	if (argc != 3 && (argc != 4 || strcmp(argv[3], "fork")))
		return 2;
	long bytes = atol(argv[1]) << 20;
	char *prog = argv[2], *args[] = { prog, NULL };
	unsigned char *big = malloc(bytes);

	if (!big)
		return 1;
	memset(big, 0x5a, bytes);
	for (int i = 0; i < 3; i++) {
		pid_t pid;
		int r;

		fflush(stdout);
		r = posix_spawn(&pid, prog, NULL, NULL, args, environ);
		printf("posix_spawn %d: %s, child exit %d\n", i, r ? strerror(r) : "started",
		       r ? -1 : exit_code(pid));
	}
	for (int i = 0; i < 3; i++) {
		pid_t pid;

		fflush(stdout);
		pid = vfork();
		if (pid == 0) {
			/* The parent's memory, read by the child: exit 3 if it is there. */
			if (big[0] != 0x5a || big[bytes / 2] != 0x5a || big[bytes - 1] != 0x5a)
				_exit(4);
			if (i == 2)
				_exit(3);
			execve(prog, args, environ);
			_exit(127);
		}
		printf("vfork %d: child exit %d\n", i, pid < 0 ? -1 : exit_code(pid));
	}
	/* glibc's child writes exec's errno where the parent's call reads it. */
	{
		char *missing[] = { "/no/such/program", NULL };
		pid_t pid;
		int r = posix_spawn(&pid, missing[0], NULL, NULL, missing, environ);

		printf("posix_spawn of a missing file: %s\n", r ? strerror(r) : "started");
		if (!r)
			exit_code(pid);
	}
	/* Its caller's variable, set by a vfork child that then ends. */
	{
		volatile int set_by_child = 1;
		pid_t pid;

		fflush(stdout);
		pid = vfork();
		if (pid == 0) {
			set_by_child = 42;
			_exit(0);
		}
		exit_code(pid);
		printf("variable set by a vfork child: %d\n", set_by_child);
	}
	/* A fresh mapping by the child where the parent had a page: zeros. */
	unsigned char *scratch = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pid_t pid;

	if (scratch == MAP_FAILED)
		return 1;
	memset(scratch, 0x5a, 4096);
	fflush(stdout);
	pid = vfork();
	if (pid == 0) {
		if (mmap(scratch, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
		    scratch || mprotect(scratch, 4096, PROT_READ | PROT_WRITE))
			_exit(5);
		_exit(scratch[0] == 0 && scratch[4095] == 0 ? 0 : 6);
	}
	printf("vfork child's own mapping reads zeros: child exit %d\n", pid < 0 ? -1 : exit_code(pid));
	/* A vfork child that forks: the grandchild has the parent's bytes. */
	if (argc == 4) {
		fflush(stdout);
		pid = vfork();
		if (pid == 0) {
			pid_t g = fork();

			if (g == 0)
				_exit(big[0] == 0x5a && big[bytes - 1] == 0x5a ? 3 : 4);
			_exit(g < 0 ? 7 : exit_code(g));
		}
		printf("vfork child's fork: grandchild exit %d\n", pid < 0 ? -1 : exit_code(pid));
	}
	for (long at = 0; at < bytes; at += 4096)
		if (big[at] != 0x5a)
			return 5;
	printf("parent's %ld MiB as it wrote them: yes\n", bytes >> 20);
	return 0;
}
