// SPDX-License-Identifier: GPL-2.0-only
/*
 * XEMEM requests from the LWKs' programs (abi/atoll_abi.h, "XEMEM"): each
 * XEMEM_REQ is checked in the message interrupt, then served in order on
 * xemem_wq, where the registry (xemem.c) may sleep; the answer is one
 * XEMEM_REPLY, or for an attach its frames in runs over several. Events
 * (XEMEM_EVENT) are served in the interrupt itself (xemem_event.c). The
 * program is named by its area and pid, its user by the `atoll run` that
 * bound the area.
 */
#include <linux/slab.h>
#include "xemem.h"

struct xemem_request {
	struct work_struct work;
	struct atoll_enclave *e;
	struct atoll_xemem_req req;
};

static int reply(struct atoll_enclave *e, u64 id, s64 result, s64 value)
{
	struct atoll_xemem_reply r = { .id = id, .result = result, .value = value, .last = 1 };

	return atoll_kmsg_send_wait(e, ATOLL_KMSG_XEMEM_REPLY, &r, sizeof(r));
}

/* An attach's frames, as physically contiguous runs, in as many replies as they need. */
static int send_runs(struct atoll_enclave *e, u64 id, struct xemem_att *a)
{
	struct atoll_xemem_reply *r;
	struct atoll_xemem_run *runs;
	u64 first = a->offset >> PAGE_SHIFT, pages = a->size >> PAGE_SHIFT, i, phys;
	u32 n = 0;
	int ret = 0;

	r = kvmalloc(sizeof(*r) + ATOLL_XEMEM_REPLY_RUNS * sizeof(*runs), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	runs = (struct atoll_xemem_run *)(r + 1);
	*r = (struct atoll_xemem_reply){ .id = id, .value = a->id, .writable = a->writable };
	for (i = 0; i <= pages && !ret; i++) {
		phys = i < pages ? a->seg->phys[first + i] : 0;
		if (i < pages && n && runs[n - 1].phys + runs[n - 1].len == phys) {
			runs[n - 1].len += PAGE_SIZE;
			continue;
		}
		if (n == ATOLL_XEMEM_REPLY_RUNS || i == pages) {
			r->count = n;
			r->last = i == pages;
			ret = atoll_kmsg_send_wait(e, ATOLL_KMSG_XEMEM_REPLY, r,
						   sizeof(*r) + n * sizeof(*runs));
			n = 0;
		}
		if (i < pages)
			runs[n++] = (struct atoll_xemem_run){ phys, PAGE_SIZE };
	}
	kvfree(r);
	return ret;
}

/* The program that asks, with the user of the `atoll run` that bound its area. */
static int holder_of(struct atoll_enclave *e, const struct atoll_xemem_req *req,
		     struct xemem_holder *h)
{
	struct atoll_area *a = &e->areas[req->area];
	unsigned long flags;
	int ret = -ESRCH;

	*h = (struct xemem_holder){ .e = e, .area = req->area, .pid = req->pid };
	spin_lock_irqsave(&e->msg_lock, flags);
	if (a->created && a->pid == req->pid) {
		h->uid = a->uid;
		h->gid = a->gid;
		h->admin = uid_eq(a->uid, GLOBAL_ROOT_UID);
		ret = 0;
	}
	spin_unlock_irqrestore(&e->msg_lock, flags);
	return ret;
}

static void serve(struct work_struct *work)
{
	struct xemem_request *w = container_of(work, struct xemem_request, work);
	struct atoll_xemem_req *req = &w->req;
	struct atoll_xemem_io *io = &req->io;
	struct xemem_att *a = NULL;
	struct xemem_holder h;
	s64 ret;

	if (io->op == ATOLL_XEMEM_ENDED) {
		/* Its memory is freed: nothing it held is mapped any more. */
		h = (struct xemem_holder){ .e = w->e, .area = req->area, .pid = req->pid };
		mutex_lock(&xemem_lock);
		xemem_holder_gone(&h);
		mutex_unlock(&xemem_lock);
		goto out;
	}
	ret = holder_of(w->e, req, &h);
	if (ret)
		goto answer;
	mutex_lock(&xemem_lock);
	switch (io->op) {
	case ATOLL_XEMEM_MAKE:
		ret = xemem_make(&h, io, req);
		break;
	case ATOLL_XEMEM_REMOVE:
		ret = xemem_remove(&h, io->segid);
		break;
	case ATOLL_XEMEM_KEEP:
		ret = xemem_keep(&h, io->segid);
		break;
	case ATOLL_XEMEM_GET:
		ret = xemem_get(&h, io->segid, io->flags);
		break;
	case ATOLL_XEMEM_RELEASE:
		ret = xemem_release(&h, io->apid);
		break;
	case ATOLL_XEMEM_ATTACH:
		a = xemem_attach(&h, io);
		ret = PTR_ERR_OR_ZERO(a);
		/* Sent under the lock: a revocation comes after the runs. */
		if (!ret && send_runs(w->e, req->id, a)) {
			xemem_att_free(a);
			ret = -EIO;
		}
		break;
	case ATOLL_XEMEM_DETACH:
		ret = xemem_detach_lwk(&h, req->attachment);
		break;
	case ATOLL_XEMEM_LOOKUP:
		ret = xemem_lookup(io->name);
		break;
	default:
		ret = -EINVAL;
	}
	mutex_unlock(&xemem_lock);
	if (a && !ret)
		goto out;
answer:
	reply(w->e, req->id, ret < 0 ? ret : 0, ret);
out:
	kfree(w);
}

/* From an LWK: checked, then queued (the registry sleeps). */
static void on_request(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	struct xemem_request *w;

	if (m->len != sizeof(w->req) || ((struct atoll_xemem_req *)m->data)->area >=
	    ATOLL_MAX_PROGRAMS) {
		pr_warn_ratelimited("atoll: enclave %s sent a malformed XEMEM request; refused\n",
				    e->name);
		return;
	}
	w = kmalloc(sizeof(*w), GFP_ATOMIC);
	if (!w) {
		struct atoll_xemem_reply r = { .id = ((struct atoll_xemem_req *)m->data)->id,
					       .result = -ENOMEM, .last = 1 };

		atoll_kmsg_send(e, ATOLL_KMSG_XEMEM_REPLY, &r, sizeof(r));
		return;
	}
	w->e = e;
	memcpy(&w->req, m->data, sizeof(w->req));
	w->req.io.name[ATOLL_XEMEM_NAME_LEN - 1] = 0;
	INIT_WORK(&w->work, serve);
	queue_work(xemem_wq, &w->work);
}

/* SIGNAL, WAIT and CANCEL: served here, in the interrupt, for their latency. */
static void on_event(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	const struct atoll_xemem_req *req = (const void *)m->data;
	struct atoll_xemem_reply r = { .last = 1 };
	struct xemem_holder h;

	if (m->len != sizeof(*req) || req->area >= ATOLL_MAX_PROGRAMS) {
		pr_warn_ratelimited("atoll: enclave %s sent a malformed XEMEM event; refused\n",
				    e->name);
		return;
	}
	r.id = req->id;
	r.result = holder_of(e, req, &h);
	if (!r.result) {
		switch (req->io.op) {
		case ATOLL_XEMEM_WAIT:
			xemem_event_wait_lwk(e, req->id, req->io.segid, h.uid, h.gid);
			return;
		case ATOLL_XEMEM_CANCEL:
			xemem_event_cancel(e, req->attachment, req->io.segid);
			return;
		case ATOLL_XEMEM_SIGNAL:
			xemem_event_signal_lwk(e, req->id, req->io.segid, h.uid, h.gid);
			return;
		default:
			r.result = -EINVAL;
		}
	}
	atoll_kmsg_send(e, ATOLL_KMSG_XEMEM_REPLY, &r, sizeof(r));
}

static void on_revoked(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	WRITE_ONCE(e->xemem_revoked, atoll_kmsg_word(m, 0));
	WRITE_ONCE(e->xemem_deaf, false);
	wake_up_all(&xemem_revoke_wq);
}

int atoll_xemem_lwk_init(void)
{
	return atoll_kmsg_register(ATOLL_KMSG_XEMEM_REQ, on_request) ?:
	       atoll_kmsg_register(ATOLL_KMSG_XEMEM_EVENT, on_event) ?:
	       atoll_kmsg_register(ATOLL_KMSG_XEMEM_REPLY, xemem_event_on_reply) ?:
	       atoll_kmsg_register(ATOLL_KMSG_XEMEM_REVOKED, on_revoked);
}

/* e's CPUs are parked: its queued requests are served, then it lets go of everything. */
void atoll_xemem_enclave_gone(struct atoll_enclave *e)
{
	flush_workqueue(xemem_wq);
	xemem_event_enclave_gone(e);
	mutex_lock(&xemem_lock);
	xemem_enclave_gone(e);
	mutex_unlock(&xemem_lock);
}
