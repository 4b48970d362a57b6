// SPDX-License-Identifier: GPL-2.0-only
/*
 * Messages between programs, Linux's side (abi/atoll_abi.h, "Messages
 * between programs"): Linux's ports, filled by ATOLL_KMSG_USER messages
 * from the LWKs and by ATOLL_IOC_MSG_SEND to kernel 0, emptied by
 * ATOLL_IOC_MSG_RECV; ATOLL_IOC_MSG_SEND to an enclave goes to its LWK.
 */
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include "atoll.h"

struct port_msg {
	struct list_head node;
	u32 kernel;			/* who sent it */
	u16 src_port;
	u32 len;
	u8 data[];
};

static struct {
	struct list_head msgs;
	u32 count;
	wait_queue_head_t wq;
} ports[ATOLL_MSG_PORTS];
static DEFINE_SPINLOCK(ports_lock);	/* every port's list; also in the message interrupt */
static u64 dropped;			/* messages from LWKs that found their port full */

/* Queues a message on Linux's port; -EAGAIN when the port is full. */
static int deliver(u16 port, u32 kernel, u16 src_port, const void *data, u32 len, gfp_t gfp)
{
	struct port_msg *m = kmalloc(struct_size(m, data, len), gfp);
	unsigned long flags;
	int ret = 0;

	if (!m)
		return -ENOMEM;
	*m = (struct port_msg){ .kernel = kernel, .src_port = src_port, .len = len };
	memcpy(m->data, data, len);
	spin_lock_irqsave(&ports_lock, flags);
	if (ports[port].count < ATOLL_MSG_QUEUE) {
		list_add_tail(&m->node, &ports[port].msgs);
		ports[port].count++;
	} else {
		ret = -EAGAIN;
	}
	spin_unlock_irqrestore(&ports_lock, flags);
	if (ret)
		kfree(m);
	else
		wake_up_interruptible(&ports[port].wq);
	return ret;
}

/* From an LWK: checked, then queued; the sender is who the link says. */
static void on_user(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	struct atoll_user_msg h;

	if (m->len < sizeof(h))
		goto bad;
	memcpy(&h, m->data, sizeof(h));
	if (h.len > ATOLL_MSG_MAX || h.len != m->len - sizeof(h) ||
	    h.dest_port >= ATOLL_MSG_PORTS || h.src_port >= ATOLL_MSG_PORTS)
		goto bad;
	if (deliver(h.dest_port, e->id, h.src_port, m->data + sizeof(h), h.len, GFP_ATOMIC)) {
		dropped++;
		pr_warn_ratelimited("atoll: Linux's port %u is full: a message from enclave %s dropped (%llu so far)\n",
				    h.dest_port, e->name, dropped);
	}
	return;
bad:
	pr_warn_ratelimited("atoll: enclave %s sent a malformed program message; dropped\n",
			    e->name);
}

int atoll_usermsg_init(void)
{
	int i;

	for (i = 0; i < ATOLL_MSG_PORTS; i++) {
		INIT_LIST_HEAD(&ports[i].msgs);
		init_waitqueue_head(&ports[i].wq);
	}
	return atoll_kmsg_register(ATOLL_KMSG_USER, on_user);
}

void atoll_usermsg_exit(void)
{
	struct port_msg *m, *next;
	int i;

	for (i = 0; i < ATOLL_MSG_PORTS; i++)
		list_for_each_entry_safe(m, next, &ports[i].msgs, node)
			kfree(m);
}

static int check_io(const struct atoll_msg_io *io)
{
	if (io->port >= ATOLL_MSG_PORTS || io->src_port >= ATOLL_MSG_PORTS ||
	    io->len > ATOLL_MSG_MAX)
		return -EINVAL;
	return 0;
}

/* ATOLL_IOC_MSG_SEND to e's LWK, or to Linux's own port when e is NULL. */
int atoll_usermsg_send(struct atoll_enclave *e, struct atoll_msg_io *io)
{
	struct atoll_user_msg *h;
	int ret = check_io(io);

	if (ret)
		return ret;
	h = kmalloc(sizeof(*h) + io->len, GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	*h = (struct atoll_user_msg){ io->port, io->src_port, io->len };
	if (copy_from_user(h + 1, u64_to_user_ptr(io->buf_ptr), io->len))
		ret = -EFAULT;
	else if (!e)
		ret = deliver(io->port, ATOLL_KERNEL_LINUX, io->src_port, h + 1, io->len,
			      GFP_KERNEL);
	else if (atoll_lwk_state(e) != ATOLL_ENCLAVE_RUNNING)
		ret = -EHOSTDOWN;
	else
		ret = atoll_kmsg_send(e, ATOLL_KMSG_USER, h, sizeof(*h) + io->len);
	kfree(h);
	return ret;
}

static struct port_msg *take(u16 port)
{
	struct port_msg *m;

	spin_lock_irq(&ports_lock);
	m = list_first_entry_or_null(&ports[port].msgs, struct port_msg, node);
	if (m) {
		list_del(&m->node);
		ports[port].count--;
	}
	spin_unlock_irq(&ports_lock);
	return m;
}

/* ATOLL_IOC_MSG_RECV: waits without any lock held (a message may take long). */
long atoll_usermsg_recv(unsigned long arg)
{
	struct atoll_msg_io io;
	struct port_msg *m = NULL;
	long left, timeout;
	int ret;

	if (copy_from_user(&io, (void __user *)arg, sizeof(io)))
		return -EFAULT;
	ret = atoll_req_check(&io.hdr, sizeof(io), ATOLL_MAGIC_MSG) ?: check_io(&io);
	if (ret)
		return ret;
	timeout = io.timeout_ms < 0 ? MAX_SCHEDULE_TIMEOUT : msecs_to_jiffies(io.timeout_ms);
	left = wait_event_interruptible_timeout(ports[io.port].wq, (m = take(io.port)), timeout);
	if (left < 0)
		return -EINTR;
	if (!m)
		return -ETIMEDOUT;
	io.kernel = m->kernel;
	io.src_port = m->src_port;
	io.len = min(io.len, m->len);
	ret = 0;
	if (copy_to_user(u64_to_user_ptr(io.buf_ptr), m->data, io.len) ||
	    copy_to_user((void __user *)arg, &io, sizeof(io)))
		ret = -EFAULT;
	kfree(m);
	return ret;
}
