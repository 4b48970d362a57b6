/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Atoll's XEMEM: memory shared between programs anywhere on the node, in an
 * Atoll enclave or on Linux, with XPMEM's calls and types, so that code
 * written for XPMEM builds against it unchanged. Link with -lxpmem (static
 * or shared); the same binary works in an enclave and on Linux.
 *
 *   segid = xpmem_make(buf, len, XPMEM_PERMIT_MODE, (void *)0600);
 *   apid  = xpmem_get(segid, XPMEM_RDWR, XPMEM_PERMIT_MODE, NULL);
 *   p     = xpmem_attach((struct xpmem_addr){ apid, 0 }, len, NULL);
 *   ... p maps the very frames of buf ...
 *   xpmem_detach(p); xpmem_release(apid); xpmem_remove(segid);
 *
 * Failures return -1 ((void *)-1 for xpmem_attach) with errno set.
 * Where Atoll differs from XPMEM, see the README ("XEMEM").
 */
#ifndef ATOLL_XPMEM_H
#define ATOLL_XPMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int64_t xpmem_segid_t;	/* a segment, from xpmem_make() */
typedef int64_t xpmem_apid_t;	/* a grant to attach it, from xpmem_get() */

struct xpmem_addr {
	xpmem_apid_t apid;	/* the grant */
	off_t offset;		/* bytes into the segment (a page multiple) */
};

#define XPMEM_MAXADDR_SIZE	((size_t)-1L)

/* xpmem_get()'s flags. */
#define XPMEM_RDONLY	0x1
#define XPMEM_RDWR	0x2

/* xpmem_make()'s permit_type: permit_value is a file mode, (void *)0600. */
#define XPMEM_PERMIT_MODE	0x1

int xpmem_version(void);
xpmem_segid_t xpmem_make(void *vaddr, size_t size, int permit_type, void *permit_value);
int xpmem_remove(xpmem_segid_t segid);
xpmem_apid_t xpmem_get(xpmem_segid_t segid, int flags, int permit_type, void *permit_value);
int xpmem_release(xpmem_apid_t apid);
void *xpmem_attach(struct xpmem_addr addr, size_t size, void *vaddr);
int xpmem_detach(void *vaddr);

/*
 * XEMEM's name service: a segment made with a name (up to 63 bytes,
 * unique on the node) is found by it from anywhere.
 */
xpmem_segid_t xemem_make(void *vaddr, size_t size, int permit_type, void *permit_value,
			 const char *name);
xpmem_segid_t xemem_lookup_segid(const char *name);

/*
 * A segment outlives its owner when the owner asks (xemem_keep, the owner
 * only): its frames stay when the owner unmaps them or ends, until
 * xpmem_remove by the owner, or once it ended by its user or root
 * (`atoll remove-segment`), or until its enclave is destroyed.
 * 0, or -1 with errno ENOENT or EPERM.
 */
int xemem_keep(xpmem_segid_t segid);

/*
 * Signalled segments: each segment has an event count. xemem_signal adds
 * one and wakes a waiter (an IPI to its kernel); xemem_wait takes one,
 * blocking up to timeout_ms (-1: for ever) until there is one: 0, or -1
 * with errno ETIMEDOUT, EIDRM (the segment was removed, or its owner or
 * enclave is gone) or EINTR. Whoever may get the segment may use both.
 */
int xemem_signal(xpmem_segid_t segid);
int xemem_wait(xpmem_segid_t segid, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* ATOLL_XPMEM_H */
