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
 * Time here is the TSC, which the slots' stamps use too: Linux's clock may
 * be an HPET (a VM whose TSC Linux does not trust), whose every read costs
 * microseconds, too much for each turn of the loop and each call.
 */
#include <linux/math64.h>
#include <linux/sched/signal.h>
#include <asm/tsc.h>
#include "atoll.h"

#define POLL_MIN_NS	(20 * NSEC_PER_USEC)
#define POLL_MAX_NS	(1000 * NSEC_PER_USEC)
#define POLL_FIRST_NS	(30 * NSEC_PER_USEC)	/* before the first call */

static u64 cycles(u64 ns)
{
	return mul_u64_u32_div(ns, tsc_khz, USEC_PER_SEC);
}

/* The window, in TSC cycles. */
static u64 poll_window(struct atoll_program *p)
{
	u64 gap = READ_ONCE(p->call_gap_tsc);

	if (!gap)
		return cycles(POLL_FIRST_NS);
	if (gap > cycles(POLL_MAX_NS) / 2)
		return cycles(POLL_MIN_NS);
	return clamp_t(u64, 2 * gap, cycles(POLL_MIN_NS), cycles(POLL_MAX_NS));
}

bool atoll_call_poll(struct atoll_program *p, struct atoll_call *c)
{
	u64 start = rdtsc(), window = poll_window(p);
	bool found;

	if (atomic_cmpxchg(&p->pollers, 0, 1))
		return atoll_call_event(p, c);	/* another worker polls */
	WRITE_ONCE(p->proc->poll_window_us, div_u64(window, max(tsc_khz / MSEC_PER_SEC, 1U)));
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
	} while (rdtsc() - start < window && !need_resched() && !signal_pending(current));
	/* Down, then one more look: a call posted meanwhile came without a message. */
	smp_store_mb(p->proc->polling, 0);
	if (!found)
		found = atoll_call_event(p, c);
	atomic_set(&p->pollers, 0);
	return found;
}

/*
 * Rolls the rate's second over (now: the TSC); each sleeping worker calls it
 * every slice too.
 */
void atoll_call_rate_tick(struct atoll_program *p, u64 now)
{
	u64 start = READ_ONCE(p->rate_start_tsc), second = cycles(NSEC_PER_SEC);
	int calls;

	if (now - start < second || cmpxchg64(&p->rate_start_tsc, start, now) != start)
		return;
	calls = atomic_xchg(&p->rate_calls, 0);
	/* A second with no tick at all (no worker waited) had no calls. */
	WRITE_ONCE(p->proc->calls_per_s, now - start < 2 * second ? calls : 0);
}

void atoll_call_taken(struct atoll_program *p, u64 waited_since)
{
	u64 now = rdtsc(), waited = now - waited_since;
	u64 gap = READ_ONCE(p->call_gap_tsc);

	/* A moving average, 1/4 the newest: the window follows the rate. */
	WRITE_ONCE(p->call_gap_tsc, gap ? (3 * gap + waited) / 4 : waited);
	atoll_call_rate_tick(p, now);
	atomic_inc(&p->rate_calls);
}
