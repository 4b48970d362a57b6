/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libatoll-hrt's own declarations: the call into the LWK and its modes. */
#ifndef ATOLL_HRT_INTERNAL_H
#define ATOLL_HRT_INTERNAL_H

#include <atoll_abi.h>
#include <stdint.h>

enum hrt_mode { HRT_UNKNOWN = 0, HRT_LINUX, HRT_RING3, HRT_KERNEL };

/* The mode, found on the first call. */
enum hrt_mode hrt_mode(void);
/* Call `op` of the LWK's API: the value, or -errno. */
long hrt_call(uint64_t op, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4);

/*
 * Sleeps while *word == expected (or until a signal): 0, -EAGAIN (it was
 * not), -EINTR, or -EINVAL for a word that is none (unaligned, not mapped).
 */
static inline long hrt_wait(uint32_t *word, uint32_t expected)
{
	return hrt_call(ATOLL_HRT_OP_WAIT, (uintptr_t)word, expected, 0, 0, 0);
}

/* Wakes up to n threads sleeping on word; `first`: they run next. */
static inline void hrt_wake(uint32_t *word, uint32_t n, int first)
{
	hrt_call(ATOLL_HRT_OP_WAKE, (uintptr_t)word, n, first ? ATOLL_HRT_WAKE_FIRST : 0, 0, 0);
}

static inline void hrt_pause(void)
{
	__asm__ volatile("pause");
}

#endif
