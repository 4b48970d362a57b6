/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel basics host/kmsg_ring.c uses, for building it in user space
 * (host/tests): C11/GCC atomics with the same orderings.
 */
#ifndef ATOLL_SHIM_KERNEL_H
#define ATOLL_SHIM_KERNEL_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_mb__after_atomic()	smp_mb()
#define cmpxchg(p, old, new) ({						\
	__typeof__(*(p)) __old = (old);					\
	__atomic_compare_exchange_n((p), &__old, (new), false,		\
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);	\
	__old; })
/* *old is updated to what was there when it fails. */
#define try_cmpxchg(p, old, new)					\
	__atomic_compare_exchange_n((p), (old), (new), false,		\
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define __cold			__attribute__((__cold__))
#ifndef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#endif

static inline u64 ror64(u64 word, unsigned int shift)
{
	return (word >> shift) | (word << (64 - shift));
}

#define BIT(n)			(1UL << (n))
#define min_t(t, a, b)		((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))

#endif
