// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory blocks added to a running enclave and taken back (atoll_abi.h,
 * "Resizing a running enclave"): offlined and added while it runs, each
 * block acknowledged by the LWK. A refused or missing answer leaves the
 * enclave and Linux as they were: a block goes back to Linux only once the
 * LWK said it no longer has it.
 */
#include <linux/ktime.h>
#include "atoll.h"

/* MEM_ADD or MEM_REMOVE for block i: the LWK's result, or -ETIMEDOUT. */
static int ask_block(struct atoll_enclave *e, u16 kind, u32 i, u64 *lwk_ns)
{
	u64 words[2] = { atoll_block_phys(e, i), e->block_size };

	return atoll_resize_ask(e, kind, words, 2, lwk_ns);
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
		ret = i >= never_sent ? 0 : ask_block(e, ATOLL_KMSG_MEM_REMOVE, i, lwk_ns);
		/* -EINVAL: the LWK never had it. */
		if (ret && ret != -EINVAL)
			break;
		atoll_mirror_zap_blocks(e, i, 1);
		atoll_memory_give_back_to(e, i);
	}
	return e->block_count;
}

int atoll_resize_add_memory(struct atoll_enclave *e, struct atoll_resize *req)
{
	u32 first = e->block_count, i;
	u64 t = ktime_get_ns();
	int ret;

	ret = atoll_memory_take(e, req->bytes, req->error);
	req->linux_ns = ktime_get_ns() - t;
	if (ret)
		return ret;
	for (i = first; i < e->block_count; i++) {
		ret = ask_block(e, ATOLL_KMSG_MEM_ADD, i, &req->lwk_ns);
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

int atoll_resize_remove_memory(struct atoll_enclave *e, struct atoll_resize *req)
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
		ret = ask_block(e, ATOLL_KMSG_MEM_REMOVE, i, &req->lwk_ns);
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
			if (ask_block(e, ATOLL_KMSG_MEM_ADD, i, &req->lwk_ns))
				pr_warn("atoll: enclave %s did not take back the block at %#llx\n",
					e->name, atoll_block_phys(e, i));
		return ret;
	}
	t = ktime_get_ns();
	/* No `atoll run` may still map a page of these blocks when Linux reuses them. */
	atoll_mirror_zap_blocks(e, had - n, n);
	atoll_memory_give_back_to(e, had - n);
	req->linux_ns = ktime_get_ns() - t;
	return 0;
}
