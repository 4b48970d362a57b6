// SPDX-License-Identifier: GPL-2.0-only
/*
 * A kernel-mode program's system calls by CALL (the entry
 * SYS_HRT_DIRECT_CALL gives): getpid and write give what SYSCALL gives,
 * and a read on an empty pipe that a SA_RESTART handler interrupts is made
 * again and returns once a thread writes. In ring 3 (or on Linux) it
 * prints why there is none.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atoll_abi.h"

static unsigned long entry;
static volatile int handled;
static int pipe_fds[2];

/* Below the red zone first: the CALL pushes its return address. */
static long direct(long nr, long a0, long a1, long a2)
{
	long ret;

	__asm__ volatile("sub $128, %%rsp\n"
			 "call *%[entry]\n"
			 "add $128, %%rsp"
			 : "=a"(ret)
			 : "a"(nr), "D"(a0), "S"(a1), "d"(a2), [entry] "r"(entry)
			 : "rcx", "r11", "memory");
	return ret;
}

static void on_alarm(int sig)
{
	(void)sig;
	handled++;
}

static void *late_writer(void *arg)
{
	(void)arg;
	sleep(2);
	if (write(pipe_fds[1], "x", 1) != 1)
		perror("write");
	return NULL;
}

int main(void)
{
	long at = syscall(ATOLL_SYS_HRT_DIRECT_CALL);
	struct sigaction sa;
	pthread_t writer;
	char c = 0;
	long n;

	if (at == -1) {
		printf("direct call: none (%s)\n", strerror(errno));
		return 0;
	}
	entry = at;
	printf("direct call: getpid %s\n", direct(SYS_getpid, 0, 0, 0) == getpid() ? "same" : "differs");
	fflush(stdout);
	n = direct(SYS_write, 1, (long)"direct call: write works\n", 25);
	printf("direct call: write returned %ld\n", n);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	if (pipe(pipe_fds) || sigaction(SIGALRM, &sa, NULL) ||
	    pthread_create(&writer, NULL, late_writer, NULL))
		return 1;
	alarm(1);
	n = direct(SYS_read, pipe_fds[0], (long)&c, 1);
	pthread_join(writer, NULL);
	printf("direct call: restarted read returned %ld (%c) after %d handler run(s)\n", n, c, handled);
	return 0;
}
