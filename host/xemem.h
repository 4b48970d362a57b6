/* SPDX-License-Identifier: GPL-2.0-only */
/* XEMEM segments, grants and attachments: shared by host/xemem*.c. */
#ifndef ATOLL_XEMEM_H
#define ATOLL_XEMEM_H

#include <linux/cred.h>
#include <linux/list.h>
#include <linux/workqueue.h>
#include "atoll.h"

/* Who holds a segment, a grant or an attachment. */
struct xemem_holder {
	struct atoll_enclave *e;	/* NULL: a Linux process */
	u32 area;			/* in e: the program's area and pid */
	u32 pid;
	const void *file;		/* on Linux: its /dev/atoll file (NULL for attachments) */
	kuid_t uid;
	kgid_t gid;
	bool admin;			/* CAP_SYS_ADMIN on Linux; in an LWK, run by root */
};

struct xemem_seg {
	struct list_head node;
	s64 segid;
	char name[ATOLL_XEMEM_NAME_LEN];
	struct xemem_holder owner;
	u32 mode;			/* who may get it, as a file's mode */
	u64 vaddr;
	u64 size;
	u64 pin;			/* in the owner's LWK */
	u64 *phys;			/* each 4 KiB page's frame */
	struct page **pages;		/* a Linux owner's, pinned */
	struct user_struct *locked_by;	/* charged npages of RLIMIT_MEMLOCK for them */
	u32 npages;
	bool removed;			/* no new grants or attachments */
	bool kept;			/* outlives its owner (KEEP) */
	bool owner_ended;		/* kept, and its owner ended: owner.file is NULL */
	bool owner_gone;		/* its enclave was destroyed */
	bool frames_gone;		/* unpinned: the owner may reuse them */
	u32 attachments;		/* not revoked: they may map the frames */
	u32 holds;			/* grants and attachments pointing here */
};

struct xemem_grant {
	struct list_head node;
	s64 apid;
	struct xemem_seg *seg;
	struct xemem_holder holder;
	bool writable;
};

struct xemem_att {
	struct list_head node;
	u64 id;
	struct xemem_seg *seg;
	struct xemem_holder holder;
	u64 offset;
	u64 size;
	bool writable;
	bool revoked;			/* faults give SIGBUS (under the map lock) */
	bool unconfirmed;		/* revocation unconfirmed: the frames stay pinned */
	/* In an LWK: `atoll run`'s mirror may map the frames for delegated calls. */
	struct atoll_mirror_grant *grant;
	/* On Linux: the process's mapping. */
	struct mm_struct *mm;		/* mmgrab'ed */
	unsigned long start;
	atomic_t vmas;			/* VMAs mapping it (an mremap copies one for a moment) */
	bool mapped;			/* a VMA took it: its last close frees it */
	struct work_struct closed;	/* its last VMA closed: forget it */
};

/* xemem.c: the registry; every call but atoll_xemem_fault under xemem_lock. */
extern struct mutex xemem_lock;
extern wait_queue_head_t xemem_revoke_wq;
extern struct workqueue_struct *xemem_wq;	/* ordered: LWK requests, closed VMAs */
s64 xemem_make(struct xemem_holder *h, struct atoll_xemem_io *io,
	       const struct atoll_xemem_req *lwk);
int xemem_remove(struct xemem_holder *h, s64 segid);
int xemem_keep(struct xemem_holder *h, s64 segid);
s64 xemem_get(struct xemem_holder *h, s64 segid, u32 flags);
int xemem_release(struct xemem_holder *h, s64 apid);
struct xemem_att *xemem_attach(struct xemem_holder *h, struct atoll_xemem_io *io);
int xemem_detach_lwk(struct xemem_holder *h, u64 id);
void xemem_att_free(struct xemem_att *a);
s64 xemem_lookup(const char *name);
void xemem_holder_gone(struct xemem_holder *h);
void xemem_enclave_gone(struct atoll_enclave *e);

/* xemem_map.c: attachments on Linux, mapped into the caller's process */
long xemem_map_attach(struct xemem_att *a, u64 vaddr, bool *owned);
void xemem_map_zap(struct xemem_att *a);
int xemem_map_detach(u64 vaddr);

/* xemem_event.c: signalled segments, from ioctls and the message interrupt */
int xemem_event_open(struct xemem_seg *s);
void xemem_event_close(s64 segid);
void xemem_event_enclave_gone(struct atoll_enclave *e);
int xemem_event_signal(s64 segid, kuid_t uid, kgid_t gid);
int xemem_event_wait(s64 segid, kuid_t uid, kgid_t gid, s32 timeout_ms);
void xemem_event_signal_lwk(struct atoll_enclave *e, u64 id, s64 segid, kuid_t uid, kgid_t gid);
void xemem_event_wait_lwk(struct atoll_enclave *e, u64 id, s64 segid, kuid_t uid, kgid_t gid);
void xemem_event_cancel(struct atoll_enclave *e, u64 id, s64 segid);
void xemem_event_on_reply(struct atoll_enclave *e, const struct atoll_kmsg *m);
void xemem_event_exit(void);

/* xemem_lwk.c: the LWKs' requests (its entry points are in atoll.h) */

#endif /* ATOLL_XEMEM_H */
