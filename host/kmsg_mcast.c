// SPDX-License-Identifier: GPL-2.0-only
/*
 * ATOLL_IOC_KMSG_MCAST: multicast checked and timed (abi/atoll_abi.h,
 * "Multicast"). Linux lends the LWKs one ring they all receive from,
 * writes each check message into it once for all of them, then sends the
 * same messages as unicasts to each; every LWK counts what arrived intact
 * and in order (its side is in the test image, kmsg-check's). One at a
 * time, under atoll_lock.
 */
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/vmalloc.h>
#include <asm/apic.h>
#include "atoll.h"

#define MCAST_WAIT_NS	(10ULL * NSEC_PER_SEC)	/* for the LWKs, each step */

static u32 next_group = 1;

static void on_joined(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	e->group_result = (s64)atoll_kmsg_word(m, 1);
	/* The result first: readers take group_joined with an acquire. */
	smp_store_release(&e->group_joined, atoll_kmsg_word(m, 0));
}

static void on_left(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	WRITE_ONCE(e->group_left, atoll_kmsg_word(m, 0));
}

int atoll_kmsg_mcast_init(void)
{
	return atoll_kmsg_register(ATOLL_KMSG_GROUP_JOINED, on_joined) ?:
	       atoll_kmsg_register(ATOLL_KMSG_GROUP_LEFT, on_left);
}

/* Polls every LWK until done(e) holds for each, or MCAST_WAIT_NS. */
static int wait_all(struct atoll_enclave **es, u32 n,
		    bool (*done)(struct atoll_enclave *e, u64 arg), u64 arg)
{
	u64 deadline = ktime_get_ns() + MCAST_WAIT_NS;
	u32 i, ready;

	for (;;) {
		for (i = 0, ready = 0; i < n; i++) {
			atoll_lwk_poll(es[i]);
			ready += done(es[i], arg);
		}
		if (ready == n)
			return 0;
		if (ktime_get_ns() > deadline || fatal_signal_pending(current))
			return -ETIMEDOUT;
		cond_resched();
	}
}

static bool joined(struct atoll_enclave *e, u64 group)
{
	/* Pairs with the release in on_joined(). */
	return smp_load_acquire(&e->group_joined) == group;
}

static bool left(struct atoll_enclave *e, u64 group)
{
	return READ_ONCE(e->group_left) == group;
}

static bool reported(struct atoll_enclave *e, u64 unused)
{
	/* Pairs with the release in kmsg_check.c's on_report(). */
	return smp_load_acquire(&e->check_reported);
}

/* Interrupts every receiver of the group ring that does not poll. */
static void notify(struct atoll_kring *ring, struct atoll_enclave **es, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (!atoll_kring_polling(ring, i))
			atoll_apic_send(es[i]->apic_ids[0], APIC_DM_FIXED | ATOLL_LWK_VECTOR);
}

/* One message to every receiver of the group ring, waiting for room. */
static int group_send(struct atoll_kring *ring, struct atoll_enclave **es, u32 n, u16 type,
		      const void *data, u32 len)
{
	int ret;

	while ((ret = atoll_kring_send(ring, type, data, len, n)) == -EAGAIN) {
		if (fatal_signal_pending(current))
			return -EINTR;
		notify(ring, es, n);	/* a receiver that missed one drains it */
		cond_resched();
	}
	notify(ring, es, n);
	return ret;
}

/* Sends the check messages (into the group ring, or to each LWK), then END; waits for reports. */
static int phase(struct atoll_enclave **es, u32 n, struct atoll_kring *ring,
		 struct atoll_kmsg_mcast_req *req, u8 *buf, u64 *ns)
{
	u64 t0 = ktime_get_ns(), count = req->count;
	u32 seq, i;
	int ret = 0;

	for (i = 0; i < n; i++)
		WRITE_ONCE(es[i]->check_reported, false);
	for (seq = 0; seq < req->count && !ret; seq++) {
		atoll_kmsg_check_fill(buf, req->len, 0, seq);
		if (ring)
			ret = group_send(ring, es, n, ATOLL_KMSG_CHECK, buf, req->len);
		for (i = 0; i < n && !ring && !ret; i++)
			ret = atoll_kmsg_check_send(es[i], ATOLL_KMSG_CHECK, buf, req->len);
	}
	/* END follows the messages on their own ring: rings do not order each other. */
	if (ring && !ret)
		ret = group_send(ring, es, n, ATOLL_KMSG_CHECK_END, &count, sizeof(count));
	for (i = 0; i < n && !ring && !ret; i++)
		ret = atoll_kmsg_send_wait(es[i], ATOLL_KMSG_CHECK_END, &count, sizeof(count));
	if (!ret)
		ret = wait_all(es, n, reported, 0);
	*ns = ktime_get_ns() - t0;
	for (i = 0; i < n && !ret; i++) {
		req->received[i] += es[i]->check_received;
		req->bad[i] += es[i]->check_bad;
	}
	return ret;
}

/* Asks each LWK to leave the group; true if every one has unmapped the block. */
static bool leave(struct atoll_enclave **es, u32 n, u64 group)
{
	u32 i;

	/* Every one: an LWK that never mapped it answers all the same. */
	for (i = 0; i < n; i++)
		atoll_kmsg_send_wait(es[i], ATOLL_KMSG_GROUP_LEAVE, &group, sizeof(group));
	return !wait_all(es, n, left, group);
}

int atoll_kmsg_mcast(struct atoll_enclave **es, u32 n, struct atoll_kmsg_mcast_req *req)
{
	size_t size = PAGE_ALIGN(ATOLL_KMSG_RING_BYTES(ATOLL_KMSG_RING_SLOTS));
	u64 group = next_group++;
	struct atoll_kmsg_group join;
	struct atoll_kring ring;
	void *block;
	u8 *buf;
	u32 i;
	int ret;

	if (req->len < sizeof(struct atoll_kmsg_check) || req->len > ATOLL_KMSG_MAX_LEN ||
	    !req->count) {
		atoll_err(req->error, "check messages are %zu to %u bytes long, and at least one is sent",
			  sizeof(struct atoll_kmsg_check), ATOLL_KMSG_MAX_LEN);
		return -EINVAL;
	}
	buf = vmalloc(req->len);
	block = alloc_pages_exact(size, GFP_KERNEL | __GFP_ZERO);
	if (!buf || !block) {
		ret = -ENOMEM;
		goto out;
	}
	atoll_kring_init(&ring, block, ATOLL_KMSG_RING_SLOTS, n);
	join = (struct atoll_kmsg_group){ .group = group, .count = n,
		.slots = ATOLL_KMSG_RING_SLOTS, .block_phys = virt_to_phys(block),
		.block_size = size };
	for (i = 0, ret = 0; i < n && !ret; i++) {
		join.index = i;
		WRITE_ONCE(es[i]->group_joined, 0);
		ret = atoll_kmsg_send_wait(es[i], ATOLL_KMSG_GROUP_JOIN, &join, sizeof(join));
	}
	ret = ret ?: wait_all(es, n, joined, group);
	for (i = 0; i < n && !ret; i++)
		if (es[i]->group_result)
			ret = -EIO;
	if (ret)
		atoll_err(req->error, "the LWKs did not all join the multicast ring (error %d)",
			  ret);
	else
		ret = phase(es, n, &ring, req, buf, &req->mcast_ns) ?:
		      phase(es, n, NULL, req, buf, &req->unicast_ns);
	if (ret && !req->error[0])
		atoll_err(req->error, "not every LWK reported within %llu s; the check needs the LWK's test image",
			  MCAST_WAIT_NS / NSEC_PER_SEC);
	if (!leave(es, n, group)) {
		pr_warn("atoll: an LWK did not unmap multicast ring %llu; it stays allocated\n",
			group);
		block = NULL;
	}
out:
	if (block)
		free_pages_exact(block, size);
	vfree(buf);
	return ret;
}
