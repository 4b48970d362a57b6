// SPDX-License-Identifier: GPL-2.0-only
/*
 * process_vm_readv and process_vm_writev back and forth between several
 * processes (more than the CPUs, so they are preempted mid-call), each
 * copy checked. Regression: the LWK once let go of the two address-space
 * locks in the wrong order, which hung such a job now and then.
 * usage: cma_stress PROCESSES ROUNDS DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX 16
#define SIZE (64 * 1024)

struct table {
	volatile long ready, done;
	volatile long pid[MAX];
	volatile long buffer[MAX];
};

static char mine[SIZE], got[SIZE];

static int run(struct table *t, int me, int n, long rounds)
{
	int bad = 0;

	memset(mine, 'a' + me, SIZE);
	t->pid[me] = getpid();
	t->buffer[me] = (long)mine;
	__sync_fetch_and_add(&t->ready, 1);
	while (t->ready < n)
		sched_yield();
	for (long r = 0; r < rounds; r++) {
		int j = (me + 1 + r % (n - 1)) % n;
		struct iovec local = { got, SIZE }, remote = { (void *)t->buffer[j], SIZE };

		if (process_vm_readv(t->pid[j], &local, 1, &remote, 1, 0) != SIZE ||
		    got[0] != 'a' + j || got[SIZE - 1] != 'a' + j)
			bad++;
		/* Write their own bytes back to them: they never change. */
		if (process_vm_writev(t->pid[j], &local, 1, &remote, 1, 0) != SIZE)
			bad++;
	}
	/* The others may still copy from this one. */
	__sync_fetch_and_add(&t->done, 1);
	while (t->done < n)
		sched_yield();
	return bad;
}

int main(int argc, char **argv)
{
	char path[4096];
	int n, status, bad = 0;

	if (argc != 4)
		return 2;
	n = atoi(argv[1]);
	if (n < 2 || n > MAX)
		return 2;
	snprintf(path, sizeof(path), "%s/cma_stress.table", argv[3]);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || ftruncate(fd, sizeof(struct table)) != 0)
		return 3;
	struct table *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (t == MAP_FAILED)
		return 4;
	for (int i = 1; i < n; i++)
		if (fork() == 0)
			_exit(run(t, i, n, atol(argv[2])) ? 1 : 0);
	bad = run(t, 0, n, atol(argv[2]));
	for (int i = 1; i < n; i++) {
		wait(&status);
		bad += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}
	printf("cma: %d processes, %s copies each way, all right: %s\n", n, argv[2], bad ? "no" : "yes");
	unlink(path);
	return bad != 0;
}
