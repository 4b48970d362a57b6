// SPDX-License-Identifier: GPL-2.0-only
/*
 * System V shared memory as UCX (MPICH) and Open MPI use it: a private
 * segment attached, shared with a forked child, counted (IPC_STAT), found
 * again by key, removed while attached (IPC_RMID), attached again by id and
 * detached. The same
 * output on Linux and in an enclave.
 */
#include <stdio.h>
#include <string.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define SIZE (3 * 4096 + 10)
#define KEY 0x41746f6c		/* "Atol" */

static long attaches(int id)
{
	struct shmid_ds ds;

	return shmctl(id, IPC_STAT, &ds) == 0 ? (long)ds.shm_nattch : -1;
}

int main(void)
{
	int id = shmget(IPC_PRIVATE, SIZE, IPC_CREAT | 0600);
	char *p = shmat(id, NULL, 0);
	struct shmid_ds ds;
	int status;

	if (id < 0 || p == (void *)-1) {
		perror("shmget/shmat");
		return 1;
	}
	shmctl(id, IPC_STAT, &ds);
	printf("private segment: size %zu, zeroed %s, attached %ld\n", (size_t)ds.shm_segsz,
	       p[0] == 0 && p[SIZE - 1] == 0 ? "yes" : "no", (long)ds.shm_nattch);
	strcpy(p, "parent");
	pid_t child = fork();

	if (child == 0) {
		char *q = shmat(id, NULL, 0);

		strcpy(p + 100, "child through the inherited attach");
		strcpy(q + 200, "child through its own attach");
		_exit(attaches(id) == 3 ? 0 : 1);
	}
	pid_t waited;

	while ((waited = waitpid(child, &status, 0)) < 0 && errno == EINTR)
		;
	if (waited != child)
		printf("waitpid: %s\n", errno_name(errno));
	printf("child: saw 3 attaches %s; the parent reads \"%s\" and \"%s\"\n",
	       waited == child && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "yes" : "no", p + 100, p + 200);
	printf("after the child: attached %ld\n", attaches(id));

	/* Each errno is read before the next call. */
	int named = shmget(KEY, 4096, IPC_CREAT | IPC_EXCL | 0600);
	int again = shmget(KEY, 4096, 0600);
	const char *twice = shmget(KEY, 4096, IPC_CREAT | IPC_EXCL | 0600) < 0 ? errno_name(errno) : "made";
	const char *bigger = shmget(KEY, 8192, 0600) < 0 ? errno_name(errno) : "found";
	const char *missing = shmget(KEY + 1, 4096, 0600) < 0 ? errno_name(errno) : "found";

	printf("by key: found again %s, IPC_EXCL %s, larger %s, missing key %s\n",
	       named >= 0 && again == named ? "yes" : "no", twice, bigger, missing);
	shmctl(named, IPC_RMID, NULL);

	shmctl(id, IPC_RMID, NULL);
	printf("removed while attached: still reads \"%s\"\n", p);
	/* Linux (and UCX, which relies on it) attaches it by id until its last detach. */
	char *late = shmat(id, NULL, 0);

	printf("attached after IPC_RMID: %s\n", late != (void *)-1 && strcmp(late, "parent") == 0 ? "yes" : "no");
	shmdt(late);
	const char *first = shmdt(p) == 0 ? "ok" : errno_name(errno);
	const char *second = shmdt(p) == 0 ? "ok" : errno_name(errno);

	printf("detach: %s; again: %s\n", first, second);
	return check_failures;
}
