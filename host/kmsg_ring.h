/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The inter-kernel message ring, Linux's side (kmsg_ring.c): what it needs
 * is this header and <linux/...> basics, so host/tests builds the same file
 * in user space and tests it there.
 */
#ifndef ATOLL_KMSG_RING_H
#define ATOLL_KMSG_RING_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include "atoll_abi.h"

/* One message ring as this side knows it (never read back from the shared header). */
struct atoll_kring {
	struct atoll_kmsg_ring *ring;
	struct atoll_kmsg_slot *slot;	/* its first slot, after the header */
	u32 slots;		/* a power of two */
	u32 mask;		/* slots - 1 */
	u32 tail_seen;		/* senders' last look at tail (0: a new ring); may lag */
};

/* One receiver's place in a ring, kept in Linux's memory. */
struct atoll_kreceiver {
	u32 next;		/* ticket of the next message */
	u32 index;		/* this receiver's number, 0 for unicast */
	u32 count;		/* receivers of the ring */
};

/* A received message; data is valid only during the handler. */
struct atoll_kmsg {
	u16 type;
	u16 slots;		/* its slots: type, slots and len are its head */
	u32 len;
	const u8 *data;
};

/* A one-slot message's m gets its head in one store. */
static_assert(offsetof(struct atoll_kmsg, type) == offsetof(struct atoll_kmsg_head, type) &&
	      offsetof(struct atoll_kmsg, slots) == offsetof(struct atoll_kmsg_head, slots) &&
	      offsetof(struct atoll_kmsg, len) == offsetof(struct atoll_kmsg_head, len) &&
	      sizeof(struct atoll_kmsg_head) == sizeof(u64));

/* The ring protocol, as kernel/logic/src/kmsg implements it for the LWK. */
void atoll_kring_attach(struct atoll_kring *k, void *mem, u32 slots);
void atoll_kring_init(struct atoll_kring *k, void *mem, u32 slots, u32 receivers);
/* Off the one-slot path (__cold: its callers keep their registers for it). */
int __cold atoll_kring_send_any(struct atoll_kring *k, u16 type, const void *data, u32 len,
				u32 readers);
int __cold atoll_kring_receive_any(struct atoll_kring *k, struct atoll_kreceiver *rx, void *buf,
				   struct atoll_kmsg *m, const char **why);
void atoll_kring_release_shared(struct atoll_kring *k, struct atoll_kmsg_slot *s);
bool atoll_kring_ready(struct atoll_kring *k, const struct atoll_kreceiver *rx);
void atoll_kring_set_polling(struct atoll_kring *k, u32 receiver, bool on);

/*
 * The one-slot message (a head and up to 48 bytes: most messages) is the
 * hot path both ways, so it is inline here: no call, no copy of unknown
 * size, nothing read twice. Longer messages, and whatever is not plain
 * (a full ring, a malformed send, a head that is not one slot's), go to
 * the functions in kmsg_ring.c, which check everything again.
 */

/* The slot of `ticket`. */
static __always_inline struct atoll_kmsg_slot *atoll_kring_slot(const struct atoll_kring *k,
								u32 ticket)
{
	return k->slot + (ticket & k->mask);
}

/*
 * Sends a one-slot message read by `readers` receivers, if it is one and
 * our last look at tail says there is room; false (nothing done) if not:
 * atoll_kring_send_any then sends it, or says why not.
 */
static __always_inline bool atoll_kring_send_one(struct atoll_kring *k, u16 type,
						 const void *data, u32 len, u32 readers)
{
	struct atoll_kmsg_ring *r = k->ring;
	struct atoll_kmsg_head head = { .type = type, .slots = 1, .len = len };
	struct atoll_kmsg_slot *s;
	u32 ticket;

	if (unlikely(len > ATOLL_KMSG_HEAD_DATA || (u16)(type - 1) >= ATOLL_KMSG_MAX_TYPES - 1 ||
		     readers - 1 >= ATOLL_KMSG_MAX_READERS))
		return false;
	ticket = READ_ONCE(r->head);
	do {
		/*
		 * Room as our last look at tail says (acquire: pairs with the
		 * release made after a read of tail); if none, the shared tail
		 * is read in atoll_kring_send_any.
		 */
		if (unlikely(ticket - smp_load_acquire(&k->tail_seen) >= k->slots))
			return false;
		/* A failed try gives the head it found. */
	} while (!try_cmpxchg(&r->head, &ticket, ticket + 1));
	s = atoll_kring_slot(k, ticket);
	WRITE_ONCE(s->readers, readers);
	memcpy(s->data, &head, sizeof(head));
	/* A full slot is a copy of known size: a few moves, no call. */
	if (len == ATOLL_KMSG_HEAD_DATA)
		memcpy(s->data + sizeof(head), data, ATOLL_KMSG_HEAD_DATA);
	else
		memcpy(s->data + sizeof(head), data, len);
	/* Last: every byte above is visible before a receiver sees the stamp. */
	smp_store_release(&s->stamp, ticket + 1);
	return true;
}

/* Sends one message read by `readers` receivers; -EAGAIN when full. */
static __always_inline int atoll_kring_send(struct atoll_kring *k, u16 type, const void *data,
					    u32 len, u32 readers)
{
	if (likely(atoll_kring_send_one(k, type, data, len, readers)))
		return 0;
	return atoll_kring_send_any(k, type, data, len, readers);
}

/*
 * atoll_kring_receive of a one-slot message; -E2BIG (nothing done) when
 * the next message is not one: atoll_kring_receive_any then takes it.
 * unicast: rx is the ring's only receiver (rx->count is 1).
 */
static __always_inline int atoll_kring_receive_one(struct atoll_kring *k,
						   struct atoll_kreceiver *rx, void *buf,
						   struct atoll_kmsg *m, bool unicast)
{
	u32 ticket = rx->next;
	struct atoll_kmsg_slot *s = atoll_kring_slot(k, ticket);
	u64 head;

	/*
	 * The slot, not head: its cache line comes over once, with the
	 * message in it. Pairs with the sender's release of the stamp.
	 */
	if (smp_load_acquire(&s->stamp) != ticket + 1)
		return 0;	/* none, or claimed and still being written */
	/*
	 * The head (struct atoll_kmsg_head) as one little-endian word: type,
	 * slots << 16, len << 32. (len << 16 | slots) - 1 rotated right by 16
	 * is (slots - 1) << 48 | len when slots >= 1, and has its top bits set
	 * when slots is 0: at most 48 exactly when one slot holds len <= 48.
	 */
	memcpy(&head, s->data, sizeof(head));
	if (unlikely(ror64((head >> 16) - 1, 16) > ATOLL_KMSG_HEAD_DATA))
		return -E2BIG;
	/* The whole slot's payload bytes, a copy of known size (past len: unread). */
	memcpy(buf, s->data + sizeof(head), ATOLL_KMSG_HEAD_DATA);
	rx->next = ticket + 1;
	if (unicast || likely(rx->count == 1))
		/* The only reader: the slot is free once copied. */
		smp_store_release(&k->ring->tail, ticket + 1);
	else
		atoll_kring_release_shared(k, s);
	/* type, slots, len: the head as it came, one store. */
	memcpy(m, &head, sizeof(head));
	m->data = buf;
	return 1;
}

/*
 * Copies the next message into buf (ATOLL_KMSG_MAX_LEN bytes) and fills m:
 * 1 when there was one, 0 when there is none (or it is still being
 * written), -EPROTO when the ring breaks the protocol (*why says how).
 */
static __always_inline int atoll_kring_receive(struct atoll_kring *k, struct atoll_kreceiver *rx,
					       void *buf, struct atoll_kmsg *m, const char **why)
{
	int ret = atoll_kring_receive_one(k, rx, buf, m, false);

	if (unlikely(ret == -E2BIG))
		return atoll_kring_receive_any(k, rx, buf, m, why);
	return ret;
}

/* Whether receiver r says it polls (a sender then needs no interrupt). */
static __always_inline bool atoll_kring_polling(struct atoll_kring *k, u32 receiver)
{
	/* Full barrier: the message is visible before we look (pairs with the receiver's). */
	smp_mb();
	return READ_ONCE(k->ring->polling) & BIT(receiver);
}

#endif /* ATOLL_KMSG_RING_H */
