// SPDX-License-Identifier: GPL-2.0-only
/*
 * How a worker of `atoll run` waits for its program's next delegated call,
 * so that neither side sleeps while calls come often: one worker at a time
 * polls the program's slots for a window that follows the recent wait
 * between calls (twice it, 20 us to 1 ms; the shortest once calls come
 * further apart than that), with the area's `polling` flag up so that the
 * LWK posts without a message and its interrupt. After the window the
 * worker sleeps, so an idle server costs Linux no CPU. The area also shows
 * the window and the calls taken in the last whole second (`atoll status`).
 */
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/sched/signal.h>
#include "atoll.h"

#define POLL_MIN_NS	(20 * NSEC_PER_USEC)
#define POLL_MAX_NS	(1000 * NSEC_PER_USEC)
#define POLL_FIRST_NS	(30 * NSEC_PER_USEC)	/* before the first call */

static u64 poll_window(struct atoll_program *p)
{
	u64 gap = READ_ONCE(p->call_gap_ns);

	if (!gap)
		return POLL_FIRST_NS;
	if (gap > POLL_MAX_NS / 2)
		return POLL_MIN_NS;
	return clamp_t(u64, 2 * gap, POLL_MIN_NS, POLL_MAX_NS);
}

bool atoll_call_poll(struct atoll_program *p, struct atoll_call *c)
{
	u64 start = ktime_get_ns(), window = poll_window(p);
	bool found;

	if (atomic_cmpxchg(&p->pollers, 0, 1))
		return atoll_call_event(p, c);	/* another worker polls */
	WRITE_ONCE(p->proc->poll_window_us, div_u64(window, NSEC_PER_USEC));
	/*
	 * Up before the first look: pairs with the LWK's SeqCst store of
	 * REQUEST, then its load of polling.
	 */
	smp_store_mb(p->proc->polling, 1);
	do {
		found = atoll_call_event(p, c);
		if (found)
			break;
		cpu_relax();
	} while (ktime_get_ns() - start < window && !need_resched() && !signal_pending(current));
	/* Down, then one more look: a call posted meanwhile came without a message. */
	smp_store_mb(p->proc->polling, 0);
	if (!found)
		found = atoll_call_event(p, c);
	atomic_set(&p->pollers, 0);
	return found;
}

/* Rolls the rate's second over; each sleeping worker calls it every slice too. */
void atoll_call_rate_tick(struct atoll_program *p, u64 now)
{
	u64 start = READ_ONCE(p->rate_start_ns);
	int calls;

	if (now - start < NSEC_PER_SEC || cmpxchg64(&p->rate_start_ns, start, now) != start)
		return;
	calls = atomic_xchg(&p->rate_calls, 0);
	/* A second with no tick at all (no worker waited) had no calls. */
	WRITE_ONCE(p->proc->calls_per_s, now - start < 2 * NSEC_PER_SEC ? calls : 0);
}

void atoll_call_taken(struct atoll_program *p, u64 waited_since)
{
	u64 now = ktime_get_ns(), waited = now - waited_since;
	u64 gap = READ_ONCE(p->call_gap_ns);

	/* A moving average, 1/4 the newest: the window follows the rate. */
	WRITE_ONCE(p->call_gap_ns, gap ? (3 * gap + waited) / 4 : waited);
	atoll_call_rate_tick(p, now);
	atomic_inc(&p->rate_calls);
}
