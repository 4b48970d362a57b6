/* SPDX-License-Identifier: GPL-2.0-only */
/* atomic_t for host/kmsg_ring.c in user space (host/tests). */
#ifndef ATOLL_SHIM_ATOMIC_H
#define ATOLL_SHIM_ATOMIC_H

typedef struct {
	int counter;
} atomic_t;

#define atomic_dec_return(v)	__atomic_sub_fetch(&(v)->counter, 1, __ATOMIC_SEQ_CST)
#define atomic_or(i, v)		__atomic_fetch_or(&(v)->counter, (int)(i), __ATOMIC_SEQ_CST)
#define atomic_andnot(i, v)	__atomic_fetch_and(&(v)->counter, ~(int)(i), __ATOMIC_SEQ_CST)

#endif
