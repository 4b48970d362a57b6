/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Messages between programs, for programs that want them (abi/atoll_abi.h,
 * "Messages between programs"): the same two calls in an enclave (the
 * LWK's system calls) and on Linux (ioctls of /dev/atoll).
 *
 *   atoll_msg_send(kernel, port, from_port, buf, len)   0, or -1 with errno
 *   atoll_msg_recv(port, buf, len, &from, timeout_ms)   bytes, or -1 with errno
 *
 * kernel 0 is Linux, any other number the enclave with that id; ports are
 * 0 .. ATOLL_MSG_PORTS - 1; timeout_ms -1 waits for ever (ETIMEDOUT after
 * a timeout). A program sends from a port of its own so answers can find it.
 */
#ifndef ATOLL_MSG_H
#define ATOLL_MSG_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "atoll_abi.h"

/* /dev/atoll, opened on first use on Linux; -1 in an enclave. */
static int atoll_msg_dev_fd = -2;

static inline int atoll_msg_dev(void)
{
	if (atoll_msg_dev_fd == -2)
		atoll_msg_dev_fd = open("/dev/atoll", O_RDWR | O_CLOEXEC);
	return atoll_msg_dev_fd;
}

/* The ioctl on Linux, where the LWK's system call does not exist. */
static inline long atoll_msg_ioctl(unsigned long cmd, struct atoll_msg_io *io)
{
	int fd = atoll_msg_dev();

	io->hdr = (struct atoll_header){ ATOLL_MAGIC_MSG, ATOLL_ABI_VERSION, sizeof(*io), 0 };
	if (fd < 0)
		return -1;
	return ioctl(fd, cmd, io);
}

static inline int atoll_msg_send(unsigned int kernel, unsigned int port, unsigned int from_port,
				 const void *buf, size_t len)
{
	struct atoll_msg_io io = { .kernel = kernel, .port = port, .src_port = from_port,
				   .buf_ptr = (uintptr_t)buf, .len = len };
	long r = syscall(ATOLL_SYS_MSG_SEND, kernel, port, from_port, buf, len);

	if (r != -1 || errno != ENOSYS)
		return r;
	return atoll_msg_ioctl(ATOLL_IOC_MSG_SEND, &io);
}

static inline long atoll_msg_recv(unsigned int port, void *buf, size_t len,
				  struct atoll_msg_from *from, int timeout_ms)
{
	struct atoll_msg_io io = { .port = port, .buf_ptr = (uintptr_t)buf, .len = len,
				   .timeout_ms = timeout_ms };
	long r = syscall(ATOLL_SYS_MSG_RECV, port, buf, len, from, timeout_ms);

	if (r != -1 || errno != ENOSYS)
		return r;
	if (atoll_msg_ioctl(ATOLL_IOC_MSG_RECV, &io) < 0)
		return -1;
	from->kernel = io.kernel;
	from->port = io.src_port;
	return io.len;
}

#endif /* ATOLL_MSG_H */
