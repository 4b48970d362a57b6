// SPDX-License-Identifier: GPL-2.0-only
/*
 * Messages between programs, Linux's side (abi/atoll_abi.h, "Messages
 * between programs"): each Linux user's own ports, filled by the
 * ATOLL_KMSG_USER messages of the programs that user runs in enclaves and
 * by the user's ATOLL_IOC_MSG_SEND to kernel 0, emptied by the user's
 * ATOLL_IOC_MSG_RECV. Nobody reads, forges into or fills another user's
 * ports. ATOLL_IOC_MSG_SEND to an enclave goes to its LWK.
 */
#include <linux/cred.h>
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

/* One user's ports: made on first use, kept until the module goes. */
struct user_ports {
	struct list_head node;
	kuid_t uid;
	size_t bytes;			/* queued: at most ATOLL_MSG_USER_BYTES */
	wait_queue_head_t wq;		/* a message came to any of them */
	struct {
		struct list_head msgs;
		u32 count;
	} port[ATOLL_MSG_PORTS];
};

/*
 * Bounds on what all users together hold in the kernel: users with ports
 * (uids in user namespaces are many), and bytes queued, counted as
 * allocated.
 */
#define MAX_USERS	1024
#define ALL_BYTES	(64 << 20)

static LIST_HEAD(users);
static u32 user_count;
static size_t all_bytes;
static DEFINE_SPINLOCK(ports_lock);	/* all of the above; also in the message interrupt */
static u64 dropped;			/* messages from LWKs that found no room */

static struct user_ports *ports_find(kuid_t uid)
{
	struct user_ports *u;

	list_for_each_entry(u, &users, node)
		if (uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/* uid's ports, made if they are new; NULL without memory or past MAX_USERS. */
static struct user_ports *ports_of(kuid_t uid, gfp_t gfp)
{
	struct user_ports *u, *fresh;
	unsigned long flags;
	int i;

	spin_lock_irqsave(&ports_lock, flags);
	u = ports_find(uid);
	spin_unlock_irqrestore(&ports_lock, flags);
	if (u)
		return u;
	fresh = kzalloc(sizeof(*fresh), gfp);
	if (!fresh)
		return NULL;
	fresh->uid = uid;
	init_waitqueue_head(&fresh->wq);
	for (i = 0; i < ATOLL_MSG_PORTS; i++)
		INIT_LIST_HEAD(&fresh->port[i].msgs);
	spin_lock_irqsave(&ports_lock, flags);
	u = ports_find(uid);
	if (!u && user_count < MAX_USERS) {
		list_add(&fresh->node, &users);
		user_count++;
		swap(u, fresh);
	}
	spin_unlock_irqrestore(&ports_lock, flags);
	kfree(fresh);
	return u;
}

/* Queues a message on uid's port; -EAGAIN when the port, the user's share or the whole is full. */
static int deliver(kuid_t uid, u16 port, u32 kernel, u16 src_port, const void *data, u32 len,
		   gfp_t gfp)
{
	struct user_ports *u = ports_of(uid, gfp);
	size_t size = struct_size_t(struct port_msg, data, len);
	struct port_msg *m = kmalloc(size, gfp);
	unsigned long flags;
	int ret = -EAGAIN;

	if (!u || !m) {
		kfree(m);
		return -ENOMEM;
	}
	*m = (struct port_msg){ .kernel = kernel, .src_port = src_port, .len = len };
	memcpy(m->data, data, len);
	size = ksize(m);
	spin_lock_irqsave(&ports_lock, flags);
	if (u->port[port].count < ATOLL_MSG_QUEUE && u->bytes + size <= ATOLL_MSG_USER_BYTES &&
	    all_bytes + size <= ALL_BYTES) {
		list_add_tail(&m->node, &u->port[port].msgs);
		u->port[port].count++;
		u->bytes += size;
		all_bytes += size;
		ret = 0;
	}
	spin_unlock_irqrestore(&ports_lock, flags);
	if (ret)
		kfree(m);
	else
		wake_up_interruptible(&u->wq);
	return ret;
}

/* The user of the `atoll run` whose program holds e's area; false if none does. */
static bool sender_user(struct atoll_enclave *e, u32 area, kuid_t *uid)
{
	unsigned long flags;
	bool found;

	if (area >= ATOLL_MAX_PROGRAMS)
		return false;
	spin_lock_irqsave(&e->msg_lock, flags);
	found = e->areas[area].created;
	*uid = e->areas[area].uid;
	spin_unlock_irqrestore(&e->msg_lock, flags);
	return found;
}

/* From an LWK: checked, then queued for its sending program's user; the kernel is the link's. */
static void on_user(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	struct atoll_user_msg h;
	kuid_t uid;

	if (m->len < sizeof(h))
		goto bad;
	memcpy(&h, m->data, sizeof(h));
	if (h.len > ATOLL_MSG_MAX || h.len != m->len - sizeof(h) ||
	    h.dest_port >= ATOLL_MSG_PORTS || h.src_port >= ATOLL_MSG_PORTS ||
	    !sender_user(e, h.area, &uid))
		goto bad;
	if (deliver(uid, h.dest_port, e->id, h.src_port, m->data + sizeof(h), h.len, GFP_ATOMIC)) {
		dropped++;
		pr_warn_ratelimited("atoll: no room on Linux's port %u: a message from enclave %s dropped (%llu so far)\n",
				    h.dest_port, e->name, dropped);
	}
	return;
bad:
	pr_warn_ratelimited("atoll: enclave %s sent a malformed program message; dropped\n",
			    e->name);
}

int atoll_usermsg_init(void)
{
	return atoll_kmsg_register(ATOLL_KMSG_USER, on_user);
}

void atoll_usermsg_exit(void)
{
	struct user_ports *u, *unext;
	struct port_msg *m, *next;
	int i;

	list_for_each_entry_safe(u, unext, &users, node) {
		for (i = 0; i < ATOLL_MSG_PORTS; i++)
			list_for_each_entry_safe(m, next, &u->port[i].msgs, node)
				kfree(m);
		kfree(u);
	}
}

static int check_io(const struct atoll_msg_io *io)
{
	if (io->port >= ATOLL_MSG_PORTS || io->src_port >= ATOLL_MSG_PORTS ||
	    io->len > ATOLL_MSG_MAX)
		return -EINVAL;
	return 0;
}

/* ATOLL_IOC_MSG_SEND to e's LWK, or to the caller's own port on Linux when e is NULL. */
int atoll_usermsg_send(struct atoll_enclave *e, struct atoll_msg_io *io)
{
	struct atoll_user_msg *h;
	int ret = check_io(io);

	if (ret)
		return ret;
	h = kmalloc(sizeof(*h) + io->len, GFP_KERNEL);
	if (!h)
		return -ENOMEM;
	*h = (struct atoll_user_msg){ .dest_port = io->port, .src_port = io->src_port,
				      .len = io->len };
	if (copy_from_user(h + 1, u64_to_user_ptr(io->buf_ptr), io->len))
		ret = -EFAULT;
	else if (!e)
		ret = deliver(current_euid(), io->port, ATOLL_KERNEL_LINUX, io->src_port, h + 1,
			      io->len, GFP_KERNEL);
	else if (atoll_lwk_state(e) != ATOLL_ENCLAVE_RUNNING)
		ret = -EHOSTDOWN;
	else
		ret = atoll_kmsg_send(e, ATOLL_KMSG_USER, h, sizeof(*h) + io->len);
	kfree(h);
	return ret;
}

static struct port_msg *take(struct user_ports *u, u16 port)
{
	struct port_msg *m;
	size_t size;

	spin_lock_irq(&ports_lock);
	m = list_first_entry_or_null(&u->port[port].msgs, struct port_msg, node);
	if (m) {
		list_del(&m->node);
		u->port[port].count--;
		size = ksize(m);
		u->bytes -= size;
		all_bytes -= size;
	}
	spin_unlock_irq(&ports_lock);
	return m;
}

/* ATOLL_IOC_MSG_RECV on the caller's own port: waits without a lock held (it may take long). */
long atoll_usermsg_recv(unsigned long arg)
{
	struct atoll_msg_io io;
	struct port_msg *m = NULL;
	struct user_ports *u;
	long left, timeout;
	int ret;

	if (copy_from_user(&io, (void __user *)arg, sizeof(io)))
		return -EFAULT;
	ret = atoll_req_check(&io.hdr, sizeof(io), ATOLL_MAGIC_MSG) ?: check_io(&io);
	if (ret)
		return ret;
	u = ports_of(current_euid(), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
	timeout = io.timeout_ms < 0 ? MAX_SCHEDULE_TIMEOUT : msecs_to_jiffies(io.timeout_ms);
	left = wait_event_interruptible_timeout(u->wq, (m = take(u, io.port)), timeout);
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
