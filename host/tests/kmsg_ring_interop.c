// SPDX-License-Identifier: GPL-2.0-only
/*
 * The C half of kernel/logic/tests/ring_interop.rs: the module's ring code
 * (host/kmsg_ring.c) writes a ring for the LWK's Rust code to read, and
 * reads one the Rust code wrote, byte for byte as the ABI lays it out.
 *   kmsg_ring_interop send FILE      N messages into a fresh ring, saved to FILE
 *   kmsg_ring_interop receive FILE   every message of the ring in FILE, checked
 * Message i: type 1 + i % 60, length i * 37 % 300, byte j = i * 7 + j * 13.
 */
#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kmsg_ring.h"

#define SLOTS		4096
#define MESSAGES	500

static u32 length_of(u32 i)
{
	return i * 37 % 300;
}

static void pattern(u8 *m, u32 i)
{
	u32 j;

	for (j = 0; j < length_of(i); j++)
		m[j] = (u8)(i * 7 + j * 13);
}

int main(int argc, char **argv)
{
	size_t size = ATOLL_KMSG_RING_BYTES(SLOTS);
	struct atoll_kreceiver rx = { 0, 0, 1 };
	static u8 buf[ATOLL_KMSG_MAX_LEN], want[300];
	struct atoll_kring k;
	struct atoll_kmsg m;
	const char *why = "";
	void *mem = calloc(1, size);
	FILE *f;
	u32 i;

	if (argc != 3 || !mem)
		return 2;
	if (!strcmp(argv[1], "send")) {
		atoll_kring_init(&k, mem, SLOTS, 1);
		for (i = 0; i < MESSAGES; i++) {
			pattern(want, i);
			if (atoll_kring_send(&k, 1 + i % 60, want, length_of(i), 1))
				return 3;
		}
		f = fopen(argv[2], "wb");
		return !f || fwrite(mem, size, 1, f) != 1 || fclose(f);
	}
	f = fopen(argv[2], "rb");
	if (!f || fread(mem, size, 1, f) != 1)
		return 4;
	atoll_kring_attach(&k, mem, SLOTS);
	for (i = 0; i < MESSAGES; i++) {
		pattern(want, i);
		if (atoll_kring_receive(&k, &rx, buf, &m, &why) != 1 || m.type != 1 + i % 60 ||
		    m.len != length_of(i) || memcmp(buf, want, m.len)) {
			printf("interop: message %u from Rust is wrong (%s)\n", i, why);
			return 1;
		}
	}
	if (atoll_kring_receive(&k, &rx, buf, &m, &why) != 0 || k.ring->tail != k.ring->head)
		return 5;
	printf("interop: %u messages from Rust intact\n", MESSAGES);
	return 0;
}
