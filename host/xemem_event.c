// SPDX-License-Identifier: GPL-2.0-only
/*
 * Signalled segments (abi/atoll_abi.h, "XEMEM"): each segment's event
 * count and its waiters. Served straight from the message interrupt and
 * from the ioctl, under one spinlock, so a signal reaches its waiter with
 * one IPI: a Linux waiter sleeps on the event's wait queue, an LWK's WAIT
 * stays here until an event is taken for it and answered by XEMEM_REPLY.
 * Who may signal or wait: whoever the segment's mode lets get it.
 *
 * The event of a segment made in an enclave lives in that enclave's LWK
 * (its `home`), so that LWKs signal each other directly: here it is only
 * checked, an LWK that asks is told where it is (XEMEM_ELSEWHERE), and a
 * Linux process's signal and wait are forwarded there (XEMEM_HOME), the
 * wait until the LWK answers it.
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
#define XEMEM_CANCEL_WAIT_MS	1000	/* for an LWK to answer a cancelled wait */

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
	struct atoll_enclave *home;	/* the LWK the event lives in; NULL: here */
};

/* A Linux process's wait on an event in an LWK, until that LWK answers it. */
struct forwarded {
	struct list_head node;
	struct atoll_enclave *home;
	s64 segid;
	u64 id;				/* the request's, in XEMEM_HOME and its reply */
	s64 result;
	bool answered;
	wait_queue_head_t wq;
};

/*
 * segid -> event; its lock (irq-safe) also guards every event's fields
 * and the forwarded waits.
 */
static DEFINE_XARRAY_FLAGS(events, XA_FLAGS_LOCK_IRQ);
static LIST_HEAD(forwarded);
static u64 forward_id;

/*
 * A message to an LWK that found its ring full: sent again from a work
 * item, so that no answer is lost (a waiter would wait for ever). On the
 * xarray's lock's list `unsent`; an enclave that goes takes its own.
 */
struct unsent {
	struct list_head node;
	struct atoll_enclave *e;
	u16 type;
	u32 len;
	union {
		struct atoll_xemem_reply reply;
		struct atoll_xemem_event event;
	} m;
};

static LIST_HEAD(unsent);
static void resend(struct work_struct *work);
static DECLARE_DELAYED_WORK(resender, resend);

/* Under the xarray's lock: sends now, or queues it for resend() if the ring is full. */
static void send_or_queue(struct atoll_enclave *e, u16 type, const void *m, u32 len)
{
	struct unsent *u;

	if (list_empty(&unsent) && atoll_kmsg_send(e, type, m, len) != -EAGAIN)
		return;
	u = kmalloc(sizeof(*u), GFP_ATOMIC);
	if (!u || len > sizeof(u->m)) {
		kfree(u);
		pr_warn_ratelimited("atoll: an XEMEM event message to enclave %s was lost\n",
				    e->name);
		return;
	}
	*u = (struct unsent){ .e = e, .type = type, .len = len };
	memcpy(&u->m, m, len);
	list_add_tail(&u->node, &unsent);
	schedule_delayed_work(&resender, 1);
}

/* In order, until a ring is still full (then again a jiffy later). */
static void resend(struct work_struct *work)
{
	unsigned long flags;
	struct unsent *u;
	bool full = false;

	xa_lock_irqsave(&events, flags);
	while (!full && (u = list_first_entry_or_null(&unsent, struct unsent, node))) {
		full = atoll_kmsg_send(u->e, u->type, &u->m, u->len) == -EAGAIN;
		if (!full) {
			list_del(&u->node);
			kfree(u);
		}
	}
	xa_unlock_irqrestore(&events, flags);
	if (full)
		schedule_delayed_work(&resender, 1);
}

/* Under the xarray's lock (from the interrupt too): no waiting for room. */
static void answer(struct atoll_enclave *e, u64 id, s64 result, s64 value)
{
	struct atoll_xemem_reply r = { .id = id, .result = result, .value = value, .last = 1 };

	send_or_queue(e, ATOLL_KMSG_XEMEM_REPLY, &r, sizeof(r));
}

/* Under the xarray's lock: SIGNAL, WAIT, CANCEL, GET or REMOVE, to the event's LWK. */
static void send_home(struct atoll_enclave *home, u32 op, s64 segid, u64 id, u64 cancel,
		      u32 kernel)
{
	struct atoll_xemem_event m = {
		.id = id, .segid = segid, .cancel = cancel, .op = op, .kernel = kernel,
	};

	send_or_queue(home, ATOLL_KMSG_XEMEM_HOME, &m, sizeof(m));
}

/*
 * A new segment's event: here, or for one an LWK program made, in that
 * LWK (opened there before anyone can learn the segid, so an LWK told to
 * go there finds it, or finds it coming: the host opens in segid order).
 */
int xemem_event_open(struct xemem_seg *s)
{
	struct atoll_xemem_event open = { .segid = s->segid, .op = ATOLL_XEMEM_MAKE };
	struct xemem_event *ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	int ret;

	if (!ev)
		return -ENOMEM;
	kref_init(&ev->ref);
	ev->uid = s->owner.uid;
	ev->gid = s->owner.gid;
	ev->mode = s->mode;
	ev->home = s->owner.e;
	init_waitqueue_head(&ev->wq);
	INIT_LIST_HEAD(&ev->lwk_waiters);
	if (ev->home) {
		ret = atoll_kmsg_send_wait(ev->home, ATOLL_KMSG_XEMEM_HOME, &open, sizeof(open));
		if (ret) {
			kfree(ev);
			return ret;
		}
	}
	ret = xa_insert_irq(&events, s->segid, ev, GFP_KERNEL);
	if (ret && ev->home) {
		xa_lock_irq(&events);
		send_home(ev->home, ATOLL_XEMEM_REMOVE, s->segid, 0, 0, 0);
		xa_unlock_irq(&events);
	}
	if (ret)
		kfree(ev);
	return ret;
}

static void event_free(struct kref *ref)
{
	kfree(container_of(ref, struct xemem_event, ref));
}

/* Under the xarray's lock: a forwarded wait ends with `result`. */
static void forwarded_answer(struct forwarded *f, s64 result)
{
	f->result = result;
	/* The result first: the waiter reads it after an acquire. */
	smp_store_release(&f->answered, true);
	wake_up(&f->wq);
}

/*
 * The segment is gone: every waiter, here and in the LWKs, gets EIDRM; an
 * event in an LWK is closed there, and the Linux waits forwarded to it end.
 */
void xemem_event_close(s64 segid)
{
	struct lwk_waiter *w, *next;
	struct forwarded *f;
	struct xemem_event *ev;
	unsigned long flags;

	xa_lock_irqsave(&events, flags);
	ev = __xa_erase(&events, segid);
	if (ev) {
		ev->closed = true;
		if (ev->home)
			send_home(ev->home, ATOLL_XEMEM_REMOVE, segid, 0, 0, 0);
		list_for_each_entry_safe(w, next, &ev->lwk_waiters, node) {
			answer(w->e, w->id, -EIDRM, 0);
			list_del(&w->node);
			kfree(w);
		}
		list_for_each_entry(f, &forwarded, node)
			if (f->segid == segid && !f->answered)
				forwarded_answer(f, -EIDRM);
	}
	xa_unlock_irqrestore(&events, flags);
	if (!ev)
		return;
	wake_up_all(&ev->wq);
	kref_put(&ev->ref, event_free);
}

/*
 * An enclave going away: nobody answers its waits any more, its events
 * are closed (their segments go next), and waits forwarded to it end.
 */
void xemem_event_enclave_gone(struct atoll_enclave *e)
{
	struct lwk_waiter *w, *next;
	struct unsent *u, *u_next;
	struct xemem_event *ev;
	struct forwarded *f;
	unsigned long flags, i;

	xa_lock_irqsave(&events, flags);
	list_for_each_entry_safe(u, u_next, &unsent, node) {
		if (u->e == e) {
			list_del(&u->node);
			kfree(u);
		}
	}
	xa_for_each(&events, i, ev) {
		list_for_each_entry_safe(w, next, &ev->lwk_waiters, node) {
			if (w->e != e)
				continue;
			list_del(&w->node);
			kfree(w);
		}
		if (ev->home == e) {
			ev->home = NULL;
			ev->closed = true;
			wake_up_all(&ev->wq);
		}
	}
	list_for_each_entry(f, &forwarded, node)
		if (f->home == e && !f->answered)
			forwarded_answer(f, -EIDRM);
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

/*
 * Under the xarray's lock: one event, to the LWK waiter that came first,
 * else for Linux's; or forwarded to the LWK the event lives in.
 */
static void signal_here(struct xemem_event *ev, s64 segid)
{
	struct lwk_waiter *w = list_first_entry_or_null(&ev->lwk_waiters, struct lwk_waiter, node);

	if (ev->home) {
		send_home(ev->home, ATOLL_XEMEM_SIGNAL, segid, 0, 0, 0);
	} else if (w) {
		list_del(&w->node);
		answer(w->e, w->id, 0, 0);
		kfree(w);
	} else {
		ev->count++;
		wake_up(&ev->wq);
	}
}

/* A Linux process's signal: 0 or -errno. */
int xemem_event_signal(s64 segid, kuid_t uid, kgid_t gid)
{
	struct xemem_event *ev;
	unsigned long flags;
	int err;

	xa_lock_irqsave(&events, flags);
	ev = find(segid, uid, gid, &err);
	if (ev) {
		signal_here(ev, segid);
		err = 0;
	}
	xa_unlock_irqrestore(&events, flags);
	return err;
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

/* A wait spins this long first: as long as the event's last wait says (a hint). */
static u64 spin_for(struct xemem_event *ev, s32 timeout_ms)
{
	/* A wait with no time (timeout 0) only looks. */
	return timeout_ms ? max_t(u64, XEMEM_WAIT_SPIN_NS, READ_ONCE(ev->spin_ns)) : 0;
}

/*
 * After a wait that got its event: next time, four times this wait if it
 * spun; if it slept but not long (the sleep made it longer), the most;
 * else the least. Waiters racing here only move a hint.
 */
static void learn_spin(struct xemem_event *ev, u64 start, bool slept)
{
	u64 waited = ktime_get_ns() - start;

	if (waited > XEMEM_WAIT_SPIN_MAX_NS)
		waited = 0;
	else if (slept)
		waited = XEMEM_WAIT_SPIN_MAX_NS;
	else
		waited = min_t(u64, 4 * waited, XEMEM_WAIT_SPIN_MAX_NS);
	WRITE_ONCE(ev->spin_ns, waited);
}

static bool forwarded_done(struct forwarded *f)
{
	/* Pairs with forwarded_answer(): the result is set. */
	return smp_load_acquire(&f->answered);
}

/*
 * A Linux process's wait on an event in an LWK (ev referenced): sent
 * there, spun on and slept on as a local one; given up, it is cancelled,
 * and the LWK's answer still awaited, so that an event taken for it
 * meanwhile is not lost.
 */
static int wait_forwarded(struct xemem_event *ev, s64 segid, s32 timeout_ms)
{
	long timeout = timeout_ms < 0 ? MAX_SCHEDULE_TIMEOUT : msecs_to_jiffies(timeout_ms);
	struct forwarded f = { .segid = segid };
	u64 start, spin = spin_for(ev, timeout_ms);
	unsigned long flags;
	long left = 1;
	bool slept;
	int ret;

	init_waitqueue_head(&f.wq);
	xa_lock_irqsave(&events, flags);
	ret = -EIDRM;
	if (ev->home && !ev->closed) {
		f.home = ev->home;
		f.id = ++forward_id;
		list_add_tail(&f.node, &forwarded);
		send_home(f.home, ATOLL_XEMEM_WAIT, segid, f.id, 0, 0);
		ret = 0;
	}
	xa_unlock_irqrestore(&events, flags);
	if (ret)
		return ret;
	start = ktime_get_ns();
	while (!forwarded_done(&f) && ktime_get_ns() - start < spin && !signal_pending(current))
		cpu_relax();
	slept = !forwarded_done(&f);
	if (slept)
		left = wait_event_interruptible_timeout(f.wq, forwarded_done(&f), timeout);
	if (!forwarded_done(&f)) {
		xa_lock_irqsave(&events, flags);
		/* Answered, or its enclave gone, meanwhile: f.home may be gone too. */
		if (!f.answered)
			send_home(f.home, ATOLL_XEMEM_CANCEL, segid, 0, f.id, 0);
		xa_unlock_irqrestore(&events, flags);
		wait_event_timeout(f.wq, forwarded_done(&f),
				   msecs_to_jiffies(XEMEM_CANCEL_WAIT_MS));
	}
	xa_lock_irqsave(&events, flags);
	list_del(&f.node);
	ret = f.answered ? f.result : -ETIMEDOUT;
	xa_unlock_irqrestore(&events, flags);
	if (!ret && timeout_ms)
		learn_spin(ev, start, slept);
	if (ret == -ETIMEDOUT && left < 0)
		return -EINTR;
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
	u64 start, spin;
	long left = 1;
	bool slept;

	xa_lock_irqsave(&events, flags);
	ev = find(segid, uid, gid, &err);
	if (ev)
		kref_get(&ev->ref);
	xa_unlock_irqrestore(&events, flags);
	if (!ev)
		return err;
	if (READ_ONCE(ev->home)) {
		err = wait_forwarded(ev, segid, timeout_ms);
		kref_put(&ev->ref, event_free);
		return err;
	}
	start = ktime_get_ns();
	spin = spin_for(ev, timeout_ms);
	while (!(got = take(ev)) && ktime_get_ns() - start < spin && !signal_pending(current))
		cpu_relax();
	slept = !got;
	if (slept)
		left = wait_event_interruptible_timeout(ev->wq, (got = take(ev)) != 0, timeout);
	if (got > 0 && timeout_ms)
		learn_spin(ev, start, slept);
	kref_put(&ev->ref, event_free);
	if (got)
		return got < 0 ? got : 0;
	return left < 0 ? -EINTR : -ETIMEDOUT;
}

/*
 * XEMEM_REPLY from the LWK an event lives in: a forwarded wait's answer (0
 * or -errno), with the segid as its value. One to a wait that ended
 * without it (closed here first, or the cancel not answered in time) that
 * took an event gives it back.
 */
void xemem_event_on_reply(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	const struct atoll_xemem_reply *r = (const void *)m->data;
	struct forwarded *f;
	unsigned long flags;
	bool found = false;

	if (m->len != sizeof(*r) || r->result > 0 || r->result < -MAX_ERRNO) {
		pr_warn_ratelimited("atoll: enclave %s sent a malformed XEMEM reply; refused\n",
				    e->name);
		return;
	}
	xa_lock_irqsave(&events, flags);
	list_for_each_entry(f, &forwarded, node) {
		if (f->id == r->id && f->home == e && f->segid == r->value && !f->answered) {
			forwarded_answer(f, r->result);
			found = true;
			break;
		}
	}
	if (!found && !r->result)
		send_home(e, ATOLL_XEMEM_SIGNAL, r->value, 0, 0, 0);
	xa_unlock_irqrestore(&events, flags);
}

/*
 * An LWK's SIGNAL or WAIT (request id) on an event that lives in an LWK,
 * perhaps its own: it is told which (XEMEM_ELSEWHERE) and asks there.
 * False for an event here.
 */
static bool elsewhere(struct atoll_enclave *e, u64 id, s64 segid, struct xemem_event *ev)
{
	if (!ev || !ev->home || !id)
		return false;
	/* The home serves another enclave once told (before that enclave can ask). */
	if (ev->home != e)
		send_home(ev->home, ATOLL_XEMEM_GET, segid, 0, 0, e->id);
	answer(e, id, ATOLL_XEMEM_ELSEWHERE, ev->home->id);
	return true;
}

/* An LWK's SIGNAL (request id, 0: it wants no answer). */
void xemem_event_signal_lwk(struct atoll_enclave *e, u64 id, s64 segid, kuid_t uid, kgid_t gid)
{
	struct xemem_event *ev;
	unsigned long flags;
	int err;

	xa_lock_irqsave(&events, flags);
	ev = find(segid, uid, gid, &err);
	if (!elsewhere(e, id, segid, ev)) {
		if (ev) {
			signal_here(ev, segid);
			err = 0;
		}
		if (id)
			answer(e, id, err, 0);
	}
	xa_unlock_irqrestore(&events, flags);
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
	if (elsewhere(e, id, segid, ev))
		goto out;
	if (ev && ev->count) {
		ev->count--;
		err = 0;
	} else if (ev) {
		*w = (struct lwk_waiter){ .e = e, .id = id };
		list_add_tail(&w->node, &ev->lwk_waiters);
		w = NULL;
	}
	if (!ev || !err)
		answer(e, id, err, 0);
out:
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
		answer(e, id, -ETIMEDOUT, 0);
	}
	xa_unlock_irqrestore(&events, flags);
	kfree(found);
}

/* Module unload (every enclave is gone): nothing is left to resend. */
void xemem_event_exit(void)
{
	struct unsent *u, *next;

	cancel_delayed_work_sync(&resender);
	list_for_each_entry_safe(u, next, &unsent, node)
		kfree(u);
}
