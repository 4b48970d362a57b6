// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rings between enclaves (abi/atoll_abi.h, PEER_ADD): every pair of
 * running enclaves gets a block of Linux's memory with a ring each way,
 * which both LWKs map; they then message each other directly, with IPIs
 * from one enclave's CPU to the other's, and Linux is not on the path.
 * A block goes back to Linux only once no LWK can touch it: each LWK
 * unmaps it and says so (PEER_REMOVED), or its CPUs are parked for good.
 * The pairs change only under atoll_lock.
 */
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include "atoll.h"

#define PEER_WAIT_MS	1000	/* for an LWK to unmap a block, or to answer a ping */

struct atoll_peer_pair {
	struct list_head node;
	struct atoll_enclave *side[2];	/* NULL once that enclave is destroyed */
	bool mapped[2];			/* that LWK may still touch the block */
	void *block;
	size_t size;
};

static LIST_HEAD(pairs);
static u64 peer_cookie;

static void on_added(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	s64 result = (s64)atoll_kmsg_word(m, 1);

	if (result)
		pr_warn("atoll: enclave %s could not map its rings to enclave %llu: error %lld\n",
			e->name, atoll_kmsg_word(m, 0), result);
}

static void on_removed(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	WRITE_ONCE(e->peer_removed, atoll_kmsg_word(m, 0));
}

static void on_trusted(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	WRITE_ONCE(e->peer_trusted, atoll_kmsg_word(m, 0));
}

static void on_pong(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	e->peer_rtt = (s64)atoll_kmsg_word(m, 1);
	/* The round trip first: the waiter reads it after an acquire. */
	smp_store_release(&e->peer_pong, atoll_kmsg_word(m, 0));
}

int atoll_peers_init(void)
{
	return atoll_kmsg_register(ATOLL_KMSG_PEER_ADDED, on_added) ?:
	       atoll_kmsg_register(ATOLL_KMSG_PEER_REMOVED, on_removed) ?:
	       atoll_kmsg_register(ATOLL_KMSG_PEER_TRUSTED, on_trusted) ?:
	       atoll_kmsg_register(ATOLL_KMSG_PEER_PONG, on_pong);
}

/* The ring each way takes a page-aligned half of the block. */
static size_t ring_span(void)
{
	size_t span = PAGE_ALIGN(ATOLL_KMSG_RING_BYTES(ATOLL_KMSG_RING_SLOTS));

	/* A cache line for the benchmarks fits after the first ring. */
	BUILD_BUG_ON(PAGE_ALIGN(ATOLL_KMSG_RING_BYTES(ATOLL_KMSG_RING_SLOTS)) -
		     ATOLL_KMSG_RING_BYTES(ATOLL_KMSG_RING_SLOTS) < SMP_CACHE_BYTES);
	return span;
}

/*
 * Programs of a and b may message each other only while one owner has
 * both: the same user, and the same owner group (or none), since the
 * group's members may use an enclave too.
 */
static u32 programs_talk(const struct atoll_enclave *a, const struct atoll_enclave *b)
{
	return uid_eq(a->owner_uid, b->owner_uid) && gid_eq(a->owner_gid, b->owner_gid);
}

/* Tells side i of the pair about the other side; false if not sent. */
static bool lend(struct atoll_peer_pair *pair, int i)
{
	struct atoll_enclave *me = pair->side[i], *peer = pair->side[!i];
	struct atoll_kmsg_peer msg = {
		.peer_id = peer->id,
		.notify_apic_id = peer->apic_ids[0],
		.block_phys = virt_to_phys(pair->block),
		.block_size = pair->size,
		.out_offset = i * ring_span(),
		.in_offset = !i * ring_span(),
		.slots = ATOLL_KMSG_RING_SLOTS,
		.programs_talk = programs_talk(me, peer),
		/* After the first ring, in its half's slack. */
		.line_offset = ring_span() - SMP_CACHE_BYTES,
	};

	return !atoll_kmsg_send_wait(me, ATOLL_KMSG_PEER_ADD, &msg, sizeof(msg));
}

/* Lends a and b a block with a ring each way (a new enclave meets an old one). */
int atoll_peer_connect(struct atoll_enclave *a, struct atoll_enclave *b)
{
	struct atoll_peer_pair *pair = kzalloc(sizeof(*pair), GFP_KERNEL);
	struct atoll_kring ring;

	if (!pair)
		return -ENOMEM;
	pair->size = 2 * ring_span();
	pair->block = alloc_pages_exact(pair->size, GFP_KERNEL | __GFP_ZERO);
	if (!pair->block) {
		kfree(pair);
		return -ENOMEM;
	}
	atoll_kring_init(&ring, pair->block, ATOLL_KMSG_RING_SLOTS, 1);
	atoll_kring_init(&ring, pair->block + ring_span(), ATOLL_KMSG_RING_SLOTS, 1);
	pair->side[0] = a;
	pair->side[1] = b;
	/* Whoever was told may map it, even if the other was not. */
	pair->mapped[0] = lend(pair, 0);
	pair->mapped[1] = lend(pair, 1);
	list_add_tail(&pair->node, &pairs);
	return 0;
}

static bool trusted(struct atoll_enclave *e, u64 cookie)
{
	atoll_lwk_poll(e);
	return READ_ONCE(e->peer_trusted) == cookie || READ_ONCE(e->crashed);
}

/* Tells side i of the pair whether programs may message the other; true once it holds to it. */
static bool tell_trust(struct atoll_peer_pair *pair, int i)
{
	struct atoll_enclave *e = pair->side[i];
	u64 msg[3] = { pair->side[!i]->id, programs_talk(pair->side[0], pair->side[1]),
		       ++peer_cookie };

	if (READ_ONCE(e->crashed) ||
	    atoll_kmsg_send_wait(e, ATOLL_KMSG_PEER_TRUST, msg, sizeof(msg)))
		return false;
	wait_event_timeout(e->wq, trusted(e, msg[2]), msecs_to_jiffies(PEER_WAIT_MS));
	return READ_ONCE(e->peer_trusted) == msg[2];
}

/*
 * e has a new owner: both LWKs of each of its pairs hear anew whether
 * their programs may message each other, and hold to it before chown
 * returns. -ETIMEDOUT if an LWK did not say so (it is not running, or
 * deaf to the host): it may go on with what it knew.
 */
int atoll_peers_owner_changed(struct atoll_enclave *e)
{
	struct atoll_peer_pair *pair;
	int i, ret = 0;

	list_for_each_entry(pair, &pairs, node) {
		if ((pair->side[0] != e && pair->side[1] != e) || !pair->side[0] || !pair->side[1])
			continue;
		for (i = 0; i < 2; i++) {
			if (pair->mapped[i] && !READ_ONCE(pair->side[i]->crashed) &&
			    !tell_trust(pair, i)) {
				pr_warn("atoll: enclave %s did not confirm who may message %s\n",
					pair->side[i]->name, pair->side[!i]->name);
				ret = -ETIMEDOUT;
			}
		}
	}
	return ret;
}

static bool removed(struct atoll_enclave *e, u32 id)
{
	atoll_lwk_poll(e);
	return READ_ONCE(e->peer_removed) == id || READ_ONCE(e->crashed);
}

/* Asks side i to stop using the block and unmap it; true once it has. */
static bool take_back(struct atoll_peer_pair *pair, int i, u32 gone_id)
{
	struct atoll_enclave *e = pair->side[i];
	u64 id = gone_id;

	if (READ_ONCE(e->crashed) ||
	    atoll_kmsg_send_wait(e, ATOLL_KMSG_PEER_REMOVE, &id, sizeof(id)))
		return false;
	wait_event_timeout(e->wq, removed(e, gone_id), msecs_to_jiffies(PEER_WAIT_MS));
	return READ_ONCE(e->peer_removed) == gone_id;
}

/*
 * Enclave e is going (its CPUs are parked): each peer unmaps their block,
 * and a block no LWK can touch any more goes back to Linux. A peer that
 * does not answer keeps its block until it is destroyed itself.
 */
void atoll_peers_disconnect(struct atoll_enclave *e)
{
	struct atoll_peer_pair *pair, *next;
	int i;

	list_for_each_entry_safe(pair, next, &pairs, node) {
		i = pair->side[0] == e ? 0 : pair->side[1] == e ? 1 : -1;
		if (i < 0)
			continue;
		pair->side[i] = NULL;
		pair->mapped[i] = false;
		if (pair->side[!i] && pair->mapped[!i] && take_back(pair, !i, e->id))
			pair->mapped[!i] = false;
		if (pair->mapped[!i]) {
			pr_warn("atoll: enclave %s did not unmap its rings to %s; they stay allocated until it is destroyed\n",
				pair->side[!i]->name, e->name);
			continue;
		}
		list_del(&pair->node);
		free_pages_exact(pair->block, pair->size);
		kfree(pair);
	}
}

static bool pong_seen(struct atoll_enclave *e, u64 cookie)
{
	atoll_lwk_poll(e);
	/* Pairs with the release in on_pong(): peer_rtt is set. */
	return smp_load_acquire(&e->peer_pong) == cookie || READ_ONCE(e->crashed);
}

/* One round trip from `from`'s LWK to `to`'s and back, timed by `from`. */
int atoll_peer_ping(struct atoll_enclave *from, struct atoll_enclave *to, u64 *rtt_ns)
{
	u64 msg[2] = { to->id, ++peer_cookie };
	long left;

	if (from == to)
		return -EINVAL;
	if (atoll_lwk_state(from) != ATOLL_ENCLAVE_RUNNING ||
	    atoll_lwk_state(to) != ATOLL_ENCLAVE_RUNNING)
		return -EHOSTDOWN;
	if (atoll_kmsg_send(from, ATOLL_KMSG_PEER_PING, msg, sizeof(msg)))
		return -EAGAIN;
	left = wait_event_killable_timeout(from->wq, pong_seen(from, msg[1]),
					   msecs_to_jiffies(PEER_WAIT_MS));
	if (left <= 0)
		return left ? -EINTR : -ETIMEDOUT;
	if (READ_ONCE(from->crashed))
		return -EHOSTDOWN;
	if (from->peer_rtt < 0)
		return from->peer_rtt >= -MAX_ERRNO ? from->peer_rtt : -EIO;
	*rtt_ns = from->peer_rtt;
	return 0;
}
