/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Atoll ABI, C side: everything that crosses a boundary between the host
 * module, the LWK and the `atoll` CLI. It is written once, in Rust (the
 * atoll-abi crate, abi/src/lib.rs, where each item is documented), and
 * atoll_abi_gen.h is generated from it (scripts/abi-header.sh: cbindgen;
 * `make abi-header`); `make lint` fails when that header is stale, and
 * abi/tests/layout.rs checks C's view of every size, offset and constant
 * against Rust's. C's names: ATOLL_ and the Rust name for a constant,
 * struct atoll_ and the Rust name in snake case for a struct.
 *
 * This file holds only what is C's own and is no table: the helpers C
 * computes from the generated definitions.
 */
#ifndef ATOLL_ABI_H
#define ATOLL_ABI_H

#include "atoll_abi_gen.h"

/* Bytes of a ring with this many slots (Rust: kmsg_ring_bytes). */
#define ATOLL_KMSG_RING_BYTES(slots) \
	(sizeof(struct atoll_kmsg_ring) + (slots) * sizeof(struct atoll_kmsg_slot))

#endif /* ATOLL_ABI_H */
