// SPDX-License-Identifier: GPL-2.0-only
/*
 * One resize command to the LWK (a block or a CPU to add or remove) and
 * its answer, which names the block or CPU it is about: a late answer to
 * an earlier command never passes for the one awaited now.
 */
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/wait.h>
#include "atoll.h"

#define ATOLL_RESIZE_WAIT_MS	5000
#define ATOLL_RESIZE_POLL_MS	10	/* a lost interrupt only delays an answer */

static void on_answer(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	spin_lock(&e->msg_lock);
	e->resize_answer_type = m->type;
	e->resize_answer_key = atoll_kmsg_word(m, 0);
	e->resize_answer_result = (s64)atoll_kmsg_word(m, 1);
	/* The answer first: atoll_resize_ask() takes resize_answered with an acquire. */
	smp_store_release(&e->resize_answered, true);
	spin_unlock(&e->msg_lock);
}

int atoll_resize_init(void)
{
	BUILD_BUG_ON(ATOLL_KMSG_MEM_ADD + 1 != ATOLL_KMSG_MEM_ADDED ||
		     ATOLL_KMSG_MEM_REMOVE + 1 != ATOLL_KMSG_MEM_REMOVED ||
		     ATOLL_KMSG_CPU_ADD + 1 != ATOLL_KMSG_CPU_ADDED ||
		     ATOLL_KMSG_CPU_REMOVE + 1 != ATOLL_KMSG_CPU_REMOVED);
	return atoll_kmsg_register(ATOLL_KMSG_MEM_ADDED, on_answer) ?:
	       atoll_kmsg_register(ATOLL_KMSG_MEM_REMOVED, on_answer) ?:
	       atoll_kmsg_register(ATOLL_KMSG_CPU_ADDED, on_answer) ?:
	       atoll_kmsg_register(ATOLL_KMSG_CPU_REMOVED, on_answer);
}

static bool answered(struct atoll_enclave *e, u16 type, u64 key)
{
	/* Pairs with the release in on_answer(). */
	return smp_load_acquire(&e->resize_answered) && READ_ONCE(e->resize_answer_type) == type &&
	       READ_ONCE(e->resize_answer_key) == key;
}

/*
 * Sends command kind (words[0] names the block or CPU) and waits for its
 * answer: the LWK's result, or -ETIMEDOUT. Adds the time to *lwk_ns.
 */
int atoll_resize_ask(struct atoll_enclave *e, u16 kind, const u64 *words, u32 n, u64 *lwk_ns)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(ATOLL_RESIZE_WAIT_MS);
	u64 key = words[0], t = ktime_get_ns();
	unsigned long flags;
	u16 answer = kind + 1;	/* each *_ADDED / *_REMOVED follows its command */
	int ret;

	WRITE_ONCE(e->resize_answered, false);
	ret = atoll_kmsg_send_wait(e, kind, words, n * sizeof(u64));
	while (!ret && !answered(e, answer, key)) {
		if (time_after(jiffies, deadline) || atoll_lwk_state(e) != ATOLL_ENCLAVE_RUNNING)
			ret = -ETIMEDOUT;
		else
			wait_event_timeout(e->wq, answered(e, answer, key),
					   msecs_to_jiffies(ATOLL_RESIZE_POLL_MS));
		atoll_lwk_poll(e);
	}
	*lwk_ns += ktime_get_ns() - t;
	if (!ret) {
		spin_lock_irqsave(&e->msg_lock, flags);
		ret = e->resize_answer_result;
		spin_unlock_irqrestore(&e->msg_lock, flags);
	}
	return ret;
}
