// SPDX-License-Identifier: GPL-2.0-only
/*
 * host/kmsg_ring.c, the module's side of the message ring, built in user
 * space and run under real threads (scripts/ring-test.sh, part of
 * `make unit`, with AddressSanitizer): ordering and integrity with several
 * senders, every size up to the largest, multicast, a full ring, and
 * garbage, which must be refused without reading or writing outside the
 * ring or the buffer.
 */
#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kmsg_ring.h"

static int passed, failed;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("FAIL %s:%d: ", __func__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		return false;						\
	}								\
} while (0)

static void run(const char *name, bool (*test)(void))
{
	bool ok = test();

	printf("%s %s\n", ok ? "ok  " : "FAIL", name);
	ok ? passed++ : failed++;
}

static struct atoll_kring *ring_new(u32 slots, u32 receivers)
{
	struct atoll_kring *k = malloc(sizeof(*k));

	atoll_kring_init(k, aligned_alloc(64, ATOLL_KMSG_RING_BYTES(slots)), slots, receivers);
	return k;
}

static void ring_free(struct atoll_kring *k)
{
	free(k->ring);
	free(k);
}

/* A check message: sender, seq, then bytes that depend on both. */
static u32 fill(u8 *m, u32 sender, u32 seq, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		m[i] = i < 8 ? ((u8 *)(u32[]){ sender, seq })[i] : (u8)(i * 31 + (seq ^ sender));
	return len;
}

static bool intact(const struct atoll_kmsg *m, u32 *sender, u32 *seq)
{
	u32 i, s, q;

	if (m->len < 8)
		return false;
	memcpy(&s, m->data, 4);
	memcpy(&q, m->data + 4, 4);
	for (i = 8; i < m->len; i++)
		if (m->data[i] != (u8)(i * 31 + (q ^ s)))
			return false;
	*sender = s;
	*seq = q;
	return true;
}

static void send_retrying(struct atoll_kring *k, u16 type, const void *m, u32 len, u32 readers)
{
	while (atoll_kring_send(k, type, m, len, readers) == -EAGAIN)
		sched_yield();
}

static int receive_one(struct atoll_kring *k, struct atoll_kreceiver *rx, u8 *buf,
		       struct atoll_kmsg *m)
{
	const char *why;
	int ret;

	while (!(ret = atoll_kring_receive(k, rx, buf, m, &why)))
		sched_yield();
	if (ret < 0)
		printf("ring broken: %s\n", why);
	return ret;
}

#define SENDERS 4
#define EACH 200000

struct sender {
	struct atoll_kring *k;
	u32 id;
};

static void *sender_main(void *arg)
{
	static const u32 sizes[] = { 16, 40, 60, 110 };
	struct sender *s = arg;
	u8 m[120];
	u32 seq;

	for (seq = 0; seq < EACH; seq++)
		send_retrying(s->k, 5, m, fill(m, s->id, seq, sizes[seq % 4]), 1);
	return NULL;
}

static bool several_senders_keep_order_and_bytes(void)
{
	struct atoll_kring *k = ring_new(64, 1);
	struct atoll_kreceiver rx = { 0, 0, 1 };
	struct sender s[SENDERS];
	pthread_t t[SENDERS];
	u32 next[SENDERS] = { 0 }, i, who, seq;
	static u8 buf[ATOLL_KMSG_MAX_LEN];
	struct atoll_kmsg m;

	for (i = 0; i < SENDERS; i++) {
		s[i] = (struct sender){ k, i };
		pthread_create(&t[i], NULL, sender_main, &s[i]);
	}
	for (i = 0; i < SENDERS * EACH; i++) {
		CHECK(receive_one(k, &rx, buf, &m) == 1, "message %u", i);
		CHECK(m.type == 5 && intact(&m, &who, &seq) && who < SENDERS, "message %u damaged", i);
		CHECK(seq == next[who]++, "sender %u out of order at %u", who, seq);
	}
	for (i = 0; i < SENDERS; i++)
		pthread_join(t[i], NULL);
	ring_free(k);
	return true;
}

static bool every_size_arrives_intact(void)
{
	struct atoll_kring *k = ring_new(ATOLL_KMSG_RING_SLOTS, 1);
	struct atoll_kreceiver rx = { 0, 0, 1 };
	static u8 out[ATOLL_KMSG_MAX_LEN], buf[ATOLL_KMSG_MAX_LEN];
	struct atoll_kmsg m;
	u32 len, who, seq;

	for (len = 0; len <= ATOLL_KMSG_MAX_LEN; len++) {
		fill(out, 1, len, len);
		CHECK(atoll_kring_send(k, 9, out, len, 1) == 0, "send %u", len);
		CHECK(receive_one(k, &rx, buf, &m) == 1 && m.len == len, "size %u", len);
		CHECK(!memcmp(buf, out, len), "bytes of %u", len);
		CHECK(len < 8 || (intact(&m, &who, &seq) && seq == len), "pattern %u", len);
	}
	ring_free(k);
	return true;
}

static bool multicast_reaches_all_and_frees_after_the_last(void)
{
	struct atoll_kring *k = ring_new(32, 3);
	struct atoll_kreceiver rx[3] = { { 0, 0, 3 }, { 0, 1, 3 }, { 0, 2, 3 } };
	static u8 buf[ATOLL_KMSG_MAX_LEN];
	u8 out[200];
	struct atoll_kmsg m;
	u32 seq, r, who, got, expect[3] = { 0 };

	for (seq = 0; seq < 20000; seq++) {
		send_retrying(k, 4, out, fill(out, 7, seq, 8 + seq % 150), 3);
		for (r = 0; r < 3; r++) {
			/* Receivers lag by different amounts; slots stay until the last has read. */
			if ((seq + r) % (r + 1))
				continue;
			while (atoll_kring_receive(k, &rx[r], buf, &m, &(const char *){ 0 }) == 1) {
				CHECK(intact(&m, &who, &got) && who == 7, "receiver %u", r);
				CHECK(got == expect[r]++, "receiver %u out of order at %u", r, got);
			}
		}
	}
	for (r = 0; r < 3; r++) {
		while (atoll_kring_receive(k, &rx[r], buf, &m, &(const char *){ 0 }) == 1)
			expect[r]++;
		CHECK(expect[r] == 20000, "receiver %u got %u", r, expect[r]);
	}
	CHECK(k->ring->tail == k->ring->head, "tail %u, head %u", k->ring->tail, k->ring->head);
	ring_free(k);
	return true;
}

static bool a_full_ring_refuses_and_overwrites_nothing(void)
{
	struct atoll_kring *k = ring_new(16, 1);
	struct atoll_kreceiver rx = { 0, 0, 1 };
	static u8 buf[ATOLL_KMSG_MAX_LEN];
	struct atoll_kmsg m;
	u8 out[40];
	u32 sent = 0, who, seq;

	while (atoll_kring_send(k, 2, out, fill(out, 1, sent, 40), 1) == 0)
		sent++;
	CHECK(sent == 16, "%u messages fit", sent);
	CHECK(atoll_kring_send(k, 2, out, 8, 1) == -EAGAIN, "full");
	for (seq = 0; seq < sent; seq++)
		CHECK(receive_one(k, &rx, buf, &m) == 1 && intact(&m, &who, &who) &&
		      !memcmp(buf, (fill(out, 1, seq, 40), out), 40), "message %u", seq);
	CHECK(atoll_kring_send(k, 2, out, 8, 1) == 0, "room again");
	CHECK(atoll_kring_send(k, 0, out, 8, 1) == -EINVAL, "type 0");
	CHECK(atoll_kring_send(k, 2, out, ATOLL_KMSG_MAX_LEN + 1, 1) == -EINVAL, "too long");
	ring_free(k);
	return true;
}

static u32 xorshift(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (u32)*s;
}

/* A hostile LWK: any head, plausible stamps, random bytes. Never trusted. */
static bool garbage_is_refused_never_trusted(void)
{
	struct atoll_kring *k = ring_new(64, 1);
	struct atoll_kmsg_slot *slots = (struct atoll_kmsg_slot *)(k->ring + 1);
	static u8 buf[ATOLL_KMSG_MAX_LEN];
	u32 round, i, j, broken = 0, messages = 0;
	u64 seed = 0x2545f4914f6cdd1dULL;
	struct atoll_kmsg m;
	const char *why;
	int ret;

	for (round = 0; round < 20000; round++) {
		struct atoll_kreceiver rx = { 0, 0, 1 };

		k->ring->head = xorshift(&seed) % 200;
		for (i = 0; i < 64; i++) {
			slots[i].stamp = xorshift(&seed) % 2 ? i + 1 : xorshift(&seed);
			for (j = 0; j < sizeof(slots[i].data); j++)
				slots[i].data[j] = xorshift(&seed);
		}
		if (round % 3 == 0) {
			struct atoll_kmsg_head h = { 1, 0, xorshift(&seed) % 300 };

			h.slots = h.len <= ATOLL_KMSG_HEAD_DATA ? 1 :
				  1 + DIV_ROUND_UP(h.len - ATOLL_KMSG_HEAD_DATA, ATOLL_KMSG_SLOT_DATA);
			memcpy(slots[0].data, &h, sizeof(h));
		}
		for (i = 0; i < 100; i++) {
			ret = atoll_kring_receive(k, &rx, buf, &m, &why);
			if (ret <= 0) {
				broken += ret < 0;
				break;
			}
			CHECK(m.len <= ATOLL_KMSG_MAX_LEN && m.data == buf, "a message out of bounds");
			messages++;
		}
	}
	CHECK(broken > 1000, "garbage detected %u times", broken);
	CHECK(messages > 0, "well-formed messages in garbage still arrive");
	ring_free(k);
	return true;
}

int main(void)
{
	run("several_senders_keep_order_and_bytes", several_senders_keep_order_and_bytes);
	run("every_size_arrives_intact", every_size_arrives_intact);
	run("multicast_reaches_all_and_frees_after_the_last",
	    multicast_reaches_all_and_frees_after_the_last);
	run("a_full_ring_refuses_and_overwrites_nothing", a_full_ring_refuses_and_overwrites_nothing);
	run("garbage_is_refused_never_trusted", garbage_is_refused_never_trusted);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
