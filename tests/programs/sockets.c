// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sockets and waiting on descriptors, which an enclave delegates: a Unix
 * stream listener, connect, accept4, getsockname/getpeername, a datagram
 * sendto/recvfrom, sendmsg/recvmsg with a descriptor passed, socket
 * options, TCP over loopback when it is up, epoll,
 * eventfd, timerfd and select. Prints the same on Linux and in an enclave.
 *   sockets DIR
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <unistd.h>

#define OK(call) do { if ((call) < 0) { perror(#call); return 1; } } while (0)

static socklen_t unix_addr(struct sockaddr_un *a, const char *path)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	strcpy(a->sun_path, path);
	return sizeof(*a);
}

static int unix_stream(void)
{
	struct sockaddr_un a, peer;
	socklen_t len = sizeof(peer);
	int l, c, s, rcvbuf = 0;
	char b[8] = { 0 };

	OK(l = socket(AF_UNIX, SOCK_STREAM, 0));
	OK(bind(l, (struct sockaddr *)&a, unix_addr(&a, "stream.sock")));
	OK(listen(l, 4));
	OK(c = socket(AF_UNIX, SOCK_STREAM, 0));
	OK(connect(c, (struct sockaddr *)&a, sizeof(a)));
	OK(s = accept4(l, NULL, NULL, SOCK_CLOEXEC));
	OK(getsockname(l, (struct sockaddr *)&peer, &len));
	printf("unix stream: listening on %s\n", peer.sun_path);
	OK(write(c, "hello", 5));
	OK(read(s, b, 5));
	printf("unix stream: accepted and read %s\n", b);
	len = sizeof(rcvbuf);
	OK(setsockopt(s, SOL_SOCKET, SO_RCVBUF, &(int){ 65536 }, sizeof(int)));
	OK(getsockopt(s, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &len));
	printf("socket options: rcvbuf set, len %u\n", len);
	OK(shutdown(c, SHUT_WR));
	printf("after shutdown: read %zd\n", read(s, b, 1));
	close(s);
	close(c);
	close(l);
	return unlink("stream.sock");
}

static int unix_datagram(void)
{
	struct sockaddr_un a, b, from;
	socklen_t len = sizeof(from);
	char m[8] = { 0 };
	int x, y;

	OK(x = socket(AF_UNIX, SOCK_DGRAM, 0));
	OK(y = socket(AF_UNIX, SOCK_DGRAM, 0));
	OK(bind(x, (struct sockaddr *)&a, unix_addr(&a, "x.sock")));
	OK(bind(y, (struct sockaddr *)&b, unix_addr(&b, "y.sock")));
	OK(sendto(y, "dgram", 5, 0, (struct sockaddr *)&a, sizeof(a)));
	OK(recvfrom(x, m, sizeof(m) - 1, 0, (struct sockaddr *)&from, &len));
	printf("unix datagram: %s from %s\n", m, from.sun_path);
	close(x);
	close(y);
	unlink("x.sock");
	return unlink("y.sock");
}

/* sendmsg with two iovecs and a descriptor (SCM_RIGHTS), recvmsg of both. */
static int messages(void)
{
	char one[] = "scatter ", two[] = "gather", got[32] = { 0 }, b[4] = { 0 };
	struct iovec out[2] = { { one, 8 }, { two, 6 } }, in = { got, sizeof(got) - 1 };
	union { char buf[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control = { 0 };
	struct msghdr m = { .msg_iov = out, .msg_iovlen = 2, .msg_control = control.buf,
			    .msg_controllen = sizeof(control.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int sv[2], p[2], passed;
	ssize_t n;

	OK(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv));
	OK(pipe(p));
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &p[0], sizeof(int));
	OK(sendmsg(sv[0], &m, 0));
	memset(&control, 0, sizeof(control));
	m = (struct msghdr){ .msg_iov = &in, .msg_iovlen = 1, .msg_control = control.buf,
			     .msg_controllen = sizeof(control.buf) };
	OK(n = recvmsg(sv[1], &m, 0));
	c = CMSG_FIRSTHDR(&m);
	memcpy(&passed, CMSG_DATA(c), sizeof(int));
	OK(write(p[1], "fd!", 3));
	OK(read(passed, b, 3));
	printf("sendmsg/recvmsg: %zd bytes \"%s\", a descriptor passed that reads %s\n", n, got, b);
	close(passed);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	return close(sv[1]);
}

static int tcp_loopback(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int l, c, s;
	char b[8] = { 0 };

	OK(l = socket(AF_INET, SOCK_STREAM, 0));
	OK(bind(l, (struct sockaddr *)&a, sizeof(a)));
	OK(getsockname(l, (struct sockaddr *)&a, &len));
	OK(listen(l, 1));
	OK(c = socket(AF_INET, SOCK_STREAM, 0));
	if (connect(c, (struct sockaddr *)&a, sizeof(a)) < 0) {
		printf("tcp loopback: not up\n");
		return 0;
	}
	OK(s = accept(l, NULL, NULL));
	OK(write(c, "tcp!", 4));
	OK(read(s, b, 4));
	OK(getpeername(s, (struct sockaddr *)&a, &len));
	printf("tcp loopback: read %s from %s\n", b, inet_ntoa(a.sin_addr));
	close(s);
	close(c);
	return close(l);
}

static int waiting(void)
{
	/* Long enough to be still armed at the next delegated call on a slow host. */
	struct itimerspec soon = { .it_value = { 0, 200000000 } }, left;
	struct epoll_event ev = { .events = EPOLLIN }, got[4];
	struct timeval none = { 0, 0 };
	uint64_t n = 5, value = 0, ticks = 0;
	int e, t, ep, ready;
	fd_set rd;

	OK(e = eventfd(0, EFD_CLOEXEC));
	OK(t = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC));
	OK(ep = epoll_create1(EPOLL_CLOEXEC));
	ev.data.fd = e;
	OK(epoll_ctl(ep, EPOLL_CTL_ADD, e, &ev));
	ev.data.fd = t;
	OK(epoll_ctl(ep, EPOLL_CTL_ADD, t, &ev));
	OK(write(e, &n, sizeof(n)));
	ready = epoll_wait(ep, got, 4, 1000);
	printf("epoll: %d ready, the eventfd %s\n", ready, got[0].data.fd == e ? "first" : "not first");
	OK(read(e, &value, sizeof(value)));
	printf("eventfd: %llu\n", (unsigned long long)value);
	OK(timerfd_settime(t, 0, &soon, NULL));
	OK(timerfd_gettime(t, &left));
	ready = epoll_pwait(ep, got, 4, 1000, NULL);
	OK(read(t, &ticks, sizeof(ticks)));
	printf("timerfd: %d ready, %llu expiry, armed %s\n", ready, (unsigned long long)ticks,
	       left.it_value.tv_nsec > 0 ? "yes" : "no");
	FD_ZERO(&rd);
	FD_SET(e, &rd);
	printf("select on an empty eventfd: %d\n", select(e + 1, &rd, NULL, NULL, &none));
	OK(epoll_ctl(ep, EPOLL_CTL_DEL, t, NULL));
	close(ep);
	close(t);
	return close(e);
}

int main(int argc, char **argv)
{
	if (argc != 2 || chdir(argv[1])) {
		fprintf(stderr, "usage: sockets DIR\n");
		return 2;
	}
	if (unix_stream() || unix_datagram() || messages() || tcp_loopback() || waiting())
		return 1;
	printf("done\n");
	return 0;
}
