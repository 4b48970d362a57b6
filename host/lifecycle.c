// SPDX-License-Identifier: GPL-2.0-only
/*
 * The enclave's life cycle with its LWK: the status page the LWK keeps,
 * "booted", ping/pong, shutdown/"stopped" and crash reports. A crash shows
 * three ways: a PANIC message, the status page (when the ring could not
 * take the message), or a broken message ring.
 */
#include <linux/export.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include "atoll.h"

static u64 ping_cookie;

void atoll_lwk_status_init(struct atoll_enclave *e)
{
	struct atoll_status *s = e->shared + ATOLL_STATUS_OFFSET;

	memset(s, 0, sizeof(*s));
	s->hdr = (struct atoll_header){ ATOLL_MAGIC_STATUS, ATOLL_ABI_VERSION, sizeof(*s), 0 };
	s->lwk_state = ATOLL_LWK_BOOTING;
	e->status = s;
}

static void on_booted(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	e->booted_cpus = atoll_kmsg_word(m, 0);
	/* The CPU count first: waiters read it after an acquire. */
	smp_store_release(&e->booted, true);
}

static void on_pong(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	WRITE_ONCE(e->pong_cookie, atoll_kmsg_word(m, 0));
}

static void on_panic(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	if (!e->crashed)
		pr_err("atoll: enclave %s crashed on its CPU %llu; `atoll console %s` shows why\n",
		       e->name, atoll_kmsg_word(m, 0), e->name);
	WRITE_ONCE(e->crashed, true);
}

static void on_stopped(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	WRITE_ONCE(e->stopped, true);
}

int atoll_lifecycle_init(void)
{
	return atoll_kmsg_register(ATOLL_KMSG_BOOTED, on_booted) ?:
	       atoll_kmsg_register(ATOLL_KMSG_PONG, on_pong) ?:
	       atoll_kmsg_register(ATOLL_KMSG_PANIC, on_panic) ?:
	       atoll_kmsg_register(ATOLL_KMSG_STOPPED, on_stopped);
}

/* Takes the LWK's messages and notices a crash that sent none. */
void atoll_lwk_poll(struct atoll_enclave *e)
{
	atoll_kmsg_poll(e);
	if (READ_ONCE(e->crashed))
		return;
	if (READ_ONCE(e->status->lwk_state) == ATOLL_LWK_CRASHED) {
		pr_err("atoll: enclave %s crashed; `atoll console %s` shows why\n",
		       e->name, e->name);
	} else if (atoll_kmsg_broken(e)) {
		pr_err("atoll: enclave %s is treated as crashed: its messages cannot be trusted\n",
		       e->name);
	} else {
		return;
	}
	WRITE_ONCE(e->crashed, true);
	wake_up_all(&e->wq);
}
EXPORT_SYMBOL_GPL(atoll_lwk_poll);

u32 atoll_lwk_state(struct atoll_enclave *e)
{
	atoll_lwk_poll(e);
	if (READ_ONCE(e->crashed))
		return ATOLL_ENCLAVE_CRASHED;
	if (READ_ONCE(e->stopped))
		return ATOLL_ENCLAVE_STOPPED;
	return READ_ONCE(e->booted) ? ATOLL_ENCLAVE_RUNNING : ATOLL_ENCLAVE_BOOTING;
}
EXPORT_SYMBOL_GPL(atoll_lwk_state);

static bool boot_settled(struct atoll_enclave *e)
{
	atoll_lwk_poll(e);
	/* Pairs with the release in on_booted(): booted_cpus is set. */
	return smp_load_acquire(&e->booted) || READ_ONCE(e->crashed);
}

/* Waits for "booted" until the deadline; -EINTR if the caller is killed. */
int atoll_lwk_wait_booted(struct atoll_enclave *e, u64 deadline_ns)
{
	while (!boot_settled(e)) {
		if (ktime_get_ns() > deadline_ns)
			return -ETIMEDOUT;
		/* Short slices: a lost notification costs at most one. */
		if (wait_event_killable_timeout(e->wq, boot_settled(e), msecs_to_jiffies(10)) < 0)
			return -EINTR;
	}
	return 0;
}

static bool pong_seen(struct atoll_enclave *e, u64 cookie)
{
	atoll_lwk_poll(e);
	return READ_ONCE(e->pong_cookie) == cookie || READ_ONCE(e->crashed);
}

/* One round trip to the LWK's message handler (under atoll_lock). */
int atoll_lwk_ping(struct atoll_enclave *e, u64 *rtt_ns)
{
	u64 cookie = ++ping_cookie, t0, spin_until;
	int ret;

	if (atoll_lwk_state(e) != ATOLL_ENCLAVE_RUNNING)
		return -EHOSTDOWN;
	t0 = ktime_get_ns();
	ret = atoll_kmsg_send(e, ATOLL_KMSG_PING, &cookie, sizeof(cookie));
	if (ret)
		return ret;
	/* Spin briefly (the answer usually comes within microseconds), then sleep. */
	spin_until = t0 + 2 * NSEC_PER_MSEC;
	while (!pong_seen(e, cookie) && ktime_get_ns() < spin_until)
		cpu_relax();
	if (!pong_seen(e, cookie) &&
	    wait_event_killable_timeout(e->wq, pong_seen(e, cookie), HZ) <= 0)
		return -ETIMEDOUT;
	if (READ_ONCE(e->crashed))
		return -EHOSTDOWN;
	*rtt_ns = ktime_get_ns() - t0;
	return 0;
}

static bool stop_settled(struct atoll_enclave *e)
{
	atoll_lwk_poll(e);
	return READ_ONCE(e->stopped) || READ_ONCE(e->crashed);
}

/* Asks the LWK to stop every CPU and waits for it to say so. */
int atoll_lwk_shutdown(struct atoll_enclave *e, char *err)
{
	if (!atoll_kmsg_send(e, ATOLL_KMSG_SHUTDOWN, NULL, 0) &&
	    wait_event_timeout(e->wq, stop_settled(e), msecs_to_jiffies(ATOLL_STOP_WAIT_MS)))
		return 0;
	atoll_err(err, "the LWK did not stop within %u ms; `atoll destroy --force` parks its CPUs anyway",
		  ATOLL_STOP_WAIT_MS);
	return -ETIMEDOUT;
}
