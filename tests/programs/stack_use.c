// SPDX-License-Identifier: GPL-2.0-only
/*
 * The main stack gets memory when first touched (in an enclave; Linux
 * grows it on faults too): deep recursion, a 6 MiB array on the stack,
 * an untouched stack buffer handed to a delegated read and to a local
 * call, a signal handler's frame far below the last touch, a fork that
 * must copy what is in use, threads first-touching the main thread's
 * stack at once, and another thread's delegated read into the main
 * stack far below its stack pointer. Prints the same lines on Linux.
 *   stack_use FILE     FILE: any readable file of at least 64 KiB
 *   stack_use race     only the threads' race (run it many times)
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BIG (6L << 20)
#define CHUNK (64L << 10)

static volatile int handled;

static void on_usr1(int sig)
{
	char mark[256];

	memset(mark, sig, sizeof(mark));
	handled = mark[255];
}

#define TOUCHERS 4
#define SHARED (2L << 20)

static unsigned char *volatile shared_stack;
static volatile int touched;

/*
 * Writes every TOUCHERS-th page of the main thread's array, bottom up: the
 * first fault gives memory to everything above it, while the others fault
 * on pages above at the same moment.
 */
static void *toucher(void *arg)
{
	long id = (long)arg;

	while (!shared_stack)
		;
	for (long page = id; page < SHARED / 4096; page += TOUCHERS)
		shared_stack[page * 4096] = (unsigned char)page;
	__atomic_add_fetch(&touched, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/*
 * The array lies below everything the main thread touched, and it makes
 * no call while the threads write it: their faults race to grow the stack.
 */
static __attribute__((noinline)) long touched_by_threads(void)
{
	unsigned char big[SHARED];
	long ok = 0;

	shared_stack = big;
	while (touched < TOUCHERS)
		;
	for (long page = 0; page < SHARED / 4096; page++)
		ok += big[page * 4096] == (unsigned char)page;
	shared_stack = NULL;
	return ok;
}

/* A frame of about 128 bytes per level. */
static __attribute__((noinline)) long depth(long n)
{
	volatile char pad[96];

	pad[0] = (char)n;
	return n ? depth(n - 1) + pad[0] : 0;
}

static unsigned long sum(const unsigned char *p, long n)
{
	unsigned long s = 0;

	for (long i = 0; i < n; i++)
		s = s * 31 + p[i];
	return s;
}

/*
 * read(fd, buf, len) with the stack pointer moved 2 MiB down by hand and
 * nothing pushed, buf at it: only the system call itself touches that
 * memory. Returns read's result; *buf_out: where it read to.
 */
static long read_below_the_stack(int fd, long len, unsigned char **buf_out)
{
	long ret;
	unsigned char *buf;

	asm volatile("mov %%rsp, %%r12\n\t"
		     "sub $0x200000, %%rsp\n\t"
		     "mov %%rsp, %%rsi\n\t"
		     "xor %%eax, %%eax\n\t"
		     "syscall\n\t"
		     "mov %%rsp, %%rsi\n\t"
		     "mov %%r12, %%rsp"
		     : "=a"(ret), "=S"(buf)
		     : "D"(fd), "d"(len)
		     : "rcx", "r11", "r12", "memory");
	*buf_out = buf;
	return ret;
}

static struct {
	int fd;
	unsigned char *buf;
	long ret;
} far_read;

static void *read_far(void *arg)
{
	far_read.ret = pread(far_read.fd, far_read.buf, CHUNK, 0);
	return arg;
}

/*
 * Another thread reads into the main stack 4 MiB below the main thread's
 * stack pointer, where nothing touched it: in an enclave Linux performs
 * the read, so it is the first to write there. Returns 0 if the bytes
 * arrived.
 */
static int other_thread_reads_far_below(int fd)
{
	unsigned char here, from_file[CHUNK];
	pthread_t t;

	if (pread(fd, from_file, CHUNK, 0) != CHUNK)
		return 1;
	far_read.fd = fd;
	far_read.buf = (unsigned char *)(((unsigned long)&here - (4L << 20)) & ~4095UL);
	if (pthread_create(&t, NULL, read_far, NULL) || pthread_join(t, NULL))
		return 1;
	printf("another thread's read 4 MiB below the main stack pointer: %ld, %s\n", far_read.ret,
	       far_read.ret == CHUNK && !memcmp(far_read.buf, from_file, CHUNK) ? "same bytes" : "differs");
	return 0;
}

/* Everything below runs with the 6 MiB array on the stack. */
static __attribute__((noinline)) int deep(const char *file)
{
	unsigned char big[BIG];
	unsigned char from_file[CHUNK];
	unsigned long expect;
	int fd, st;
	pid_t pid;

	/* Read straight into the array's untouched lowest part. */
	fd = open(file, O_RDONLY);
	if (fd < 0 || read(fd, big, CHUNK) != CHUNK || pread(fd, from_file, CHUNK, 0) != CHUNK) {
		perror("read");
		return 1;
	}
	close(fd);
	printf("delegated read into an untouched stack buffer: %s\n",
	       memcmp(big, from_file, CHUNK) ? "differs" : "same bytes");

	/* A local call's answer there too. */
	struct timespec *ts = (struct timespec *)(big + CHUNK);
	int r = clock_gettime(CLOCK_MONOTONIC, ts);

	printf("clock_gettime into it: %d, nonzero: %s\n", r, ts->tv_sec || ts->tv_nsec ? "yes" : "no");

	/* The rest, written top down, then read back. */
	for (long i = BIG - 1; i >= 2 * CHUNK; i--)
		big[i] = (unsigned char)(i * 7);
	expect = sum(big + 2 * CHUNK, BIG - 2 * CHUNK);
	printf("6 MiB array: sum %lx\n", expect);

	/* A signal handler's frame lands below everything touched so far. */
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	printf("handler ran below the array: %s\n", handled == SIGUSR1 ? "yes" : "no");

	/* A fork copies the array: the child sees the same bytes. */
	pid = fork();
	if (pid == 0)
		_exit(sum(big + 2 * CHUNK, BIG - 2 * CHUNK) == expect &&
		      !memcmp(big, from_file, CHUNK) ? 0 : 1);
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		perror("fork");
		return 1;
	}
	printf("forked child saw the array: %s\n", WIFEXITED(st) && !WEXITSTATUS(st) ? "yes" : "no");
	return 0;
}

/* The threads' race alone, first thing in a fresh process. */
static int race(void)
{
	pthread_t t[TOUCHERS];
	long ok;

	for (long i = 0; i < TOUCHERS; i++)
		pthread_create(&t[i], NULL, toucher, (void *)i);
	ok = touched_by_threads();
	for (int i = 0; i < TOUCHERS; i++)
		pthread_join(t[i], NULL);
	printf("threads first-touching the main stack at once: %ld of %ld pages\n", ok, SHARED / 4096);
	return ok != SHARED / 4096;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: stack_use FILE | stack_use race\n");
		return 2;
	}
	if (!strcmp(argv[1], "race"))
		return race();
	/* First: nothing may have touched its stack before. */
	unsigned char head[256], *below;
	int fd = open(argv[1], O_RDONLY);

	if (fd < 0 || pread(fd, head, sizeof(head), 0) != sizeof(head)) {
		perror("open");
		return 1;
	}
	long n = read_below_the_stack(fd, sizeof(head), &below);

	/* below lies under the stack pointer now: copied out at once. */
	unsigned char got[sizeof(head)];

	memcpy(got, below, sizeof(got));
	close(fd);
	printf("read into untouched stack below the stack pointer: %ld, %s\n", n,
	       n == (long)sizeof(head) && !memcmp(got, head, sizeof(head)) ? "same bytes" : "differs");
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || other_thread_reads_far_below(fd)) {
		perror("far read");
		return 1;
	}
	close(fd);
	if (deep(argv[1]))
		return 1;
	printf("recursion 40000 deep: %ld\n", depth(40000));
	printf("stack: done\n");
	return 0;
}
