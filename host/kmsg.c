// SPDX-License-Identifier: GPL-2.0-only
/*
 * The one transport between Linux and the LWKs (Popcorn's messaging layer):
 * a ring each way in every enclave's shared area, a handler per message
 * type registered by the protocol that owns it (lifecycle.c, program.c),
 * and interrupts: ATOLL_LWK_VECTOR to the LWK after a message, Linux's
 * platform IPI from it, whose callback polls every link. Waiters poll too,
 * so a lost interrupt (or a platform IPI held by another driver) only
 * delays them. This file knows no protocol. Its exports are for the test
 * module (host/atoll_test/), whose protocols come and go with it.
 */
#include <linux/rcupdate.h>
#include <linux/delay.h>
#include <linux/export.h>
#include <linux/vmalloc.h>
#include <asm/apic.h>
#include <asm/irq_vectors.h>
#include "atoll.h"

static atoll_kmsg_handler handlers[ATOLL_KMSG_MAX_TYPES];
static LIST_HEAD(links);
static DEFINE_SPINLOCK(links_lock);	/* also taken in the platform IPI */
static bool hooked;
static atomic64_t platform_ipis;	/* for the benchmarks' bare IPI round trip */

/* Taken once, at module load, by the protocol that owns the type. */
int atoll_kmsg_register(u16 type, atoll_kmsg_handler fn)
{
	if (!type || type >= ATOLL_KMSG_MAX_TYPES || handlers[type]) {
		pr_err("atoll: message type %u cannot be registered\n", type);
		return -EINVAL;
	}
	WRITE_ONCE(handlers[type], fn);
	return 0;
}
EXPORT_SYMBOL_GPL(atoll_kmsg_register);

/*
 * Gives the type up (the test module's unload): once this returns no CPU
 * runs its handler, as dispatch() runs with interrupts off.
 */
void atoll_kmsg_unregister(u16 type)
{
	if (type && type < ATOLL_KMSG_MAX_TYPES)
		WRITE_ONCE(handlers[type], NULL);
	synchronize_rcu();
}
EXPORT_SYMBOL_GPL(atoll_kmsg_unregister);

/* Makes both rings in e's shared area and starts listening to them. */
int atoll_kmsg_link_init(struct atoll_enclave *e)
{
	struct atoll_kmsg_link *l = &e->link;
	unsigned long flags;

	l->buf = vmalloc(ATOLL_KMSG_MAX_LEN);
	if (!l->buf)
		return -ENOMEM;
	spin_lock_init(&l->rx_lock);
	atoll_kring_init(&l->out, e->shared + ATOLL_KMSG_TO_LWK_OFFSET, ATOLL_KMSG_RING_SLOTS, 1);
	atoll_kring_init(&l->in, e->shared + ATOLL_KMSG_TO_HOST_OFFSET, ATOLL_KMSG_RING_SLOTS, 1);
	l->rx = (struct atoll_kreceiver){ .next = 0, .index = 0, .count = 1 };
	l->apic_id = e->apic_ids[0];
	l->broken = false;
	l->rx_buf = l->buf;
	spin_lock_irqsave(&links_lock, flags);
	list_add_tail(&l->node, &links);
	spin_unlock_irqrestore(&links_lock, flags);
	return 0;
}

/* Stops listening; the platform IPI no longer reaches e afterwards. */
void atoll_kmsg_link_exit(struct atoll_enclave *e)
{
	struct atoll_kmsg_link *l = &e->link;
	unsigned long flags;
	u8 *buf;

	if (!l->buf)
		return;
	spin_lock_irqsave(&links_lock, flags);
	list_del(&l->node);
	spin_unlock_irqrestore(&links_lock, flags);
	/* A poll running elsewhere finishes with the buffer first. */
	spin_lock_irqsave(&l->rx_lock, flags);
	buf = l->buf;
	l->buf = NULL;
	WRITE_ONCE(l->rx_buf, NULL);
	spin_unlock_irqrestore(&l->rx_lock, flags);
	vfree(buf);
}

/* Interrupts e's LWK unless it polls. */
static __always_inline void notify(struct atoll_kmsg_link *l)
{
	if (!atoll_kring_polling(&l->out, 0))
		atoll_apic_send(l->apic_id, APIC_DM_FIXED | ATOLL_LWK_VECTOR);
}

/* atoll_kmsg_send of what is not a one-slot message into a ring with room. */
static noinline __cold int send_any(struct atoll_enclave *e, u16 type, const void *data, u32 len)
{
	int ret = atoll_kring_send_any(&e->link.out, type, data, len, 1);

	/* A full ring interrupts too, in case the LWK missed a notification. */
	if (ret != -EINVAL)
		notify(&e->link);
	return ret;
}

/* atoll_kmsg_send of what is not a full slot's payload. */
static noinline int send_short(struct atoll_enclave *e, u16 type, const void *data, u32 len)
{
	if (unlikely(!atoll_kring_send_one(&e->link.out, type, data, len, 1)))
		return send_any(e, type, data, len);
	notify(&e->link);
	return 0;
}

/*
 * Sends a message to e's LWK and interrupts it unless it polls; -EAGAIN
 * when the ring is full (nothing is overwritten). Any context. A full
 * slot's payload is copied here, a known size: no registers to keep for
 * a copy of any length (send_short).
 */
int atoll_kmsg_send(struct atoll_enclave *e, u16 type, const void *data, u32 len)
{
	if (len != ATOLL_KMSG_HEAD_DATA)
		return send_short(e, type, data, len);
	if (unlikely(!atoll_kring_send_one(&e->link.out, type, data, ATOLL_KMSG_HEAD_DATA, 1)))
		return send_any(e, type, data, len);
	notify(&e->link);
	return 0;
}
EXPORT_SYMBOL_GPL(atoll_kmsg_send);

/* As atoll_kmsg_send, waiting up to 100-200 ms for room (process context). */
int atoll_kmsg_send_wait(struct atoll_enclave *e, u16 type, const void *data, u32 len)
{
	int tries, ret = -EAGAIN;

	for (tries = 0; tries < 100 && !READ_ONCE(e->crashed); tries++) {
		ret = atoll_kmsg_send(e, type, data, len);
		if (ret != -EAGAIN)
			break;
		usleep_range(1000, 2000);
	}
	return ret;
}
EXPORT_SYMBOL_GPL(atoll_kmsg_send_wait);

/* The payload's i-th u64, 0 past its end: short messages read as zeros. */
u64 atoll_kmsg_word(const struct atoll_kmsg *m, u32 i)
{
	u64 w = 0;

	if ((i + 1) * sizeof(w) <= m->len)
		memcpy(&w, m->data + i * sizeof(w), sizeof(w));
	return w;
}
EXPORT_SYMBOL_GPL(atoll_kmsg_word);

static __always_inline void dispatch(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	atoll_kmsg_handler fn = NULL;

	if (m->type < ATOLL_KMSG_MAX_TYPES)
		fn = READ_ONCE(handlers[m->type]);
	if (fn)
		fn(e, m);
	else
		pr_warn_ratelimited("atoll: enclave %s sent unknown message type %u; ignored\n",
				    e->name, m->type);
}

/* receive() of what is not a one-slot message (its arguments made here, off the path). */
static noinline __cold int receive_any(struct atoll_enclave *e)
{
	struct atoll_kmsg_link *l = &e->link;

	return atoll_kring_receive_any(&l->in, &l->rx, l->rx_buf, &l->msg, &l->why);
}

/*
 * The next message from e's LWK into its link's msg, as atoll_kring_receive
 * (under rx_lock; the link's ring has one receiver, Linux).
 */
static __always_inline int receive(struct atoll_enclave *e)
{
	struct atoll_kmsg_link *l = &e->link;
	/* rx_buf: one test says the link is up and its ring not broken. */
	u8 *buf = l->rx_buf;
	int ret;

	if (unlikely(!buf))
		return 0;
	ret = atoll_kring_receive_one(&l->in, &l->rx, buf, &l->msg, true);
	if (unlikely(ret == -E2BIG))
		return receive_any(e);
	return ret;
}

/*
 * Handles every message e's LWK has sent; any context. The message and
 * the reason a ring broke live in the link (under rx_lock), not on the
 * stack: the one-slot message's path takes no stack canary.
 */
void atoll_kmsg_poll(struct atoll_enclave *e)
{
	struct atoll_kmsg_link *l = &e->link;
	unsigned long flags;
	bool any = false;
	int ret;

	/* spin_lock_irqsave, with the interrupts masked inline. */
	local_irq_save(flags);
	spin_lock(&l->rx_lock);
	/*
	 * The first message before the loop: what the loop keeps in
	 * registers is set up after its handler, not on its path.
	 */
	ret = receive(e);
	if (ret > 0) {
		dispatch(e, &l->msg);
		any = true;
		while ((ret = receive(e)) > 0)
			dispatch(e, &l->msg);
	}
	if (unlikely(ret < 0)) {
		any = true;
		WRITE_ONCE(l->broken, true);
		WRITE_ONCE(l->rx_buf, NULL);
		pr_err("atoll: enclave %s broke the message protocol (%s); nothing more is read from it\n",
		       e->name, l->why);
	}
	spin_unlock(&l->rx_lock);
	local_irq_restore(flags);
	if (any)
		wake_up_all(&e->wq);
}
EXPORT_SYMBOL_GPL(atoll_kmsg_poll);

/*
 * Whether a message from e's LWK waits whole in its ring (no lock: a racy
 * look, for a poller that wants to know before it polls).
 */
bool atoll_kmsg_waiting(struct atoll_enclave *e)
{
	struct atoll_kmsg_link *l = &e->link;

	return READ_ONCE(l->rx_buf) && atoll_kring_ready(&l->in, &l->rx);
}
EXPORT_SYMBOL_GPL(atoll_kmsg_waiting);

/*
 * Whether Linux polls e's messages (a check's or benchmark's flood): the
 * LWK sends no interrupts meanwhile. Poll once more after turning it off,
 * as a message may have come while it was on.
 */
void atoll_kmsg_polling(struct atoll_enclave *e, bool on)
{
	atoll_kring_set_polling(&e->link.in, 0, on);
}
EXPORT_SYMBOL_GPL(atoll_kmsg_polling);

bool atoll_kmsg_broken(struct atoll_enclave *e)
{
	return READ_ONCE(e->link.broken);
}

/* Platform IPIs taken so far. */
u64 atoll_kmsg_ipis(void)
{
	return atomic64_read(&platform_ipis);
}
EXPORT_SYMBOL_GPL(atoll_kmsg_ipis);

/* Whether the LWK's interrupts reach Linux (else its messages are polled). */
bool atoll_kmsg_hooked(void)
{
	return READ_ONCE(hooked);
}

static void platform_ipi(void)
{
	struct atoll_kmsg_link *l;

	atomic64_inc(&platform_ipis);
	spin_lock(&links_lock);
	list_for_each_entry(l, &links, node)
		atoll_kmsg_poll(container_of(l, struct atoll_enclave, link));
	spin_unlock(&links_lock);
}

int atoll_kmsg_start(void)
{
	void (**hook)(void) = atoll_platform_ipi_hook();

	/* The LWK sends ATOLL_HOST_VECTOR (abi/src/lib.rs): it must be this one. */
	BUILD_BUG_ON(ATOLL_HOST_VECTOR != X86_PLATFORM_IPI_VECTOR);
	hooked = !cmpxchg(hook, NULL, platform_ipi);
	if (!hooked)
		pr_warn("atoll: the platform IPI is in use by another driver; the LWK's messages are polled\n");
	return 0;
}

void atoll_kmsg_stop(void)
{
	if (hooked) {
		cmpxchg(atoll_platform_ipi_hook(), platform_ipi, NULL);
		/* Interrupt handlers still running the callback finish first. */
		synchronize_rcu();
	}
}
