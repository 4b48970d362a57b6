// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pipes as pipe(7) defines them; prints the same lines on Linux and in an
 * enclave (where a pipe between programs of the enclave keeps its bytes in
 * the LWK until something needs Linux to see it):
 * bytes between threads in order, a long transfer in odd-sized pieces,
 * readv/writev, end of file once a forked writer ends, EPIPE with SIGPIPE
 * (ignored and caught), O_NONBLOCK (EAGAIN, the capacity Linux reports,
 * short writes all or nothing), a read cut short by a signal, bytes
 * written before poll(), an open of /proc/self/fd/N or a dup'ed fd, a read
 * end handed over a socket (SCM_RIGHTS), a child opening its parent's end
 * by /proc/<ppid>/fd/N, and a child that dup2()s the pipe onto its stdout
 * and execs echo.
 * `pipes rounds N` only does N one-byte round trips between two threads
 * (the enclave's test counts the calls that reached Linux).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define LONG_BYTES (1 << 20)

static int to_echo[2], from_echo[2];
static long echo_rounds;

/* Sends each byte back, one more than it came. */
static void *echo(void *unused)
{
	unsigned char c;
	long i;

	(void)unused;
	for (i = 0; i < echo_rounds; i++) {
		if (read(to_echo[0], &c, 1) != 1)
			break;
		c++;
		if (write(from_echo[1], &c, 1) != 1)
			break;
	}
	return NULL;
}

static long round_trips(long rounds)
{
	pthread_t t;
	long i, bad = 0;

	if (pipe(to_echo) || pipe(from_echo))
		return -1;
	echo_rounds = rounds;
	pthread_create(&t, NULL, echo, NULL);
	for (i = 0; i < rounds; i++) {
		unsigned char c = (unsigned char)i, back = 0;

		if (write(to_echo[1], &c, 1) != 1 || read(from_echo[0], &back, 1) != 1 ||
		    back != (unsigned char)(c + 1))
			bad++;
	}
	pthread_join(t, NULL);
	close(to_echo[0]);
	close(to_echo[1]);
	close(from_echo[0]);
	close(from_echo[1]);
	return bad;
}

static int long_fds[2];

/* Writes LONG_BYTES of a counting pattern in pieces of 10007 bytes. */
static void *long_writer(void *unused)
{
	static unsigned char buf[10007];
	long sent = 0;

	(void)unused;
	while (sent < LONG_BYTES) {
		long n = LONG_BYTES - sent < (long)sizeof(buf) ? LONG_BYTES - sent : (long)sizeof(buf);
		long i;

		for (i = 0; i < n; i++)
			buf[i] = (unsigned char)((sent + i) * 7);
		if (write(long_fds[1], buf, n) != n)
			break;
		sent += n;
	}
	close(long_fds[1]);
	return NULL;
}

static void long_transfer(void)
{
	static unsigned char buf[3001];
	long got = 0, bad = 0, i;
	ssize_t n;
	pthread_t t;

	CHECK(pipe(long_fds) == 0, "pipe");
	pthread_create(&t, NULL, long_writer, NULL);
	while ((n = read(long_fds[0], buf, sizeof(buf))) > 0) {
		for (i = 0; i < n; i++)
			bad += buf[i] != (unsigned char)((got + i) * 7);
		got += n;
	}
	pthread_join(t, NULL);
	close(long_fds[0]);
	printf("long transfer: %ld bytes, %ld wrong, then end of file (%zd)\n", got, bad, n);
}

static void vectored(void)
{
	int p[2];
	char a[4] = "", b[8] = "", rest[8] = "";
	struct iovec out[3] = { { "one", 3 }, { "", 0 }, { "-two", 4 } };
	struct iovec in[2] = { { a, 3 }, { b, sizeof(b) - 1 } };
	struct iovec faulty[2] = { { a, 3 }, { (void *)8, 3 } };
	ssize_t w, r;

	CHECK(pipe(p) == 0, "pipe");
	w = writev(p[1], out, 3);
	r = readv(p[0], in, 2);
	printf("writev %zd, readv %zd: '%s' '%s'\n", w, r, a, b);
	/* The second buffer faults: EFAULT, and the bytes stay in the pipe. */
	CHECK(write(p[1], "abcdef", 6) == 6, "write");
	r = readv(p[0], faulty, 2);
	printf("readv into a good and a bad buffer: %zd '%.3s', then '%.*s' left\n", r, a,
	       (int)read(p[0], rest, sizeof(rest)), rest);
	/* Python asks isatty() of its streams: a pipe is not a terminal. */
	errno = 0;
	r = isatty(p[0]);
	printf("isatty: %zd %s\n", r, errno == ENOTTY ? "ENOTTY" : errno_name(errno));
	close(p[0]);
	close(p[1]);
}

static void end_of_file(void)
{
	int p[2], status;
	char buf[32] = "";
	ssize_t n, more;
	pid_t child;

	CHECK(pipe(p) == 0, "pipe");
	child = fork();
	if (child == 0) {
		close(p[0]);
		if (write(p[1], "from the child", 14) != 14)
			_exit(1);
		_exit(0); /* its write end closes with it */
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	more = read(p[0], buf + n, 1);
	waitpid(child, &status, 0);
	printf("fork: read %zd '%s', then %zd (end of file), child status %d\n", n, buf, more,
	       WEXITSTATUS(status));
	close(p[0]);
}

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	caught = sig;
}

static void broken(void)
{
	int p[2];
	ssize_t n;

	CHECK(pipe(p) == 0, "pipe");
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	n = write(p[1], "x", 1);
	printf("no reader, SIGPIPE ignored: %zd %s\n", n, n < 0 && errno == EPIPE ? "EPIPE" : "?");
	signal(SIGPIPE, on_signal);
	caught = 0;
	n = write(p[1], "x", 1);
	printf("no reader, SIGPIPE caught: %zd %s, signal %d\n", n, n < 0 && errno == EPIPE ? "EPIPE" : "?",
	       (int)caught);
	close(p[1]);
	signal(SIGPIPE, SIG_DFL);
}

static void nonblocking(void)
{
	static char buf[1 << 16];
	int p[2], size;
	long total = 0;
	ssize_t n;

	CHECK(pipe2(p, O_NONBLOCK) == 0, "pipe2");
	n = read(p[0], buf, 1);
	printf("empty, O_NONBLOCK: read %zd %s\n", n, n < 0 && errno == EAGAIN ? "EAGAIN" : "?");
	size = fcntl(p[1], F_GETPIPE_SZ);
	/* Fill it to 10 bytes short of full. */
	while (total < size - 10) {
		long want = size - 10 - total < (long)sizeof(buf) ? size - 10 - total : (long)sizeof(buf);

		n = write(p[1], buf, want);
		if (n <= 0)
			break;
		total += n;
	}
	n = write(p[1], buf, 100);
	printf("10 bytes of room, a 100-byte write: %zd %s\n", n, n < 0 && errno == EAGAIN ? "EAGAIN" : "?");
	n = write(p[1], buf, 10);
	printf("a 10-byte write: %zd; full at the capacity: %s\n", n, total + n == size ? "yes" : "no");
	close(p[0]);
	close(p[1]);

	CHECK(pipe(p) == 0, "pipe");
	CHECK(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0, "F_SETFL");
	n = read(p[0], buf, 1);
	printf("F_SETFL O_NONBLOCK: read %zd %s, flags say %s\n", n, n < 0 && errno == EAGAIN ? "EAGAIN" : "?",
	       fcntl(p[0], F_GETFL) & O_NONBLOCK ? "O_NONBLOCK" : "blocking");
	close(p[0]);
	close(p[1]);
}

static void interrupted(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct itimerval in_50ms = { .it_value = { 0, 50000 } };
	int p[2];
	char c;
	ssize_t n;

	CHECK(pipe(p) == 0, "pipe");
	sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART */
	caught = 0;
	setitimer(ITIMER_REAL, &in_50ms, NULL);
	n = read(p[0], &c, 1);
	printf("blocked read, a signal: %zd %s, signal %d\n", n, n < 0 && errno == EINTR ? "EINTR" : "?",
	       (int)caught);
	close(p[0]);
	close(p[1]);
}

static void seen_by_linux(void)
{
	int p[2], again, copy, ready;
	char buf[16] = "", path[64];
	struct pollfd pf;
	ssize_t n;

	CHECK(pipe(p) == 0, "pipe");
	CHECK(write(p[1], "before", 6) == 6, "write");
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	ready = poll(&pf, 1, 1000);
	printf("poll after a write: %d, %s\n", ready, pf.revents & POLLIN ? "POLLIN" : "-");
	n = read(p[0], buf, sizeof(buf) - 1);
	printf("then read %zd '%s'\n", n, buf);
	CHECK(write(p[1], "after", 5) == 5, "write");
	memset(buf, 0, sizeof(buf));
	n = read(p[0], buf, sizeof(buf) - 1);
	printf("after poll: read %zd '%s'\n", n, buf);
	close(p[0]);
	close(p[1]);

	CHECK(pipe(p) == 0, "pipe");
	copy = dup(p[1]);
	CHECK(write(copy, "via /proc", 9) == 9, "write");
	close(copy);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[0]);
	again = open(path, O_RDONLY);
	memset(buf, 0, sizeof(buf));
	n = read(again, buf, sizeof(buf) - 1);
	printf("written through a dup, read through %s: %zd '%s'\n", again >= 0 ? "/proc/self/fd" : "?", n, buf);
	close(again);
	close(p[0]);
	close(p[1]);
}

/* Sends descriptor `fd` over socket `s`, and receives one. */
static void send_fd(int s, int fd)
{
	char space[CMSG_SPACE(sizeof(int))] = { 0 }, byte = 'f';
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = space,
			    .msg_controllen = sizeof(space) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	CHECK(sendmsg(s, &m, 0) == 1, "sendmsg");
}

static int recv_fd(int s)
{
	char space[CMSG_SPACE(sizeof(int))] = { 0 }, byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = space,
			    .msg_controllen = sizeof(space) };
	int fd = -1;

	if (recvmsg(s, &m, 0) == 1 && CMSG_FIRSTHDR(&m))
		memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof(int));
	return fd;
}

static void handed_over(void)
{
	int p[2], sv[2], got, status;
	char buf[16] = "", path[64];
	ssize_t n;
	pid_t child;

	CHECK(pipe(p) == 0, "pipe");
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
	CHECK(write(p[1], "handed over", 11) == 11, "write");
	send_fd(sv[0], p[0]);
	got = recv_fd(sv[1]);
	close(p[0]);
	n = read(got, buf, sizeof(buf) - 1);
	printf("read end sent over a socket: read %zd '%s'\n", n, buf);
	close(got);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);

	CHECK(pipe(sv) == 0, "pipe");
	/* The parent's read end: written in the parent, opened by the child. */
	CHECK(write(sv[1], "parent's end", 12) == 12, "write");
	child = fork();
	if (child == 0) {
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getppid(), sv[0]);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		printf("the child read %zd '%s' through /proc/<ppid>/fd\n", n, buf);
		_exit(0);
	}
	waitpid(child, &status, 0);
	close(sv[0]);
	close(sv[1]);
}

static void exec_child(void)
{
	int p[2], status;
	char buf[64] = "";
	ssize_t n, got = 0;
	pid_t child;

	CHECK(pipe2(p, O_CLOEXEC) == 0, "pipe2");
	child = fork();
	if (child == 0) {
		dup2(p[1], 1);
		execl("/bin/echo", "echo", "from an exec'ed echo", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += n;
	waitpid(child, &status, 0);
	printf("exec: read '%.*s', then end of file, status %d\n", (int)got - 1, buf, WEXITSTATUS(status));
	close(p[0]);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "rounds")) {
		long bad = round_trips(atol(argv[2]));

		printf("round trips: %s wrong bytes\n", bad == 0 ? "no" : "some");
		return bad != 0;
	}
	printf("round trips between threads: %ld wrong bytes\n", round_trips(2000));
	long_transfer();
	vectored();
	end_of_file();
	broken();
	nonblocking();
	interrupted();
	seen_by_linux();
	handed_over();
	exec_child();
	return check_failures != 0;
}
