// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Mutexes, condition variables and barriers on the LWK's wait and wake:
 * a woken waiter's CPU is kicked with an IPI, so it runs at once.
 */
#include <limits.h>

#include <atoll/hrt.h>
#include "internal.h"

/* Tries before sleeping: a short wait costs no call at all. */
#define SPINS 200

/* state: 0 free, 1 locked, 2 locked with sleepers (Drepper's futex mutex). */
void hrt_mutex_lock(hrt_mutex_t *m)
{
	uint32_t c = 0;

	for (int i = 0; i < SPINS; i++) {
		c = 0;
		if (__atomic_compare_exchange_n(&m->state, &c, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		hrt_pause();
	}
	if (c != 2)
		c = __atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		hrt_wait(&m->state, 2);
		c = __atomic_exchange_n(&m->state, 2, __ATOMIC_ACQUIRE);
	}
}

void hrt_mutex_unlock(hrt_mutex_t *m)
{
	if (__atomic_exchange_n(&m->state, 0, __ATOMIC_RELEASE) == 2)
		hrt_wake(&m->state, 1, 0);
}

void hrt_cond_wait(hrt_cond_t *c, hrt_mutex_t *m)
{
	uint32_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);

	__atomic_add_fetch(&c->waiters, 1, __ATOMIC_SEQ_CST);
	hrt_mutex_unlock(m);
	hrt_wait(&c->seq, seq);
	__atomic_sub_fetch(&c->waiters, 1, __ATOMIC_SEQ_CST);
	hrt_mutex_lock(m);
}

static void cond_wake(hrt_cond_t *c, uint32_t n)
{
	__atomic_add_fetch(&c->seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->waiters, __ATOMIC_SEQ_CST))
		hrt_wake(&c->seq, n, 0);
}

void hrt_cond_signal(hrt_cond_t *c)
{
	cond_wake(c, 1);
}

void hrt_cond_broadcast(hrt_cond_t *c)
{
	cond_wake(c, INT_MAX);
}

void hrt_barrier_init(hrt_barrier_t *b, unsigned int total)
{
	b->arrived = 0;
	b->total = total;
	b->generation = 0;
}

int hrt_barrier_wait(hrt_barrier_t *b)
{
	uint32_t gen = __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&b->arrived, 1, __ATOMIC_ACQ_REL) == b->total) {
		__atomic_store_n(&b->arrived, 0, __ATOMIC_RELAXED);
		__atomic_add_fetch(&b->generation, 1, __ATOMIC_SEQ_CST);
		hrt_wake(&b->generation, INT_MAX, 0);
		return 1;
	}
	for (int i = 0; i < SPINS; i++) {
		if (__atomic_load_n(&b->generation, __ATOMIC_ACQUIRE) != gen)
			return 0;
		hrt_pause();
	}
	while (__atomic_load_n(&b->generation, __ATOMIC_ACQUIRE) == gen)
		hrt_wait(&b->generation, gen);
	return 0;
}
