// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control channel: two one-way rings in the enclave's shared area.
 * Linux -> LWK: a message, then ATOLL_LWK_VECTOR to the enclave's first CPU.
 * LWK -> Linux: a message, then Linux's platform IPI, whose callback drains
 * every enclave's ring here. Waiters also drain it themselves, so a lost
 * (or, where the hook is taken, absent) interrupt only delays them.
 * The same drain watches a bound program's doorbell (program.c): the LWK
 * rings it with the same interrupt when it posts a delegated call.
 */
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <asm/apic.h>
#include "atoll.h"

static bool hooked;

void atoll_channel_init(struct atoll_enclave *e)
{
	struct atoll_channel *c = e->channel;

	memset(c, 0, sizeof(*c));
	c->hdr = (struct atoll_header){ ATOLL_MAGIC_CHANNEL, ATOLL_ABI_VERSION, sizeof(*c), 0 };
	c->lwk_state = ATOLL_LWK_BOOTING;
}

static void handle(struct atoll_enclave *e, const struct atoll_msg *m)
{
	switch (m->type) {
	case ATOLL_MSG_BOOTED:
		e->booted_cpus = m->arg[0];
		e->booted = true;
		break;
	case ATOLL_MSG_PONG:
		e->pong_cookie = m->arg[0];
		break;
	case ATOLL_MSG_PANIC:
		if (!e->crashed)
			pr_err("atoll: enclave %s crashed on its CPU %llu; `atoll console %s` shows why\n",
			       e->name, m->arg[0], e->name);
		e->crashed = true;
		break;
	case ATOLL_MSG_STOPPED:
		e->stopped = true;
		break;
	case ATOLL_MSG_PROC_CREATED:
		e->proc_result = (s64)m->arg[0];
		e->proc_pid = m->arg[1];
		/* Result and pid first: program.c reads them after an acquire. */
		smp_store_release(&e->proc_created, true);
		break;
	case ATOLL_MSG_PROC_EXIT:
		e->proc_wait_status = m->arg[0];
		/* The status first: program.c reads it after an acquire. */
		smp_store_release(&e->proc_exited, true);
		break;
	case ATOLL_MSG_PROC_FREED:
		e->proc_freed = true;
		break;
	default:
		pr_warn_ratelimited("atoll: enclave %s sent unknown message %u\n",
				    e->name, m->type);
	}
}

/* Takes every message the LWK has sent; callable from any context. */
void atoll_channel_drain(struct atoll_enclave *e)
{
	struct atoll_ring *r = &e->channel->to_host;
	unsigned long flags;
	struct atoll_msg m;
	bool any = false, wake_program = false;
	u32 tail, doorbell;

	spin_lock_irqsave(&e->msg_lock, flags);
	tail = r->tail;
	/* The LWK writes a message before it moves head (release). */
	while (tail != smp_load_acquire(&r->head)) {
		m = r->slot[tail % ATOLL_RING_SLOTS];
		/* The copy is made before the LWK may reuse the slot. */
		smp_store_release(&r->tail, ++tail);
		handle(e, &m);
		any = true;
	}
	/* A crash the LWK could not put into the ring still shows in its state. */
	if (READ_ONCE(e->channel->lwk_state) == ATOLL_LWK_CRASHED && !e->crashed) {
		pr_err("atoll: enclave %s crashed; `atoll console %s` shows why\n",
		       e->name, e->name);
		e->crashed = true;
		any = true;
	}
	/* A bound program's workers wait for a new request, its exit or a crash. */
	if (e->program) {
		doorbell = READ_ONCE(atoll_proc_area(e)->doorbell);
		wake_program = any || doorbell != e->seen_doorbell;
		e->seen_doorbell = doorbell;
	}
	spin_unlock_irqrestore(&e->msg_lock, flags);
	if (any)
		wake_up_all(&e->wq);
	if (wake_program)
		wake_up_all(&e->prog_wq);
}

/*
 * Sends one message to the LWK; -EBUSY when the ring is full. Program
 * ioctls send without atoll_lock, so producers take send_lock.
 */
int atoll_channel_send(struct atoll_enclave *e, u32 type, u64 arg0)
{
	struct atoll_ring *r = &e->channel->to_lwk;
	unsigned long flags;
	struct atoll_msg *m;
	u32 head;

	spin_lock_irqsave(&e->send_lock, flags);
	head = r->head;
	/* The LWK moves tail (release) once it has copied the message out. */
	if (head - smp_load_acquire(&r->tail) >= ATOLL_RING_SLOTS) {
		spin_unlock_irqrestore(&e->send_lock, flags);
		return -EBUSY;
	}
	m = &r->slot[head % ATOLL_RING_SLOTS];
	m->type = type;
	m->seq = ++e->to_lwk_seq;
	m->arg[0] = arg0;
	m->arg[1] = 0;
	m->arg[2] = 0;
	/* The message is complete before the LWK sees head move. */
	smp_store_release(&r->head, head + 1);
	atoll_apic_send(e->apic_ids[0], APIC_DM_FIXED | ATOLL_LWK_VECTOR);
	spin_unlock_irqrestore(&e->send_lock, flags);
	return 0;
}

static void platform_ipi(void)
{
	atoll_enclave_for_each(atoll_channel_drain);
}

int atoll_channel_start(void)
{
	void (**hook)(void) = atoll_platform_ipi_hook();

	hooked = !cmpxchg(hook, NULL, platform_ipi);
	if (!hooked)
		pr_warn("atoll: the platform IPI is in use by another driver; the LWK's messages are polled\n");
	return 0;
}

void atoll_channel_stop(void)
{
	if (hooked) {
		cmpxchg(atoll_platform_ipi_hook(), platform_ipi, NULL);
		/* Interrupt handlers still running the callback finish first. */
		synchronize_rcu();
	}
}
