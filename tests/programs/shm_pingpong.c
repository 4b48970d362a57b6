// SPDX-License-Identifier: GPL-2.0-only
/*
 * Shared file mappings between processes, as MPI's shared-memory
 * transports use them.
 *   shm_pingpong NAME first|second ROUNDS: two processes map the POSIX
 *     shared-memory object NAME (/dev/shm) and take turns on a word in it;
 *     "first" creates and removes it, and then reads a string from the
 *     second's memory with process_vm_readv (MPI's single-copy path).
 *   shm_pingpong fork DIR: a mapping of a file in DIR shared with a forked
 *     child, which writes to it before it exits.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SIZE (4 * 4096)

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Waits until *word == want; 0 once it does, -1 after 30 s. */
static int wait_for(volatile long *word, long want)
{
	double give_up = now() + 30;

	while (*word != want) {
		if (now() > give_up)
			return -1;
		sched_yield();
	}
	return 0;
}

static int pingpong(const char *name, int first, long rounds)
{
	int fd = -1;
	struct stat st;
	double give_up = now() + 30;

	if (first) {
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || ftruncate(fd, SIZE) != 0) {
			perror("first: shm_open/ftruncate");
			return 1;
		}
	} else {
		/* Until the first has made it and given it its size. */
		while ((fd = shm_open(name, O_RDWR, 0)) < 0 ||
		       fstat(fd, &st) != 0 || st.st_size < SIZE) {
			if (fd >= 0)
				close(fd);
			if (now() > give_up) {
				printf("second: %s never appeared\n", name);
				return 1;
			}
			usleep(1000);
		}
	}
	volatile long *turn = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	if (turn == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (!first) {
		static char message[] = "read across processes";

		turn[200] = getpid();
		turn[201] = (long)message;
	}
	for (long i = 0; i < rounds; i++) {
		long mine = first ? 2 * i : 2 * i + 1;

		if (wait_for(turn, mine) != 0) {
			printf("%s: stuck in round %ld (the word is %ld)\n",
			       first ? "first" : "second", i, *turn);
			return 1;
		}
		turn[1 + i % 100] = mine; /* more of the page than one word */
		*turn = mine + 1;
	}
	if (first) {
		wait_for(turn, 2 * rounds);
		printf("pingpong: %ld rounds, last word %ld\n", rounds, *turn);
		/* The second said where its string is: read it from here. */
		char got[64] = "";
		struct iovec mine = { got, sizeof(got) - 1 };
		struct iovec theirs = { (void *)turn[201], 21 };
		ssize_t n = process_vm_readv((pid_t)turn[200], &mine, 1, &theirs, 1, 0);

		printf("process_vm_readv: %zd bytes: %s\n", n, got);
		*turn = -1;
		shm_unlink(name);
	} else {
		wait_for(turn, -1);
	}
	munmap((void *)turn, SIZE);
	return 0;
}

static int forked(const char *dir)
{
	char path[4096];
	int fd, status;

	snprintf(path, sizeof(path), "%s/shm_pingpong.fork", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, SIZE) != 0)
		return 1;
	char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	char *q = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	strcpy(p, "parent");
	pid_t child = fork();

	if (child == 0) {
		strcpy(p + 100, "written by the child");
		_exit(0);
	}
	waitpid(child, &status, 0);
	printf("fork: the parent sees \"%s\"; a second mapping of the file sees \"%s\" and \"%s\"\n",
	       p + 100, q, q + 100);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "fork") == 0)
		return forked(argv[2]);
	if (argc == 4 && (strcmp(argv[2], "first") == 0 || strcmp(argv[2], "second") == 0))
		return pingpong(argv[1], strcmp(argv[2], "first") == 0, atol(argv[3]));
	fprintf(stderr, "usage: shm_pingpong NAME first|second ROUNDS | shm_pingpong fork DIR\n");
	return 2;
}
