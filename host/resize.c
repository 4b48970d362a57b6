// SPDX-License-Identifier: GPL-2.0-only
/*
 * Resizing a running enclave (abi/atoll_abi.h, "Resizing a running
 * enclave"): memory blocks offlined and added while it runs, and taken
 * back, each block acknowledged by the LWK. A refused or missing answer
 * leaves the enclave and Linux as they were: a block goes back to Linux
 * only once the LWK said it no longer has it. Every resize is recorded in
 * the enclave's history (atoll status).
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
	e->mem_answer_type = m->type;
	e->mem_answer_phys = atoll_kmsg_word(m, 0);
	e->mem_answer_result = (s64)atoll_kmsg_word(m, 1);
	/* The answer first: ask_lwk() takes mem_answered with an acquire. */
	smp_store_release(&e->mem_answered, true);
	spin_unlock(&e->msg_lock);
}

int atoll_resize_init(void)
{
	return atoll_kmsg_register(ATOLL_KMSG_MEM_ADDED, on_answer) ?:
	       atoll_kmsg_register(ATOLL_KMSG_MEM_REMOVED, on_answer);
}

/* A late ADDED must not pass for the REMOVED awaited next, or the reverse. */
static bool answered(struct atoll_enclave *e, u16 type, u64 phys)
{
	/* Pairs with the release in on_answer(). */
	return smp_load_acquire(&e->mem_answered) && READ_ONCE(e->mem_answer_type) == type &&
	       READ_ONCE(e->mem_answer_phys) == phys;
}

/* Sends MEM_ADD or MEM_REMOVE for the block at phys: the LWK's result, or -ETIMEDOUT. */
static int ask_lwk(struct atoll_enclave *e, u16 kind, u64 phys, u64 *lwk_ns)
{
	u64 words[2] = { phys, e->block_size }, t = ktime_get_ns();
	unsigned long deadline = jiffies + msecs_to_jiffies(ATOLL_RESIZE_WAIT_MS);
	u16 answer = kind == ATOLL_KMSG_MEM_ADD ? ATOLL_KMSG_MEM_ADDED : ATOLL_KMSG_MEM_REMOVED;
	unsigned long flags;
	int ret;

	WRITE_ONCE(e->mem_answered, false);
	ret = atoll_kmsg_send_wait(e, kind, words, sizeof(words));
	while (!ret && !answered(e, answer, phys)) {
		if (time_after(jiffies, deadline) || atoll_lwk_state(e) != ATOLL_ENCLAVE_RUNNING)
			ret = -ETIMEDOUT;
		else
			wait_event_timeout(e->wq, answered(e, answer, phys),
					   msecs_to_jiffies(ATOLL_RESIZE_POLL_MS));
		atoll_lwk_poll(e);
	}
	*lwk_ns += ktime_get_ns() - t;
	if (!ret) {
		spin_lock_irqsave(&e->msg_lock, flags);
		ret = e->mem_answer_result;
		spin_unlock_irqrestore(&e->msg_lock, flags);
	}
	return ret;
}

/*
 * Takes back from the LWK blocks [keep, block_count), last first, and
 * gives each to Linux once the LWK has let it go; stops at one the LWK
 * keeps (or does not answer for), which stays the enclave's. The blocks
 * it holds afterwards.
 */
static u32 take_back(struct atoll_enclave *e, u32 keep, u32 never_sent, u64 *lwk_ns)
{
	u32 i;
	int ret;

	for (i = e->block_count; i-- > keep;) {
		ret = i >= never_sent ? 0 : ask_lwk(e, ATOLL_KMSG_MEM_REMOVE,
						    atoll_block_phys(e, i), lwk_ns);
		/* -EINVAL: the LWK never had it. */
		if (ret && ret != -EINVAL)
			break;
		atoll_memory_give_back_to(e, i);
	}
	return e->block_count;
}

static int add_memory(struct atoll_enclave *e, struct atoll_resize *req)
{
	u32 first = e->block_count, i;
	u64 t = ktime_get_ns();
	int ret;

	ret = atoll_memory_take(e, req->bytes, req->error);
	req->linux_ns = ktime_get_ns() - t;
	if (ret)
		return ret;
	for (i = first; i < e->block_count; i++) {
		ret = ask_lwk(e, ATOLL_KMSG_MEM_ADD, atoll_block_phys(e, i), &req->lwk_ns);
		if (ret)
			break;
	}
	if (!ret)
		return 0;
	atoll_err(req->error, "enclave %s did not take the block at %#llx (%s): nothing added",
		  e->name, atoll_block_phys(e, i),
		  ret == -ETIMEDOUT ? "no answer" : "refused");
	t = ktime_get_ns();
	if (take_back(e, first, i + 1, &req->lwk_ns) > first)
		atoll_err(req->error, "enclave %s did not take the block at %#llx and does not answer about it: %u blocks stay offline until it is destroyed",
			  e->name, atoll_block_phys(e, i), e->block_count - first);
	req->linux_ns += ktime_get_ns() - t;
	return ret;
}

static int remove_memory(struct atoll_enclave *e, struct atoll_resize *req)
{
	u64 n = req->bytes / e->block_size;
	u32 had = e->block_count, i;
	u64 t;
	int ret = 0;

	if (n > had - e->boot_blocks) {
		atoll_err(req->error, "enclave %s has %llu MiB added with atoll add; only that can be removed (its first %llu MiB stay)",
			  e->name, (u64)(had - e->boot_blocks) * e->block_size >> 20,
			  (u64)e->boot_blocks * e->block_size >> 20);
		return -EINVAL;
	}
	/* All from the LWK first: if one is in use, the others go back to it. */
	for (i = had; i-- > had - n;) {
		ret = ask_lwk(e, ATOLL_KMSG_MEM_REMOVE, atoll_block_phys(e, i), &req->lwk_ns);
		/* -EINVAL: the LWK no longer has it (an earlier removal it answered late). */
		if (ret && ret != -EINVAL)
			break;
		ret = 0;
	}
	if (ret) {
		if (ret == -EBUSY)
			atoll_err(req->error, "the block at %#llx holds memory of enclave %s's programs: nothing removed",
				  atoll_block_phys(e, i), e->name);
		else
			atoll_err(req->error, "the block at %#llx: enclave %s did not let it go: nothing removed",
				  atoll_block_phys(e, i), e->name);
		while (++i < had)
			if (ask_lwk(e, ATOLL_KMSG_MEM_ADD, atoll_block_phys(e, i), &req->lwk_ns))
				pr_warn("atoll: enclave %s did not take back the block at %#llx\n",
					e->name, atoll_block_phys(e, i));
		return ret;
	}
	t = ktime_get_ns();
	/* No `atoll run` may still map a page of these blocks when Linux reuses them. */
	atoll_mirror_zap_all();
	atoll_memory_give_back_to(e, had - n);
	req->linux_ns = ktime_get_ns() - t;
	return 0;
}

static void record(struct atoll_enclave *e, struct atoll_resize *req, int ret)
{
	e->resize[e->resizes++ % ATOLL_RESIZE_HISTORY] = (struct atoll_resize_event){
		.at_ns = ktime_get_ns() - e->created_ns, .op = req->op, .result = ret,
		.amount = req->bytes, .linux_ns = req->linux_ns, .lwk_ns = req->lwk_ns };
}

/* ATOLL_IOC_RESIZE, under atoll_lock, for a running enclave. */
int atoll_resize(struct atoll_enclave *e, struct atoll_resize *req)
{
	int ret;

	req->linux_ns = 0;
	req->lwk_ns = 0;
	if (!req->bytes || req->bytes % e->block_size) {
		atoll_err(req->error, "memory is added and removed in whole %llu MiB blocks",
			  e->block_size >> 20);
		return -EINVAL;
	}
	switch (req->op) {
	case ATOLL_RESIZE_ADD_MEM:
		ret = add_memory(e, req);
		break;
	case ATOLL_RESIZE_REMOVE_MEM:
		ret = remove_memory(e, req);
		break;
	default:
		atoll_err(req->error, "unknown resize operation %u", req->op);
		return -EINVAL;
	}
	record(e, req, ret);
	return ret;
}

/* The last resizes, oldest first. */
void atoll_resize_history(struct atoll_enclave *e, struct atoll_enclave_info *out)
{
	u32 n = min_t(u32, e->resizes, ATOLL_RESIZE_HISTORY), i;

	out->resizes = e->resizes;
	for (i = 0; i < n; i++)
		out->resize[i] = e->resize[(e->resizes - n + i) % ATOLL_RESIZE_HISTORY];
}
