// SPDX-License-Identifier: GPL-2.0-only
/*
 * ATOLL_IOC_KMSG_CHECK: floods both rings of one enclave with check
 * messages (abi/atoll_abi.h, struct atoll_kmsg_check) and counts what
 * arrives intact and in order. The LWK's side is in its test image
 * (kernel/src/selftest/kmsg.rs); the production LWK ignores the messages
 * and the check times out with that explanation. One check runs at a time
 * (under atoll_lock). What the LWK reports of Linux's messages goes through
 * reports.c.
 */
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/vmalloc.h>
#include "atoll_test.h"

#define CHECK_HEAD	sizeof(struct atoll_kmsg_check)
#define NEEDS_TEST_IMAGE \
	"; it needs the LWK's test image (--kernel /lib/atoll/atoll-kernel-test)"
#define CHECK_IDLE_MS	10000	/* the LWK's side: give up after this long without progress */

/* What Linux counts of the LWK's messages; the handlers fill it in. */
static struct {
	spinlock_t lock;		/* the handlers (message interrupt) and the ioctl */
	struct atoll_enclave *e;	/* the enclave under check, else NULL */
	u32 next_seq[ATOLL_MAX_CPUS];
	u64 messages, bad, bytes, waits;
	u32 senders_done;
} run = { .lock = __SPIN_LOCK_UNLOCKED(run.lock) };

static u32 fnv1a(const u8 *p, u32 len)
{
	u32 h = 0x811c9dc5;

	while (len--)
		h = (h ^ *p++) * 0x01000193;
	return h;
}

/* Fills buf as check message seq of sender (len >= the header). */
void atoll_kmsg_check_fill(u8 *buf, u32 len, u32 sender, u32 seq)
{
	struct atoll_kmsg_check *c = (void *)buf;
	u32 i;

	for (i = 0; i < len - CHECK_HEAD; i++)
		buf[CHECK_HEAD + i] = (u8)(i * 31 + (seq ^ sender));
	*c = (struct atoll_kmsg_check){ sender, seq, fnv1a(buf + CHECK_HEAD, len - CHECK_HEAD), 0 };
}

/* Whether m arrived as sent: the checksum covers every pattern byte. */
static bool intact(const struct atoll_kmsg *m, const struct atoll_kmsg_check *c)
{
	return fnv1a(m->data + CHECK_HEAD, m->len - CHECK_HEAD) == c->sum;
}

static void on_check(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	struct atoll_kmsg_check c;
	bool good;

	spin_lock(&run.lock);
	if (run.e != e)
		goto out;
	if (m->len < CHECK_HEAD) {
		run.bad++;
		goto out;
	}
	memcpy(&c, m->data, sizeof(c));
	good = c.sender < ATOLL_MAX_CPUS && c.seq == run.next_seq[c.sender] && intact(m, &c);
	if (good) {
		run.next_seq[c.sender]++;
		run.messages++;
		run.bytes += m->len;
	} else {
		run.bad++;
	}
out:
	spin_unlock(&run.lock);
}

static void on_done(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	spin_lock(&run.lock);
	if (run.e == e) {
		run.senders_done++;
		run.waits += atoll_kmsg_word(m, 2);
	}
	spin_unlock(&run.lock);
}

static const u16 types[] = { ATOLL_KMSG_CHECK, ATOLL_KMSG_CHECK_DONE };
static const atoll_kmsg_handler handlers[] = { on_check, on_done };

int atoll_test_check_init(void)
{
	return atoll_test_register(types, handlers, ARRAY_SIZE(types));
}

void atoll_test_check_exit(void)
{
	atoll_test_unregister(types, ARRAY_SIZE(types));
}

static bool all_received(struct atoll_enclave *e, u64 expected)
{
	bool done;

	spin_lock_irq(&run.lock);
	done = run.senders_done == e->cpu_count && run.messages + run.bad >= expected;
	spin_unlock_irq(&run.lock);
	return done;
}

/* Anything from the LWK so far: a production LWK sends nothing. */
static u64 progress(void)
{
	u64 n;

	spin_lock_irq(&run.lock);
	n = run.messages + run.bad + run.senders_done;
	spin_unlock_irq(&run.lock);
	return n;
}

/*
 * Polls e's messages until done(), or until nothing has come for
 * CHECK_IDLE_MS; the LWK sends no interrupts meanwhile.
 */
static int poll_until(struct atoll_enclave *e, bool (*done)(struct atoll_enclave *e, u64 n),
		      u64 n, char *err, const char *what)
{
	u64 idle_ns = (u64)CHECK_IDLE_MS * NSEC_PER_MSEC;
	u64 seen = progress(), start = seen, last = ktime_get_ns(), now;
	int ret = 0;

	atoll_kmsg_polling(e, true);
	while (!done(e, n)) {
		atoll_lwk_poll(e);
		now = ktime_get_ns();
		if (progress() != seen) {
			seen = progress();
			last = now;
		}
		if (READ_ONCE(e->crashed)) {
			atoll_err(err, "enclave %s crashed during the check; `atoll console %s` shows why",
				  e->name, e->name);
			ret = -EHOSTDOWN;
		} else if (now - last > idle_ns) {
			atoll_err(err, "%s: nothing %s for %u s%s", what,
				  seen == start ? "came" : "more came", CHECK_IDLE_MS / 1000,
				  seen == start ? NEEDS_TEST_IMAGE : "");
			ret = -ETIMEDOUT;
		} else if (fatal_signal_pending(current)) {
			atoll_err(err, "interrupted");
			ret = -EINTR;
		}
		if (ret)
			break;
		cond_resched();
	}
	atoll_kmsg_polling(e, false);
	/* A message may have come while the bit was still set. */
	atoll_lwk_poll(e);
	return ret;
}

/*
 * Sends one message, spinning for room as long as the LWK is alive and the
 * caller is not killed (the floods of the checks and benchmarks).
 */
int atoll_kmsg_check_send(struct atoll_enclave *e, u16 type, const void *data, u32 len)
{
	int ret;

	while ((ret = atoll_kmsg_send(e, type, data, len)) == -EAGAIN) {
		if (READ_ONCE(e->crashed) || fatal_signal_pending(current))
			return -EHOSTDOWN;
		atoll_lwk_poll(e);
		cond_resched();
	}
	return ret;
}

static u32 length_of(const struct atoll_kmsg_check_req *req, u32 seq)
{
	return req->min_len + seq % (req->max_len - req->min_len + 1);
}

/* Linux -> LWK: count messages from stream 0, then END; the LWK reports what it got. */
static int check_to_lwk(struct atoll_enclave *e, struct atoll_kmsg_check_req *req, u8 *buf)
{
	u64 t0 = ktime_get_ns(), sent = 0;
	u32 seq, len;
	int ret = 0;

	for (seq = 0; seq < req->count && !ret; seq++) {
		len = length_of(req, seq);
		atoll_kmsg_check_fill(buf, len, 0, seq);
		ret = atoll_kmsg_check_send(e, ATOLL_KMSG_CHECK, buf, len);
		req->to_bytes += len;
		sent++;
	}
	if (!ret)
		ret = atoll_kmsg_check_send(e, ATOLL_KMSG_CHECK_END, &sent, sizeof(sent));
	if (ret) {
		atoll_err(req->error, "could not send to enclave %s: error %d", e->name, ret);
		return ret;
	}
	ret = poll_until(e, atoll_test_reported, 0, req->error,
			 "the LWK did not report what it received");
	req->to_ns = ktime_get_ns() - t0;
	atoll_test_report(e, &req->to_messages, &req->to_bad);
	return ret;
}

/* LWK -> Linux: every LWK CPU sends count messages at once. */
static int check_from_lwk(struct atoll_enclave *e, struct atoll_kmsg_check_req *req)
{
	struct atoll_kmsg_check_start start = { req->count, req->min_len, req->max_len, 0 };
	u64 t0 = ktime_get_ns();
	int ret;

	ret = atoll_kmsg_check_send(e, ATOLL_KMSG_CHECK_START, &start, sizeof(start));
	if (ret) {
		atoll_err(req->error, "could not send to enclave %s: error %d", e->name, ret);
		return ret;
	}
	ret = poll_until(e, all_received, (u64)req->count * e->cpu_count, req->error,
			 "the LWK's CPUs did not all finish sending");
	req->from_ns = ktime_get_ns() - t0;
	spin_lock_irq(&run.lock);
	req->from_messages = run.messages;
	req->from_bad = run.bad;
	req->from_bytes = run.bytes;
	req->from_waits = run.waits;
	req->from_senders = run.senders_done;
	spin_unlock_irq(&run.lock);
	return ret;
}

static void run_reset(struct atoll_enclave *e)
{
	spin_lock_irq(&run.lock);
	memset(run.next_seq, 0, sizeof(run.next_seq));
	run.messages = 0;
	run.bad = 0;
	run.bytes = 0;
	run.waits = 0;
	run.senders_done = 0;
	run.e = e;
	spin_unlock_irq(&run.lock);
}

/* ATOLL_IOC_KMSG_CHECK, under atoll_lock: the enclave stays and no other check runs. */
int atoll_test_kmsg_check(struct atoll_kmsg_check_req *req)
{
	struct atoll_enclave *e = atoll_enclave_find(req->id);
	u8 *buf;
	int ret;

	if (atoll_may_admin(req->error, "run message checks"))
		return -EPERM;
	if (!e) {
		atoll_err(req->error, "there is no enclave with id %u", req->id);
		return -ENOENT;
	}
	if (req->min_len < CHECK_HEAD || req->min_len > req->max_len ||
	    req->max_len > ATOLL_KMSG_MAX_LEN || !req->count) {
		atoll_err(req->error, "check messages are %zu to %u bytes long, and at least one is sent",
			  CHECK_HEAD, ATOLL_KMSG_MAX_LEN);
		return -EINVAL;
	}
	if (!req->directions || req->directions & ~(ATOLL_CHECK_TO_LWK | ATOLL_CHECK_FROM_LWK)) {
		atoll_err(req->error, "unknown check directions %#x", req->directions);
		return -EINVAL;
	}
	if (atoll_lwk_state(e) != ATOLL_ENCLAVE_RUNNING) {
		atoll_err(req->error, "enclave %s is not running", e->name);
		return -EHOSTDOWN;
	}
	buf = vmalloc(ATOLL_KMSG_MAX_LEN);
	if (!buf)
		return -ENOMEM;
	run_reset(e);
	atoll_test_reports_reset(&e, 1);
	ret = 0;
	if (req->directions & ATOLL_CHECK_TO_LWK)
		ret = check_to_lwk(e, req, buf);
	if (!ret && (req->directions & ATOLL_CHECK_FROM_LWK))
		ret = check_from_lwk(e, req);
	spin_lock_irq(&run.lock);
	run.e = NULL;
	spin_unlock_irq(&run.lock);
	atoll_test_reports_reset(NULL, 0);
	vfree(buf);
	return ret;
}
