// SPDX-License-Identifier: GPL-2.0-only
/*
 * The module's own gate, without the CLI's checks in front of it: run by a
 * user who is not enclave ID's owner, every ioctl on that enclave must be
 * refused (EACCES for what its owner may do, EPERM for root's), and
 * IOC_INFO must tell only its id, state, name and owner.
 *   not_yours ID        prints a line per ioctl; exits 0 when all were refused
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "atoll_abi.h"

static int failures;

#define NEW(type, var, magic) \
	type var; \
	memset(&var, 0, sizeof(var)); \
	var.hdr = (struct atoll_header){ magic, ATOLL_ABI_VERSION, sizeof(var), 0 }

static void expect(const char *what, long ret, int want, const char *err)
{
	int ok = ret < 0 && errno == want;

	printf("%s: %s (%s)%s%s\n", what, ok ? "refused" : "NOT REFUSED AS EXPECTED",
	       ret < 0 ? strerror(errno) : "succeeded", err && *err ? ": " : "", err ? err : "");
	failures += !ok;
}

int main(int argc, char **argv)
{
	char buf[64];
	int fd;
	__u32 id;

	if (argc != 2)
		return 2;
	id = strtoul(argv[1], NULL, 0);
	fd = open("/dev/atoll", O_RDWR);
	if (fd < 0) {
		perror("/dev/atoll");
		return 1;
	}
	{
		NEW(struct atoll_enclave_info, r, ATOLL_MAGIC_INFO);
		if (ioctl(fd, ATOLL_IOC_INFO, &r) < 0) {
			perror("info");
			return 1;
		}
		printf("info: id %u name %s owner %u:%u yours %u cpus %u blocks %u programs %u\n",
		       r.id, r.name, r.owner_uid, r.owner_gid, r.yours, r.cpu_count, r.mem_count,
		       r.programs);
		failures += r.yours || r.cpu_count || r.mem_count || r.cpus[0] || r.uptime_ns;
	}
	{
		NEW(struct atoll_console_read, r, ATOLL_MAGIC_CONSREAD);
		r.id = id;
		r.buf_ptr = (__u64)(unsigned long)buf;
		r.buf_len = sizeof(buf);
		expect("console", ioctl(fd, ATOLL_IOC_CONSOLE, &r), EACCES, NULL);
	}
	{
		NEW(struct atoll_ping, r, ATOLL_MAGIC_PING);
		r.id = id;
		expect("ping", ioctl(fd, ATOLL_IOC_PING, &r), EACCES, NULL);
	}
	{
		NEW(struct atoll_programs, r, ATOLL_MAGIC_PROGRAMS);
		r.id = id;
		expect("programs", ioctl(fd, ATOLL_IOC_PROGRAMS, &r), EACCES, NULL);
	}
	{
		NEW(struct atoll_run, r, ATOLL_MAGIC_RUN);
		r.id = id;
		expect("run", ioctl(fd, ATOLL_IOC_RUN, &r), EACCES, r.error);
	}
	{
		NEW(struct atoll_adopt, r, ATOLL_MAGIC_ADOPT);
		r.id = id;
		r.pid = 1;
		r.token = 1;
		expect("adopt", ioctl(fd, ATOLL_IOC_ADOPT, &r), EACCES, r.error);
	}
	{
		NEW(struct atoll_msg_io, r, ATOLL_MAGIC_MSG);
		r.kernel = id;
		r.port = 1;
		r.buf_ptr = (__u64)(unsigned long)buf;
		r.len = 1;
		expect("message", ioctl(fd, ATOLL_IOC_MSG_SEND, &r), EACCES, NULL);
	}
	{
		NEW(struct atoll_destroy, r, ATOLL_MAGIC_DESTROY);
		r.id = id;
		expect("destroy", ioctl(fd, ATOLL_IOC_DESTROY, &r), EPERM, r.error);
	}
	{
		NEW(struct atoll_chown, r, ATOLL_MAGIC_CHOWN);
		r.id = id;
		r.uid = getuid();
		r.gid = getgid();
		expect("chown", ioctl(fd, ATOLL_IOC_CHOWN, &r), EPERM, r.error);
	}
	{
		NEW(struct atoll_resize, r, ATOLL_MAGIC_RESIZE);
		r.id = id;
		r.op = ATOLL_RESIZE_ADD_MEM;
		r.bytes = 128 << 20;
		expect("resize", ioctl(fd, ATOLL_IOC_RESIZE, &r), EPERM, r.error);
	}
	{
		NEW(struct atoll_noise_req, r, ATOLL_MAGIC_NOISE);
		r.id = id;
		r.probe = ATOLL_NOISE_SELFISH;
		r.duration_ns = 1000000;
		expect("noise", ioctl(fd, ATOLL_IOC_NOISE, &r), EPERM, r.error);
	}
	printf("%s\n", failures ? "SOME WERE NOT REFUSED" : "all refused");
	return failures ? 1 : 0;
}
