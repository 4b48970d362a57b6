// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Nemo's Active Messages: each CPU has a queue of (action, argument)
 * messages and a handler thread bound to it, made when the first handler
 * is registered there. A sender queues the message and, if that thread
 * sleeps, wakes it "first": the LWK kicks its CPU with an IPI and it runs
 * ahead of every other thread there. The queue is a bounded array with a
 * sequence number per slot (many senders, one receiver).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <atoll/hrt.h>
#include "internal.h"

#define MAX_CPUS 64

struct slot {
	uint64_t seq;
	uint64_t arg;
	int action;
};

struct am_cpu {
	struct slot ring[HRT_AM_QUEUE];
	uint64_t tail;		/* senders' next slot */
	uint64_t head;		/* the handler thread's next slot */
	uint32_t sleeping;	/* its handler thread sleeps on this word */
	uint32_t started;
	hrt_thread_t thread;
	hrt_am_handler handler[HRT_AM_ACTIONS];
	void *ctx[HRT_AM_ACTIONS];
} __attribute__((aligned(64)));

static struct am_cpu cpus[MAX_CPUS];
static uint32_t start_lock;

static void init_ring(struct am_cpu *c)
{
	for (uint64_t i = 0; i < HRT_AM_QUEUE; i++)
		c->ring[i].seq = i;
}

static int take(struct am_cpu *c, int *action, uint64_t *arg)
{
	struct slot *s = &c->ring[c->head % HRT_AM_QUEUE];

	if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != c->head + 1)
		return 0;
	*action = s->action;
	*arg = s->arg;
	__atomic_store_n(&s->seq, c->head + HRT_AM_QUEUE, __ATOMIC_RELEASE);
	c->head++;
	return 1;
}

static int put(struct am_cpu *c, int action, uint64_t arg)
{
	uint64_t pos = __atomic_load_n(&c->tail, __ATOMIC_RELAXED);

	for (;;) {
		struct slot *s = &c->ring[pos % HRT_AM_QUEUE];
		uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
		int64_t dif = (int64_t)(seq - pos);

		if (dif == 0) {
			if (__atomic_compare_exchange_n(&c->tail, &pos, pos + 1, 1,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
				s->action = action;
				s->arg = arg;
				__atomic_store_n(&s->seq, pos + 1, __ATOMIC_RELEASE);
				return 0;
			}
			continue;
		}
		if (dif < 0)
			return EAGAIN;
		pos = __atomic_load_n(&c->tail, __ATOMIC_RELAXED);
	}
}

static int queued(struct am_cpu *c)
{
	struct slot *s = &c->ring[c->head % HRT_AM_QUEUE];

	return __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) == c->head + 1;
}

/* A CPU's handler thread: handles what is queued, then sleeps. */
static void *handler_thread(void *arg)
{
	struct am_cpu *c = arg;
	int action;
	uint64_t value;

	for (;;) {
		unsigned long irq = hrt_irq_save();

		while (take(c, &action, &value)) {
			hrt_am_handler h = __atomic_load_n(&c->handler[action], __ATOMIC_ACQUIRE);

			if (h)
				h(action, value, c->ctx[action]);
		}
		hrt_irq_restore(irq);
		__atomic_store_n(&c->sleeping, 1, __ATOMIC_SEQ_CST);
		if (queued(c)) {
			__atomic_store_n(&c->sleeping, 0, __ATOMIC_SEQ_CST);
			continue;
		}
		hrt_wait(&c->sleeping, 1);
		__atomic_store_n(&c->sleeping, 0, __ATOMIC_SEQ_CST);
	}
	return NULL;
}

static int start_cpu(int cpu)
{
	struct am_cpu *c = &cpus[cpu];
	int err = 0;

	while (__atomic_exchange_n(&start_lock, 1, __ATOMIC_ACQUIRE))
		hrt_pause();
	if (!c->started) {
		init_ring(c);
		err = hrt_thread_create(&c->thread, cpu, handler_thread, c);
		if (!err)
			__atomic_store_n(&c->started, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&start_lock, 0, __ATOMIC_RELEASE);
	return err;
}

int hrt_am_register(int cpu, int action, hrt_am_handler handler, void *ctx)
{
	int n = hrt_ncpus();

	if (n < 0)
		return -n;
	if (action < 0 || action >= HRT_AM_ACTIONS || cpu < HRT_ANY_CPU || cpu >= n ||
	    n > MAX_CPUS)
		return EINVAL;
	for (int i = 0; i < n; i++) {
		int err;

		if (cpu != HRT_ANY_CPU && i != cpu)
			continue;
		cpus[i].ctx[action] = ctx;
		__atomic_store_n(&cpus[i].handler[action], handler, __ATOMIC_RELEASE);
		err = start_cpu(i);
		if (err)
			return err;
	}
	return 0;
}

static int send_to(struct am_cpu *c, int action, uint64_t arg)
{
	int err = put(c, action, arg);

	if (err)
		return err;
	if (__atomic_load_n(&c->sleeping, __ATOMIC_SEQ_CST) &&
	    __atomic_exchange_n(&c->sleeping, 0, __ATOMIC_SEQ_CST))
		hrt_wake(&c->sleeping, 1, 1);
	return 0;
}

int hrt_am_send(int cpu, int action, uint64_t arg)
{
	if (cpu < 0 || cpu >= MAX_CPUS || action < 0 || action >= HRT_AM_ACTIONS ||
	    !__atomic_load_n(&cpus[cpu].started, __ATOMIC_ACQUIRE) ||
	    !__atomic_load_n(&cpus[cpu].handler[action], __ATOMIC_ACQUIRE))
		return EINVAL;
	return send_to(&cpus[cpu], action, arg);
}

int hrt_am_broadcast(int action, uint64_t arg)
{
	int sent = 0;

	if (action < 0 || action >= HRT_AM_ACTIONS)
		return EINVAL;
	for (int i = 0; i < MAX_CPUS; i++) {
		struct am_cpu *c = &cpus[i];
		int err;

		if (!__atomic_load_n(&c->started, __ATOMIC_ACQUIRE) ||
		    !__atomic_load_n(&c->handler[action], __ATOMIC_ACQUIRE))
			continue;
		err = send_to(c, action, arg);
		if (err)
			return err;
		sent++;
	}
	return sent ? 0 : EINVAL;
}
