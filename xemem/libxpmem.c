// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * xpmem.h's calls: each fills a struct atoll_xemem_io and makes the LWK's
 * system call ATOLL_SYS_XEMEM; on Linux, where that call does not exist
 * (ENOSYS), the same struct goes to /dev/atoll's ATOLL_IOC_XEMEM.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "atoll_abi.h"
#include "xpmem.h"

#define XEMEM_VERSION	0x00010000	/* this library's interface, 1.0 */

/* /dev/atoll, opened on first use on Linux. */
static int dev_fd = -1;

static int device(void)
{
	int fd = __atomic_load_n(&dev_fd, __ATOMIC_ACQUIRE), expected = -1;

	if (fd >= 0)
		return fd;
	fd = open("/dev/atoll", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!__atomic_compare_exchange_n(&dev_fd, &expected, fd, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		close(fd);	/* another thread opened it first */
		fd = expected;
	}
	return fd;
}

static int call(struct atoll_xemem_io *io)
{
	int fd;

	io->hdr = (struct atoll_header){ ATOLL_MAGIC_XEMEM, ATOLL_ABI_VERSION, sizeof(*io), 0 };
	if (syscall(ATOLL_SYS_XEMEM, io) == 0)
		return 0;
	if (errno != ENOSYS)
		return -1;
	fd = device();
	if (fd < 0)
		return -1;
	return ioctl(fd, ATOLL_IOC_XEMEM, io);
}

static int set_name(struct atoll_xemem_io *io, const char *name)
{
	if (!name)
		return 0;
	if (strlen(name) >= sizeof(io->name)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(io->name, name);
	return 0;
}

int xpmem_version(void)
{
	return XEMEM_VERSION;
}

xpmem_segid_t xemem_make(void *vaddr, size_t size, int permit_type, void *permit_value,
			 const char *name)
{
	struct atoll_xemem_io io = { .op = ATOLL_XEMEM_MAKE, .vaddr = (uintptr_t)vaddr,
				     .size = size, .mode = (uintptr_t)permit_value };

	if (permit_type != XPMEM_PERMIT_MODE || (uintptr_t)permit_value > 0777) {
		errno = EINVAL;
		return -1;
	}
	if (set_name(&io, name) || call(&io))
		return -1;
	return io.segid;
}

xpmem_segid_t xpmem_make(void *vaddr, size_t size, int permit_type, void *permit_value)
{
	return xemem_make(vaddr, size, permit_type, permit_value, NULL);
}

xpmem_segid_t xemem_lookup_segid(const char *name)
{
	struct atoll_xemem_io io = { .op = ATOLL_XEMEM_LOOKUP };

	if (!name || !name[0]) {
		errno = EINVAL;
		return -1;
	}
	if (set_name(&io, name) || call(&io))
		return -1;
	return io.segid;
}

int xemem_signal(xpmem_segid_t segid)
{
	struct atoll_xemem_io io = { .op = ATOLL_XEMEM_SIGNAL, .segid = segid };

	return call(&io);
}

int xemem_wait(xpmem_segid_t segid, int timeout_ms)
{
	struct atoll_xemem_io io = { .op = ATOLL_XEMEM_WAIT, .segid = segid,
				     .timeout_ms = timeout_ms };

	return call(&io);
}

int xpmem_remove(xpmem_segid_t segid)
{
	struct atoll_xemem_io io = { .op = ATOLL_XEMEM_REMOVE, .segid = segid };

	return call(&io);
}

int xemem_keep(xpmem_segid_t segid)
{
	struct atoll_xemem_io io = { .op = ATOLL_XEMEM_KEEP, .segid = segid };

	return call(&io);
}

xpmem_apid_t xpmem_get(xpmem_segid_t segid, int flags, int permit_type, void *permit_value)
{
	struct atoll_xemem_io io = { .op = ATOLL_XEMEM_GET, .segid = segid, .flags = flags };

	(void)permit_type;	/* as in XPMEM: the segment's mode decides */
	(void)permit_value;
	if (call(&io))
		return -1;
	return io.apid;
}

int xpmem_release(xpmem_apid_t apid)
{
	struct atoll_xemem_io io = { .op = ATOLL_XEMEM_RELEASE, .apid = apid };

	return call(&io);
}

void *xpmem_attach(struct xpmem_addr addr, size_t size, void *vaddr)
{
	struct atoll_xemem_io io = { .op = ATOLL_XEMEM_ATTACH, .apid = addr.apid,
				     .offset = addr.offset, .size = size,
				     .vaddr = (uintptr_t)vaddr };

	if (call(&io))
		return (void *)-1;
	return (void *)(uintptr_t)io.vaddr;
}

int xpmem_detach(void *vaddr)
{
	struct atoll_xemem_io io = { .op = ATOLL_XEMEM_DETACH, .vaddr = (uintptr_t)vaddr };

	return call(&io);
}
