/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The inter-kernel message ring, Linux's side (kmsg_ring.c): what it needs
 * is this header and <linux/...> basics, so host/tests builds the same file
 * in user space and tests it there.
 */
#ifndef ATOLL_KMSG_RING_H
#define ATOLL_KMSG_RING_H

#include <linux/types.h>
#include "atoll_abi.h"

/* One message ring as this side knows it (never read back from the shared header). */
struct atoll_kring {
	struct atoll_kmsg_ring *ring;
	u32 slots;		/* a power of two */
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
	u32 len;
	const u8 *data;
};

/* The ring protocol, as kernel/logic/src/kmsg implements it for the LWK. */
void atoll_kring_init(struct atoll_kring *k, void *mem, u32 slots, u32 receivers);
int atoll_kring_send(struct atoll_kring *k, u16 type, const void *data, u32 len, u32 readers);
int atoll_kring_receive(struct atoll_kring *k, struct atoll_kreceiver *rx, void *buf,
			struct atoll_kmsg *m, const char **why);
bool atoll_kring_ready(struct atoll_kring *k, const struct atoll_kreceiver *rx);
bool atoll_kring_polling(struct atoll_kring *k, u32 receiver);
void atoll_kring_set_polling(struct atoll_kring *k, u32 receiver, bool on);

#endif /* ATOLL_KMSG_RING_H */
