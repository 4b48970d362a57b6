// SPDX-License-Identifier: GPL-2.0-only
/*
 * XEMEM's registry (abi/atoll_abi.h, "XEMEM"): every segment on the node,
 * the grants (apids) that let a program attach one, and the attachments
 * that map it, whoever holds them: a Linux process (ATOLL_IOC_XEMEM,
 * here) or a program in an enclave (its LWK's requests, xemem_lwk.c).
 * A segment's frames stay pinned while any attachment may map them.
 * Removing a segment (xpmem_remove, its owner ending, its enclave being
 * destroyed) revokes every attachment first, so nobody maps a frame its
 * owner may reuse. A segment its owner asked to keep outlives the owner
 * (its frames stay pinned) until its owner's user or root removes it, or
 * its enclave is destroyed.
 */
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/io.h>
#include <asm/unaligned.h>
#include "xemem.h"

#define XEMEM_REVOKE_WAIT_MS	2000

/* The registry: segs, grants, atts and every struct on them. */
DEFINE_MUTEX(xemem_lock);
DECLARE_WAIT_QUEUE_HEAD(xemem_revoke_wq);
struct workqueue_struct *xemem_wq;
static LIST_HEAD(segs);
static LIST_HEAD(grants);
static LIST_HEAD(atts);
static s64 next_segid = 1;
static s64 next_apid = 1;
static u64 next_att = 1;

static bool same_holder(const struct xemem_holder *a, const struct xemem_holder *b)
{
	if (a->e != b->e)
		return false;
	if (!a->e)
		return a->file == b->file;
	return a->area == b->area && a->pid == b->pid;
}

/* h is the program that made s, and it has not ended. */
static bool is_owner(const struct xemem_seg *s, const struct xemem_holder *h)
{
	return !s->owner_ended && same_holder(&s->owner, h);
}

static struct xemem_seg *find_seg(s64 segid)
{
	struct xemem_seg *s;

	list_for_each_entry(s, &segs, node)
		if (s->segid == segid && !s->removed)
			return s;
	return NULL;
}

static u64 hash_run(u64 h, u64 phys, u64 len)
{
	u8 bytes[16];
	int i;

	put_unaligned_le64(phys, bytes);
	put_unaligned_le64(len, bytes + 8);
	for (i = 0; i < 16; i++)
		h = (h ^ bytes[i]) * ATOLL_XEMEM_HASH_PRIME;
	return h;
}

/*
 * An LWK program's range: each page's frame from its page tables, which
 * must all lie in its enclave's memory, and the runs' hash, which must be
 * the one of the runs the LWK pinned (else the range changed meanwhile).
 */
static int walk_lwk(struct xemem_seg *s, struct atoll_enclave *e, u64 root, u64 want_hash)
{
	u64 run = 0, len = 0, h = ATOLL_XEMEM_HASH_SEED;
	struct atoll_lwk_leaf leaf;
	bool writable;
	u32 i;

	for (i = 0; i < s->npages; i++) {
		if (atoll_lwk_translate(e, root, s->vaddr + (u64)i * PAGE_SIZE, &s->phys[i],
					&writable, &leaf))
			return -EFAULT;
		if (len && run + len == s->phys[i]) {
			len += PAGE_SIZE;
			continue;
		}
		if (len)
			h = hash_run(h, run, len);
		run = s->phys[i];
		len = PAGE_SIZE;
	}
	return hash_run(h, run, len) == want_hash ? 0 : -EAGAIN;
}

/*
 * A Linux owner's pinned pages count against its user's RLIMIT_MEMLOCK, as
 * io_uring's and RDMA's registered buffers do; CAP_IPC_LOCK lifts the limit.
 */
static int charge_locked(struct xemem_seg *s)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct user_struct *user = current_user();
	long cur, want;

	if (capable(CAP_IPC_LOCK))
		return 0;
	cur = atomic_long_read(&user->locked_vm);
	do {
		want = cur + s->npages;
		if (want > limit)
			return -ENOMEM;
	} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, want));
	s->locked_by = get_uid(user);
	return 0;
}

static void uncharge_locked(struct xemem_seg *s)
{
	if (!s->locked_by)
		return;
	atomic_long_sub(s->npages, &s->locked_by->locked_vm);
	free_uid(s->locked_by);
	s->locked_by = NULL;
}

/* A Linux process's range: pinned while the segment needs it, and charged. */
static int pin_linux(struct xemem_seg *s)
{
	long done = 0, n;
	int ret;
	u32 i;

	ret = charge_locked(s);
	if (ret)
		return ret;
	s->pages = kvcalloc(s->npages, sizeof(*s->pages), GFP_KERNEL);
	if (!s->pages) {
		uncharge_locked(s);
		return -ENOMEM;
	}
	while (done < s->npages) {
		n = pin_user_pages_fast(s->vaddr + done * PAGE_SIZE, s->npages - done,
					FOLL_WRITE | FOLL_LONGTERM, s->pages + done);
		if (n <= 0) {
			unpin_user_pages(s->pages, done);
			uncharge_locked(s);
			return n ? n : -EFAULT;
		}
		done += n;
	}
	for (i = 0; i < s->npages; i++)
		s->phys[i] = page_to_phys(s->pages[i]);
	return 0;
}

/* The end of a Linux owner's pin: its pages (written to) and its charge go. */
static void unpin_linux(struct xemem_seg *s)
{
	unpin_user_pages_dirty_lock(s->pages, s->npages, true);
	uncharge_locked(s);
}

static void free_seg(struct xemem_seg *s)
{
	kvfree(s->pages);
	kvfree(s->phys);
	kfree(s);
}

/*
 * A new segment of h's memory: its frames found in the LWK's page tables
 * or pinned on Linux; not registered yet. Needs no lock (a Linux range
 * may fault slowly while it is pinned).
 */
static struct xemem_seg *seg_new(struct xemem_holder *h, struct atoll_xemem_io *io,
				 const struct atoll_xemem_req *lwk, int *err)
{
	struct xemem_seg *s;
	u64 most;

	*err = -ENAMETOOLONG;
	if (strnlen(io->name, sizeof(io->name)) == sizeof(io->name))
		return NULL;
	*err = -EINVAL;
	if (!io->size || !PAGE_ALIGNED(io->vaddr) || !PAGE_ALIGNED(io->size) ||
	    io->size >> PAGE_SHIFT > U32_MAX || io->vaddr + io->size < io->vaddr ||
	    io->mode & ~0777)
		return NULL;
	/* Nobody exports more than their enclave's memory, or Linux's. */
	most = lwk ? (u64)h->e->block_count * h->e->block_size :
		     (u64)totalram_pages() << PAGE_SHIFT;
	if (io->size > most)
		return NULL;
	*err = -EFAULT;
	if (!lwk && !access_ok(u64_to_user_ptr(io->vaddr), io->size))
		return NULL;
	*err = -ENOMEM;
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	*s = (struct xemem_seg){ .owner = *h, .mode = io->mode, .vaddr = io->vaddr,
				 .size = io->size, .npages = io->size >> PAGE_SHIFT };
	strscpy(s->name, io->name, sizeof(s->name));
	s->phys = kvmalloc_array(s->npages, sizeof(*s->phys), GFP_KERNEL);
	if (s->phys && lwk) {
		s->pin = lwk->pin;
		*err = walk_lwk(s, h->e, lwk->root, lwk->runs_hash);
	} else if (s->phys) {
		*err = pin_linux(s);
	}
	if (!*err)
		return s;
	free_seg(s);
	return NULL;
}

/* Registers s (under xemem_lock): its segid, or -errno with s let go. */
static s64 seg_register(struct xemem_seg *s)
{
	int ret = -EEXIST;

	if (!s->name[0] || xemem_lookup(s->name) < 0) {
		s->segid = next_segid++;
		ret = xemem_event_open(s);
	}
	if (ret) {
		if (s->pages)
			unpin_linux(s);
		free_seg(s);
		return ret;
	}
	list_add_tail(&s->node, &segs);
	return s->segid;
}

/* An LWK program's MAKE (its frames are pinned there already). */
s64 xemem_make(struct xemem_holder *h, struct atoll_xemem_io *io,
	       const struct atoll_xemem_req *lwk)
{
	struct xemem_seg *s;
	int err;

	s = seg_new(h, io, lwk, &err);
	return s ? seg_register(s) : err;
}

/* Frees the frames once nothing may map them, the struct once nothing points here. */
static void seg_check(struct xemem_seg *s)
{
	u64 pin;

	if (!s->removed)
		return;
	if (!s->attachments && !s->frames_gone) {
		s->frames_gone = true;
		pin = s->pin;
		if (s->pages)
			unpin_linux(s);
		else if (!s->owner_gone && atoll_kmsg_send_wait(s->owner.e, ATOLL_KMSG_XEMEM_UNPIN,
								&pin, sizeof(pin)))
			pr_warn_ratelimited("atoll: enclave %s was not told to unpin segment %lld\n",
					    s->owner.e->name, s->segid);
	}
	if (!s->holds) {
		list_del(&s->node);
		free_seg(s);
	}
}

/*
 * An LWK program's attachment: its `atoll run` may perform delegated calls
 * on the attached memory (the mirror maps the attached frames, which stay
 * the segment's until the attachment is freed).
 */
static int grant_mirror(struct xemem_att *a)
{
	a->grant = atoll_mirror_grant(a->holder.e, a->holder.area, a->holder.pid,
				      a->seg->phys + (a->offset >> PAGE_SHIFT),
				      a->size >> PAGE_SHIFT, a->writable);
	return a->grant ? 0 : -ENOMEM;
}

/*
 * The mirror no longer maps a's frames, nor will it: until a is freed its
 * grant stays, refusing them, also while the LWK has not yet unmapped them.
 */
static void end_mirror(struct xemem_att *a)
{
	atoll_mirror_ungrant(a->grant);
}

/*
 * No CPU maps a's frames afterwards. An LWK that does not confirm in time
 * may still map them: a then keeps counting as an attachment, so the
 * frames stay pinned until that enclave is destroyed.
 */
static void revoke(struct xemem_att *a)
{
	struct atoll_enclave *e = a->holder.e;
	u64 words[2] = { a->holder.area, a->id };

	if (a->revoked)
		return;
	if (!e) {
		xemem_map_zap(a);
	} else {
		a->revoked = true;
		end_mirror(a);
		/* An LWK that let one wait time out is not waited for again until it answers. */
		if (atoll_lwk_state(e) == ATOLL_ENCLAVE_RUNNING &&
		    (atoll_kmsg_send_wait(e, ATOLL_KMSG_XEMEM_REVOKE, words, sizeof(words)) ||
		     (!READ_ONCE(e->xemem_deaf) &&
		      !wait_event_timeout(xemem_revoke_wq, READ_ONCE(e->xemem_revoked) == a->id,
					  msecs_to_jiffies(XEMEM_REVOKE_WAIT_MS))))) {
			WRITE_ONCE(e->xemem_deaf, true);
			a->unconfirmed = true;
			pr_warn("atoll: enclave %s did not confirm it unmapped segment %lld: its frames stay pinned until the enclave is destroyed\n",
				e->name, a->seg->segid);
			return;
		}
	}
	a->seg->attachments--;
}

void xemem_att_free(struct xemem_att *a)
{
	struct xemem_seg *s = a->seg;

	list_del(&a->node);
	end_mirror(a);
	/* No LWK maps the frames now (it confirmed, or its enclave is gone). */
	atoll_mirror_grant_free(a->grant);
	if (!a->revoked || a->unconfirmed)
		s->attachments--;
	s->holds--;
	if (a->mm)
		mmdrop(a->mm);
	kfree(a);
	seg_check(s);
}

static void seg_remove(struct xemem_seg *s)
{
	struct xemem_att *a, *next;

	/* Held here: freeing its last attachment must not free s under us. */
	s->holds++;
	s->removed = true;
	xemem_event_close(s->segid);
	list_for_each_entry_safe(a, next, &atts, node) {
		if (a->seg != s || a->revoked)
			continue;
		revoke(a);
		/*
		 * An LWK's attachment ends here (or with its enclave, if it did
		 * not confirm); Linux's when its VMA closes.
		 */
		if (a->holder.e && !a->unconfirmed)
			xemem_att_free(a);
	}
	s->holds--;
	seg_check(s);
}

/* Its owner removes it; once the owner of a kept one ended, its user or root. */
int xemem_remove(struct xemem_holder *h, s64 segid)
{
	struct xemem_seg *s = find_seg(segid);
	bool heir;

	if (!s)
		return -ENOENT;
	heir = s->owner_ended && (uid_eq(h->uid, s->owner.uid) || h->admin);
	if (!is_owner(s, h) && !heir)
		return -EPERM;
	seg_remove(s);
	return 0;
}

/* The owner asks that s outlive it. */
int xemem_keep(struct xemem_holder *h, s64 segid)
{
	struct xemem_seg *s = find_seg(segid);

	if (!s)
		return -ENOENT;
	if (!is_owner(s, h))
		return -EPERM;
	s->kept = true;
	return 0;
}

/* As a file's mode says, for the holder's user and group. */
static bool may_get(const struct xemem_seg *s, const struct xemem_holder *h, bool write)
{
	u32 bits = s->mode;

	if (uid_eq(h->uid, s->owner.uid))
		bits >>= 6;
	else if (gid_eq(h->gid, s->owner.gid))
		bits >>= 3;
	return (bits & 4) && (!write || (bits & 2));
}

s64 xemem_get(struct xemem_holder *h, s64 segid, u32 flags)
{
	struct xemem_seg *s = find_seg(segid);
	bool write = flags == ATOLL_XEMEM_RDWR;
	struct xemem_grant *g;

	if (flags != ATOLL_XEMEM_RDWR && flags != ATOLL_XEMEM_RDONLY)
		return -EINVAL;
	if (!s)
		return -ENOENT;
	if (!may_get(s, h, write))
		return -EACCES;
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return -ENOMEM;
	*g = (struct xemem_grant){ .apid = next_apid++, .seg = s, .holder = *h, .writable = write };
	s->holds++;
	list_add_tail(&g->node, &grants);
	return g->apid;
}

static struct xemem_grant *find_grant(struct xemem_holder *h, s64 apid)
{
	struct xemem_grant *g;

	list_for_each_entry(g, &grants, node)
		if (g->apid == apid && same_holder(&g->holder, h))
			return g;
	return NULL;
}

static void grant_free(struct xemem_grant *g)
{
	list_del(&g->node);
	g->seg->holds--;
	seg_check(g->seg);
	kfree(g);
}

int xemem_release(struct xemem_holder *h, s64 apid)
{
	struct xemem_grant *g = find_grant(h, apid);

	if (!g)
		return -EINVAL;
	grant_free(g);
	return 0;
}

static void att_closed(struct work_struct *work)
{
	struct xemem_att *a = container_of(work, struct xemem_att, closed);

	mutex_lock(&xemem_lock);
	xemem_att_free(a);
	mutex_unlock(&xemem_lock);
}

/* A new attachment of io's apid, offset and size, for h to map. */
struct xemem_att *xemem_attach(struct xemem_holder *h, struct atoll_xemem_io *io)
{
	struct xemem_grant *g = find_grant(h, io->apid);
	struct xemem_att *a;

	if (!g)
		return ERR_PTR(-EINVAL);
	if (g->seg->removed)
		return ERR_PTR(-ENOENT);
	if (!io->size || !PAGE_ALIGNED(io->offset) || !PAGE_ALIGNED(io->size) ||
	    io->offset > g->seg->size || io->size > g->seg->size - io->offset)
		return ERR_PTR(-EINVAL);
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return ERR_PTR(-ENOMEM);
	*a = (struct xemem_att){ .id = next_att++, .seg = g->seg, .holder = *h,
				 .offset = io->offset, .size = io->size, .writable = g->writable };
	INIT_WORK(&a->closed, att_closed);
	if (!h->e) {
		/* Its VMA holds it, not the file: it ends when the VMA closes. */
		a->holder.file = NULL;
		a->mm = current->mm;
		mmgrab(a->mm);
	} else if (grant_mirror(a)) {
		kfree(a);
		return ERR_PTR(-ENOMEM);
	}
	g->seg->holds++;
	g->seg->attachments++;
	list_add_tail(&a->node, &atts);
	return a;
}

int xemem_detach_lwk(struct xemem_holder *h, u64 id)
{
	struct xemem_att *a;

	list_for_each_entry(a, &atts, node) {
		if (a->id == id && same_holder(&a->holder, h)) {
			xemem_att_free(a);
			return 0;
		}
	}
	return -EINVAL;
}

s64 xemem_lookup(const char *name)
{
	struct xemem_seg *s;

	if (!name[0])
		return -EINVAL;
	list_for_each_entry(s, &segs, node)
		if (!s->removed && !strncmp(s->name, name, sizeof(s->name)))
			return s->segid;
	return -ENOENT;
}

/* A program ended (its memory is gone) or a Linux file closed. */
void xemem_holder_gone(struct xemem_holder *h)
{
	struct xemem_grant *g, *gnext;
	struct xemem_att *a, *anext;
	struct xemem_seg *s, *snext;

	list_for_each_entry_safe(a, anext, &atts, node)
		if (a->holder.e && same_holder(&a->holder, h))
			xemem_att_free(a);
	list_for_each_entry_safe(g, gnext, &grants, node)
		if (same_holder(&g->holder, h))
			grant_free(g);
	list_for_each_entry_safe(s, snext, &segs, node) {
		if (s->removed || !is_owner(s, h))
			continue;
		if (!s->kept) {
			seg_remove(s);
			continue;
		}
		/* A freed file may come back at the same address: no longer s's owner. */
		s->owner_ended = true;
		s->owner.file = NULL;
	}
}

/* Its CPUs are parked: what it held goes, and every mapping of its memory. */
void xemem_enclave_gone(struct atoll_enclave *e)
{
	struct xemem_grant *g, *gnext;
	struct xemem_att *a, *anext;
	struct xemem_seg *s, *snext;

	list_for_each_entry_safe(a, anext, &atts, node)
		if (a->holder.e == e)
			xemem_att_free(a);
	list_for_each_entry_safe(g, gnext, &grants, node)
		if (g->holder.e == e)
			grant_free(g);
	list_for_each_entry_safe(s, snext, &segs, node) {
		if (s->owner.e != e)
			continue;
		s->owner_gone = true;
		if (!s->removed)
			seg_remove(s);
	}
}

/* ATOLL_IOC_XEMEM from a Linux process (a file bound to no program). */
long atoll_xemem_ioctl(struct atoll_program *p, unsigned long arg)
{
	struct xemem_holder h = { .file = p, .pid = task_tgid_nr(current), .uid = current_euid(),
				  .gid = current_egid(), .admin = !atoll_may_admin(NULL, NULL) };
	struct atoll_xemem_io io;
	struct xemem_att *a = NULL;
	struct xemem_seg *s = NULL;
	long ret;
	int err;

	if (copy_from_user(&io, (void __user *)arg, sizeof(io)))
		return -EFAULT;
	ret = atoll_req_check(&io.hdr, sizeof(io), ATOLL_MAGIC_XEMEM);
	if (ret)
		return ret;
	if (p->e)
		return -EBUSY;	/* `atoll run`'s own file */
	/* These wait, or are quick, without the registry's lock. */
	if (io.op == ATOLL_XEMEM_DETACH)
		return xemem_map_detach(io.vaddr);
	if (io.op == ATOLL_XEMEM_SIGNAL)
		return xemem_event_signal(io.segid, h.uid, h.gid);
	if (io.op == ATOLL_XEMEM_WAIT)
		return xemem_event_wait(io.segid, h.uid, h.gid, io.timeout_ms);
	/* Pinned before the lock: the range may fault slowly. */
	if (io.op == ATOLL_XEMEM_MAKE) {
		s = seg_new(&h, &io, NULL, &err);
		if (!s)
			return err;
	}
	mutex_lock(&xemem_lock);
	switch (io.op) {
	case ATOLL_XEMEM_MAKE:
		ret = seg_register(s);
		io.segid = ret;
		break;
	case ATOLL_XEMEM_REMOVE:
		ret = xemem_remove(&h, io.segid);
		break;
	case ATOLL_XEMEM_KEEP:
		ret = xemem_keep(&h, io.segid);
		break;
	case ATOLL_XEMEM_GET:
		ret = xemem_get(&h, io.segid, io.flags);
		io.apid = ret;
		break;
	case ATOLL_XEMEM_RELEASE:
		ret = xemem_release(&h, io.apid);
		break;
	case ATOLL_XEMEM_ATTACH:
		a = xemem_attach(&h, &io);
		ret = PTR_ERR_OR_ZERO(a);
		break;
	case ATOLL_XEMEM_LOOKUP:
		ret = xemem_lookup(io.name);
		io.segid = ret;
		break;
	default:
		ret = -EINVAL;
	}
	mutex_unlock(&xemem_lock);
	if (a && !IS_ERR(a)) {
		bool owned;

		/* Mapped without xemem_lock: the mmap lock comes first. */
		ret = xemem_map_attach(a, io.vaddr, &owned);
		io.vaddr = ret;
		if (IS_ERR_VALUE(ret) && !owned) {
			mutex_lock(&xemem_lock);
			xemem_att_free(a);
			mutex_unlock(&xemem_lock);
		}
	}
	if (ret < 0)
		return ret;
	return copy_to_user((void __user *)arg, &io, sizeof(io)) ? -EFAULT : 0;
}

/* The file of a Linux process closed: its segments and grants go. */
void atoll_xemem_file_gone(struct atoll_program *p)
{
	struct xemem_holder h = { .file = p };

	mutex_lock(&xemem_lock);
	xemem_holder_gone(&h);
	mutex_unlock(&xemem_lock);
}

int atoll_xemem_init(void)
{
	xemem_wq = alloc_ordered_workqueue("atoll-xemem", 0);
	return xemem_wq ? 0 : -ENOMEM;
}

/*
 * No file or enclave is left: only kept segments of Linux processes that
 * ended, and attachments whose VMA just closed (their work is queued and
 * drained below). The pages go back.
 */
void atoll_xemem_exit(void)
{
	struct xemem_seg *s, *next;

	mutex_lock(&xemem_lock);
	list_for_each_entry_safe(s, next, &segs, node)
		if (!s->removed)
			seg_remove(s);
	mutex_unlock(&xemem_lock);
	destroy_workqueue(xemem_wq);
	xemem_event_exit();
}

static u32 kernel_of(const struct xemem_holder *h)
{
	return h->e ? h->e->id : ATOLL_KERNEL_LINUX;
}

/* Root sees every segment; others those they own or may get. */
static bool seg_visible(const struct xemem_seg *s, const struct xemem_holder *me, bool root)
{
	return root || uid_eq(me->uid, s->owner.uid) || may_get(s, me, false);
}

/* Root sees every attachment; others their own and those of their segments. */
static bool att_visible(const struct xemem_att *a, const struct xemem_holder *me, bool root)
{
	return root || uid_eq(me->uid, a->holder.uid) || uid_eq(me->uid, a->seg->owner.uid);
}

/*
 * ATOLL_IOC_XEMEM_LIST: what exists and the caller may know of, for
 * `atoll list --segments` and `atoll status`.
 */
int atoll_xemem_list(struct atoll_xemem_list *req)
{
	struct xemem_holder me = { .uid = current_euid(), .gid = current_egid() };
	bool root = !atoll_may_admin(NULL, NULL);
	struct atoll_xemem_seg_info *si;
	struct atoll_xemem_att_info *ai;
	struct xemem_seg *s;
	struct xemem_att *a;
	u32 n = 0;

	mutex_lock(&xemem_lock);
	list_for_each_entry(s, &segs, node) {
		if (s->removed || !seg_visible(s, &me, root))
			continue;
		if (n < ATOLL_XEMEM_LIST_SEGS) {
			si = &req->seg[n];
			*si = (struct atoll_xemem_seg_info){
				.segid = s->segid, .size = s->size,
				.kernel = kernel_of(&s->owner), .pid = s->owner.pid,
				.mode = s->mode, .attachments = s->attachments,
				.grants = s->holds - s->attachments,
				.flags = (s->kept ? ATOLL_XEMEM_SEG_KEPT : 0) |
					 (s->owner_ended ? ATOLL_XEMEM_SEG_OWNER_ENDED : 0),
				.uid = from_kuid_munged(current_user_ns(), s->owner.uid) };
			strscpy(si->name, s->name, sizeof(si->name));
		}
		n++;
	}
	req->segments = n;
	n = 0;
	list_for_each_entry(a, &atts, node) {
		if (!att_visible(a, &me, root))
			continue;
		if (n < ATOLL_XEMEM_LIST_ATTS) {
			ai = &req->att[n];
			*ai = (struct atoll_xemem_att_info){
				.id = a->id, .segid = a->seg->segid, .offset = a->offset,
				.size = a->size, .kernel = kernel_of(&a->holder),
				.pid = a->holder.pid, .writable = a->writable,
				.revoked = a->revoked };
		}
		n++;
	}
	req->attachments = n;
	mutex_unlock(&xemem_lock);
	return 0;
}
