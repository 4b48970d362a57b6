// SPDX-License-Identifier: GPL-2.0-only
/*
 * Multicast (abi/atoll_abi.h, "Multicast"): Linux lends several LWKs one
 * ring they all receive from and writes each message into it once for all
 * of them. Each LWK joins (maps the block as one of the ring's receivers)
 * and leaves (unmaps it) when asked. The callers hold atoll_lock, so the
 * enclaves stay; today the only caller is the test module's multicast
 * check (host/atoll_test/kmsg_mcast.c).
 */
#include <linux/export.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <asm/apic.h>
#include "atoll.h"

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

int atoll_kgroup_init(void)
{
	return atoll_kmsg_register(ATOLL_KMSG_GROUP_JOINED, on_joined) ?:
	       atoll_kmsg_register(ATOLL_KMSG_GROUP_LEFT, on_left);
}

/*
 * Polls every LWK of es until done(e, arg) holds for each: -ETIMEDOUT
 * after ATOLL_LWKS_WAIT_S or when the caller is killed.
 */
int atoll_lwks_wait(struct atoll_enclave **es, u32 n,
		    bool (*done)(struct atoll_enclave *e, u64 arg), u64 arg)
{
	u64 deadline = ktime_get_ns() + ATOLL_LWKS_WAIT_S * NSEC_PER_SEC;
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
EXPORT_SYMBOL_GPL(atoll_lwks_wait);

static bool joined(struct atoll_enclave *e, u64 group)
{
	/* Pairs with the release in on_joined(). */
	return smp_load_acquire(&e->group_joined) == group;
}

static bool left(struct atoll_enclave *e, u64 group)
{
	return READ_ONCE(e->group_left) == group;
}

/* Asks each LWK to leave; true if every one has unmapped the block. */
static bool leave(struct atoll_kgroup *g)
{
	u32 i;

	/* Every one: an LWK that never mapped it answers all the same. */
	for (i = 0; i < g->n; i++)
		atoll_kmsg_send_wait(g->es[i], ATOLL_KMSG_GROUP_LEAVE, &g->id, sizeof(g->id));
	return !atoll_lwks_wait(g->es, g->n, left, g->id);
}

/* The LWKs leave the group and its block is freed, unless one still maps it. */
void atoll_kgroup_leave(struct atoll_kgroup *g)
{
	if (!leave(g)) {
		pr_warn("atoll: an LWK did not unmap multicast ring %llu; it stays allocated\n",
			g->id);
		return;
	}
	free_pages_exact(g->block, g->size);
}
EXPORT_SYMBOL_GPL(atoll_kgroup_leave);

/*
 * Lends the n LWKs of es (each named once, running) a new multicast ring
 * and waits until every one has joined it. On failure nothing is left and
 * err says why.
 */
int atoll_kgroup_join(struct atoll_kgroup *g, struct atoll_enclave **es, u32 n, char *err)
{
	struct atoll_kmsg_group join;
	u32 i;
	int ret;

	*g = (struct atoll_kgroup){ .es = es, .n = n, .id = next_group++,
		.size = PAGE_ALIGN(ATOLL_KMSG_RING_BYTES(ATOLL_KMSG_RING_SLOTS)) };
	g->block = alloc_pages_exact(g->size, GFP_KERNEL | __GFP_ZERO);
	if (!g->block)
		return -ENOMEM;
	atoll_kring_init(&g->ring, g->block, ATOLL_KMSG_RING_SLOTS, n);
	join = (struct atoll_kmsg_group){ .group = g->id, .count = n,
		.slots = ATOLL_KMSG_RING_SLOTS, .block_phys = virt_to_phys(g->block),
		.block_size = g->size };
	for (i = 0, ret = 0; i < n && !ret; i++) {
		join.index = i;
		WRITE_ONCE(es[i]->group_joined, 0);
		ret = atoll_kmsg_send_wait(es[i], ATOLL_KMSG_GROUP_JOIN, &join, sizeof(join));
	}
	ret = ret ?: atoll_lwks_wait(es, n, joined, g->id);
	for (i = 0; i < n && !ret; i++)
		if (es[i]->group_result)
			ret = -EIO;
	if (ret) {
		atoll_err(err, "the LWKs did not all join the multicast ring (error %d)", ret);
		atoll_kgroup_leave(g);
	}
	return ret;
}
EXPORT_SYMBOL_GPL(atoll_kgroup_join);

/* Interrupts every receiver of the group's ring that does not poll. */
static void notify(struct atoll_kgroup *g)
{
	u32 i;

	for (i = 0; i < g->n; i++)
		if (!atoll_kring_polling(&g->ring, i))
			atoll_apic_send(g->es[i]->apic_ids[0], APIC_DM_FIXED | ATOLL_LWK_VECTOR);
}

/* One message to every LWK of the group, waiting for room. */
int atoll_kgroup_send(struct atoll_kgroup *g, u16 type, const void *data, u32 len)
{
	int ret;

	while ((ret = atoll_kring_send(&g->ring, type, data, len, g->n)) == -EAGAIN) {
		if (fatal_signal_pending(current))
			return -EINTR;
		notify(g);	/* a receiver that missed one drains it */
		cond_resched();
	}
	notify(g);
	return ret;
}
EXPORT_SYMBOL_GPL(atoll_kgroup_send);
