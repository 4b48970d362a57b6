// SPDX-License-Identifier: GPL-2.0-only
/*
 * The inter-kernel message ring (abi/atoll_abi.h, "Inter-kernel messages"):
 * Linux's side of the protocol kernel/logic/src/kmsg implements for the
 * LWK. Senders claim slots with cmpxchg on head and set a message's first
 * stamp last; receivers check everything they read, since the other kernel
 * may write anything into the ring at any time: a broken ring is given up,
 * never trusted.
 */
#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include "kmsg_ring.h"

/*
 * A message's bytes in its first slot. A full one (a one-slot message's 48
 * bytes, or the start of a longer one) is a copy of known size the compiler
 * does in six moves; Linux's out-of-line memcpy took about twice as many
 * instructions for it (bench/smoke_bench.py counts them).
 */
static __always_inline void copy_first(void *to, const void *from, u32 len)
{
	if (len == ATOLL_KMSG_HEAD_DATA)
		memcpy(to, from, ATOLL_KMSG_HEAD_DATA);
	else
		memcpy(to, from, len);
}

static u32 slots_for(u32 len)
{
	if (len <= ATOLL_KMSG_HEAD_DATA)
		return 1;
	return 1 + DIV_ROUND_UP(len - ATOLL_KMSG_HEAD_DATA, ATOLL_KMSG_SLOT_DATA);
}

/* This side's view of the ring of `slots` slots at mem, as it is. */
void atoll_kring_attach(struct atoll_kring *k, void *mem, u32 slots)
{
	k->ring = mem;
	k->slot = (struct atoll_kmsg_slot *)(k->ring + 1);
	k->slots = slots;
	k->mask = slots - 1;
	k->tail_seen = 0;
}

/* Makes an empty ring of `slots` slots at mem (ATOLL_KMSG_RING_BYTES(slots)). */
void atoll_kring_init(struct atoll_kring *k, void *mem, u32 slots, u32 receivers)
{
	atoll_kring_attach(k, mem, slots);
	memset(mem, 0, ATOLL_KMSG_RING_BYTES(slots));
	k->ring->hdr = (struct atoll_header){ ATOLL_MAGIC_KMSG, ATOLL_ABI_VERSION,
					      sizeof(*k->ring), 0 };
	k->ring->slots = slots;
	k->ring->receivers = receivers;
}

static bool has_room(const struct atoll_kring *k, u32 head, u32 tail, u32 n)
{
	u32 used = head - tail;

	return used <= k->slots && k->slots - used >= n;
}

/*
 * Claims n consecutive tickets, or -EAGAIN while the ring has no room. The
 * shared tail (a cache line the receiver writes) is read only when our
 * last look at it says the ring is full.
 */
static int claim(struct atoll_kring *k, u32 n, u32 *ticket)
{
	struct atoll_kmsg_ring *r = k->ring;
	u32 head, tail;

	do {
		head = READ_ONCE(r->head);
		/* Pairs with the release below, made after a read of tail. */
		tail = smp_load_acquire(&k->tail_seen);
		if (!has_room(k, head, tail, n)) {
			/* Pairs with the receivers' release of tail: their reads are done. */
			tail = smp_load_acquire(&r->tail);
			/* Senders that take this copy see those reads done too. */
			smp_store_release(&k->tail_seen, tail);
			if (!has_room(k, head, tail, n))
				return -EAGAIN;
		}
	} while (cmpxchg(&r->head, head, head + n) != head);
	*ticket = head;
	return 0;
}

/*
 * atoll_kring_send of any message: longer than one slot, malformed (-EINVAL),
 * or meeting a ring our last look at tail says is full (-EAGAIN if it is).
 */
int atoll_kring_send_any(struct atoll_kring *k, u16 type, const void *data, u32 len, u32 readers)
{
	struct atoll_kmsg_head head;
	struct atoll_kmsg_slot *s;
	u32 n, ticket, i, off, first;
	int ret;

	if (len > ATOLL_KMSG_MAX_LEN || !type || type >= ATOLL_KMSG_MAX_TYPES ||
	    !readers || readers > ATOLL_KMSG_MAX_READERS)
		return -EINVAL;
	n = slots_for(len);
	ret = claim(k, n, &ticket);
	if (ret)
		return ret;
	first = min_t(u32, len, ATOLL_KMSG_HEAD_DATA);
	for (i = 1, off = first; i < n; i++, off += ATOLL_KMSG_SLOT_DATA) {
		s = atoll_kring_slot(k, ticket + i);
		memcpy(s->data, data + off, min_t(u32, len - off, ATOLL_KMSG_SLOT_DATA));
		WRITE_ONCE(s->stamp, ticket + i + 1);
	}
	s = atoll_kring_slot(k, ticket);
	WRITE_ONCE(s->readers, readers);
	head = (struct atoll_kmsg_head){ .type = type, .slots = n, .len = len };
	memcpy(s->data, &head, sizeof(head));
	copy_first(s->data + sizeof(head), data, first);
	/* Last: every byte above is visible before a receiver sees the stamp. */
	smp_store_release(&s->stamp, ticket + 1);
	return 0;
}

/* Moves tail past every message at its front that all receivers have read. */
static void advance_tail(struct atoll_kring *k)
{
	struct atoll_kmsg_ring *r = k->ring;
	struct atoll_kmsg_head head;
	struct atoll_kmsg_slot *s;
	u32 tail;

	for (;;) {
		/* Acquire: what the receivers that moved tail and counted down did is seen. */
		tail = smp_load_acquire(&r->tail);
		s = atoll_kring_slot(k, tail);
		/* Acquire: pairs with the sender's stamp and the receivers' counts. */
		if (smp_load_acquire(&s->stamp) != tail + 1 || smp_load_acquire(&s->readers))
			return;
		memcpy(&head, s->data, sizeof(head));
		if (!head.slots || head.slots > k->slots)
			return;	/* garbage: leave the ring full rather than free unread slots */
		/* Fails if another receiver moved it first; then look again. */
		cmpxchg(&r->tail, tail, tail + head.slots);
	}
}

/*
 * atoll_kring_receive of any message (not one slot's, or garbage), all of
 * it checked again.
 */
int atoll_kring_receive_any(struct atoll_kring *k, struct atoll_kreceiver *rx, void *buf,
			    struct atoll_kmsg *m, const char **why)
{
	struct atoll_kmsg_ring *r = k->ring;
	u32 ticket = rx->next, n, len, i, off, first;
	struct atoll_kmsg_head head;
	struct atoll_kmsg_slot *s;

	s = atoll_kring_slot(k, ticket);
	/*
	 * The slot, not head: its cache line comes over once, with the
	 * message in it. Pairs with the sender's release of the stamp.
	 */
	if (smp_load_acquire(&s->stamp) != ticket + 1)
		return 0;	/* none, or claimed and still being written */
	memcpy(&head, s->data, sizeof(head));
	len = head.len;
	n = head.slots;
	if (len > ATOLL_KMSG_MAX_LEN || n != slots_for(len) || n > k->slots) {
		*why = "a message's length or slot count is wrong";
		return -EPROTO;
	}
	first = min_t(u32, len, ATOLL_KMSG_HEAD_DATA);
	copy_first(buf, s->data + sizeof(head), first);
	for (i = 1, off = first; i < n; i++, off += ATOLL_KMSG_SLOT_DATA) {
		s = atoll_kring_slot(k, ticket + i);
		if (READ_ONCE(s->stamp) != ticket + i + 1) {
			*why = "a message's further slot was not written";
			return -EPROTO;
		}
		memcpy(buf + off, s->data, min_t(u32, len - off, ATOLL_KMSG_SLOT_DATA));
	}
	rx->next = ticket + n;
	if (rx->count == 1)
		/* The only reader: the slots are free once copied. */
		smp_store_release(&r->tail, rx->next);
	else
		atoll_kring_release_shared(k, atoll_kring_slot(k, ticket));
	m->type = head.type;
	m->slots = n;
	m->len = len;
	m->data = buf;
	return 1;
}

/* One of several receivers is done with the message starting at s. */
void atoll_kring_release_shared(struct atoll_kring *k, struct atoll_kmsg_slot *s)
{
	/* Full barrier: our copy is complete before the count drops. */
	if (atomic_dec_return((atomic_t *)&s->readers) == 0)
		advance_tail(k);
}

/* Whether rx's next message is whole in the ring (its first slot stamped). */
bool atoll_kring_ready(struct atoll_kring *k, const struct atoll_kreceiver *rx)
{
	/* Pairs with the sender's release of the stamp, as receive's look does. */
	return smp_load_acquire(&atoll_kring_slot(k, rx->next)->stamp) == rx->next + 1;
}

/* Says whether receiver r polls; after turning it off, receive once more. */
void atoll_kring_set_polling(struct atoll_kring *k, u32 receiver, bool on)
{
	atomic_t *polling = (atomic_t *)&k->ring->polling;

	if (on)
		atomic_or(BIT(receiver), polling);
	else
		atomic_andnot(BIT(receiver), polling);
	/* Full barrier: the bit is visible before we next look at the ring. */
	smp_mb__after_atomic();
}
