// SPDX-License-Identifier: GPL-2.0-only
/*
 * Signalled segments (abi/atoll_abi.h, "XEMEM"): each segment's event
 * count and its waiters. Served straight from the message interrupt and
 * from the ioctl, under one spinlock, so a signal reaches its waiter with
 * one IPI: a Linux waiter sleeps on the event's wait queue, an LWK's WAIT
 * stays here until an event is taken for it and answered by XEMEM_REPLY.
 * Who may signal or wait: whoever the segment's mode lets get it.
 */
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include "xemem.h"

/*
 * A wait spins at least XEMEM_WAIT_SPIN_NS before it sleeps, and longer, up
 * to XEMEM_WAIT_SPIN_MAX_NS, on an event whose last wait ended that soon: a
 * ping-pong with an LWK takes three message hops per turn (30-40 us under
 * QEMU), and a wait that slept paid for a wake-up from idle on top (100 us
 * and more), while a slow producer's waits never spin long.
 */
#define XEMEM_WAIT_SPIN_NS	30000
#define XEMEM_WAIT_SPIN_MAX_NS	400000

struct lwk_waiter {
	struct list_head node;
	struct atoll_enclave *e;
	u64 id;				/* its request, to answer */
};

struct xemem_event {
	struct kref ref;
	u64 count;			/* signals not taken yet */
	bool closed;			/* the segment is gone: waits end with EIDRM */
	kuid_t uid;			/* the segment's owner and mode */
	kgid_t gid;
	u32 mode;
	wait_queue_head_t wq;		/* Linux's waiters */
	u64 spin_ns;			/* a Linux wait spins this long (a hint) */
	struct list_head lwk_waiters;
};

/* segid -> event; its lock (irq-safe) also guards every event's fields. */
static DEFINE_XARRAY_FLAGS(events, XA_FLAGS_LOCK_IRQ);

static void answer(struct atoll_enclave *e, u64 id, s64 result)
{
	struct atoll_xemem_reply r = { .id = id, .result = result, .last = 1 };

	/* From the interrupt: no waiting for room (the LWK's ring holds 4096 slots). */
	if (atoll_kmsg_send(e, ATOLL_KMSG_XEMEM_REPLY, &r, sizeof(r)))
		pr_warn_ratelimited("atoll: an XEMEM event reply to enclave %s was lost\n",
				    e->name);
}

int xemem_event_open(struct xemem_seg *s)
{
	struct xemem_event *ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	int ret;

	if (!ev)
		return -ENOMEM;
	kref_init(&ev->ref);
	ev->uid = s->owner.uid;
	ev->gid = s->owner.gid;
	ev->mode = s->mode;
	init_waitqueue_head(&ev->wq);
	INIT_LIST_HEAD(&ev->lwk_waiters);
	ret = xa_insert_irq(&events, s->segid, ev, GFP_KERNEL);
	if (ret)
		kfree(ev);
	return ret;
}

static void event_free(struct kref *ref)
{
	kfree(container_of(ref, struct xemem_event, ref));
}

/* The segment is gone: every waiter, here and in the LWKs, gets EIDRM. */
void xemem_event_close(s64 segid)
{
	struct lwk_waiter *w, *next;
	struct xemem_event *ev;
	unsigned long flags;

	xa_lock_irqsave(&events, flags);
	ev = __xa_erase(&events, segid);
	if (ev) {
		ev->closed = true;
		list_for_each_entry_safe(w, next, &ev->lwk_waiters, node) {
			answer(w->e, w->id, -EIDRM);
			list_del(&w->node);
			kfree(w);
		}
	}
	xa_unlock_irqrestore(&events, flags);
	if (!ev)
		return;
	wake_up_all(&ev->wq);
	kref_put(&ev->ref, event_free);
}

/* An enclave going away: nobody answers its waits any more. */
void xemem_event_enclave_gone(struct atoll_enclave *e)
{
	struct lwk_waiter *w, *next;
	struct xemem_event *ev;
	unsigned long flags, i;

	xa_lock_irqsave(&events, flags);
	xa_for_each(&events, i, ev) {
		list_for_each_entry_safe(w, next, &ev->lwk_waiters, node) {
			if (w->e != e)
				continue;
			list_del(&w->node);
			kfree(w);
		}
	}
	xa_unlock_irqrestore(&events, flags);
}

/* Under the xarray's lock: segid's event, if uid and gid may use it. */
static struct xemem_event *find(s64 segid, kuid_t uid, kgid_t gid, int *err)
{
	struct xemem_event *ev = xa_load(&events, segid);
	u32 bits;

	*err = -ENOENT;
	if (!ev)
		return NULL;
	bits = ev->mode;
	if (uid_eq(uid, ev->uid))
		bits >>= 6;
	else if (gid_eq(gid, ev->gid))
		bits >>= 3;
	*err = -EACCES;
	return bits & 4 ? ev : NULL;
}

/* One event: to the LWK waiter that came first, else for Linux's. */
int xemem_event_signal(s64 segid, kuid_t uid, kgid_t gid)
{
	struct xemem_event *ev;
	struct lwk_waiter *w;
	unsigned long flags;
	int err;

	xa_lock_irqsave(&events, flags);
	ev = find(segid, uid, gid, &err);
	w = ev ? list_first_entry_or_null(&ev->lwk_waiters, struct lwk_waiter, node) : NULL;
	if (w) {
		list_del(&w->node);
		answer(w->e, w->id, 0);
		kfree(w);
	} else if (ev) {
		ev->count++;
		wake_up(&ev->wq);
	}
	xa_unlock_irqrestore(&events, flags);
	return ev ? 0 : err;
}

/* Takes an event: 1, 0 if there is none yet, or -EIDRM once the segment is gone. */
static int take(struct xemem_event *ev)
{
	unsigned long flags;
	int ret = 0;

	xa_lock_irqsave(&events, flags);
	if (ev->count) {
		ev->count--;
		ret = 1;
	} else if (ev->closed) {
		ret = -EIDRM;
	}
	xa_unlock_irqrestore(&events, flags);
	return ret;
}

/*
 * A Linux process's wait: 0, -ETIMEDOUT, -EIDRM or -EINTR. It spins
 * first (as ATOLL_IOC_CALL does), as long as the event's last wait says:
 * an answer that comes within microseconds is not delayed by a sleep and
 * a wake-up.
 */
int xemem_event_wait(s64 segid, kuid_t uid, kgid_t gid, s32 timeout_ms)
{
	long timeout = timeout_ms < 0 ? MAX_SCHEDULE_TIMEOUT : msecs_to_jiffies(timeout_ms);
	struct xemem_event *ev;
	unsigned long flags;
	int err, got = 0;
	u64 start, waited;
	long left = 1;
	bool slept;

	xa_lock_irqsave(&events, flags);
	ev = find(segid, uid, gid, &err);
	if (ev)
		kref_get(&ev->ref);
	xa_unlock_irqrestore(&events, flags);
	if (!ev)
		return err;
	start = ktime_get_ns();
	/* A wait with no time (timeout 0) only looks. */
	waited = timeout_ms ? max_t(u64, XEMEM_WAIT_SPIN_NS, READ_ONCE(ev->spin_ns)) : 0;
	while (!(got = take(ev)) && ktime_get_ns() - start < waited && !signal_pending(current))
		cpu_relax();
	slept = !got;
	if (slept)
		left = wait_event_interruptible_timeout(ev->wq, (got = take(ev)) != 0, timeout);
	if (got > 0 && timeout_ms) {
		/*
		 * Next time: four times this wait if it spun; if it slept but
		 * not long (the sleep made it longer), the most; else the
		 * least. Waiters racing here only move a hint.
		 */
		waited = ktime_get_ns() - start;
		if (waited > XEMEM_WAIT_SPIN_MAX_NS)
			waited = 0;
		else
			waited = slept ? XEMEM_WAIT_SPIN_MAX_NS :
					 min_t(u64, 4 * waited, XEMEM_WAIT_SPIN_MAX_NS);
		WRITE_ONCE(ev->spin_ns, waited);
	}
	kref_put(&ev->ref, event_free);
	if (got)
		return got < 0 ? got : 0;
	return left < 0 ? -EINTR : -ETIMEDOUT;
}

/* An LWK's WAIT (request id): answered now if an event is there, else when one comes. */
void xemem_event_wait_lwk(struct atoll_enclave *e, u64 id, s64 segid, kuid_t uid, kgid_t gid)
{
	struct lwk_waiter *w = kmalloc(sizeof(*w), GFP_ATOMIC);
	struct xemem_event *ev;
	unsigned long flags;
	int err = -ENOMEM;

	xa_lock_irqsave(&events, flags);
	ev = w ? find(segid, uid, gid, &err) : NULL;
	if (ev && ev->count) {
		ev->count--;
		err = 0;
	} else if (ev) {
		*w = (struct lwk_waiter){ .e = e, .id = id };
		list_add_tail(&w->node, &ev->lwk_waiters);
		w = NULL;
	}
	if (!ev || !err)
		answer(e, id, err);
	xa_unlock_irqrestore(&events, flags);
	kfree(w);
}

/* The LWK gave up waiting (timeout, signal): ETIMEDOUT unless an event was taken for it. */
void xemem_event_cancel(struct atoll_enclave *e, u64 id, s64 segid)
{
	struct lwk_waiter *w, *found = NULL;
	struct xemem_event *ev;
	unsigned long flags;

	xa_lock_irqsave(&events, flags);
	ev = xa_load(&events, segid);
	if (ev) {
		list_for_each_entry(w, &ev->lwk_waiters, node) {
			if (w->e == e && w->id == id) {
				found = w;
				break;
			}
		}
	}
	if (found) {
		list_del(&found->node);
		answer(e, id, -ETIMEDOUT);
	}
	xa_unlock_irqrestore(&events, flags);
	kfree(found);
}
