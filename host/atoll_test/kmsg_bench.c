// SPDX-License-Identifier: GPL-2.0-only
/*
 * ATOLL_IOC_KMSG_BENCH: message round trips against their baselines
 * between the same two CPUs (abi/atoll_abi.h, "Message benchmarks"): a
 * cache line bounced, a bare IPI and one back, a 64-byte message each way
 * with interrupts (taking turns with the bare IPI), and with both sides
 * polling, and a one-slot message (a cache line with its head) with both
 * sides polling. Linux times its own round trips with an LWK; between two
 * LWKs it asks one to time them. The LWK's side is in its test image. One
 * benchmark at a time (under atoll_lock).
 */
#include <linux/ktime.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <asm/apic.h>
#include "atoll_test.h"

#define BENCH_WAIT_NS	(2ULL * NSEC_PER_SEC)	/* for the other side, each time */
#define BENCH_MAX_ROUNDS 100000

/* What the handlers hear during a benchmark. */
static struct {
	spinlock_t lock;		/* results; the rest are single words */
	struct atoll_enclave *e;	/* the enclave that answers or times, else NULL */
	u64 ready;			/* the mode the responder is ready for */
	u64 echo;			/* the round of the last echo answered */
	struct atoll_bench_figure fig[ATOLL_BENCH_MODES];
	u32 results;
	u64 echo_at;			/* TSC at the echo handler's entry */
} bench = { .lock = __SPIN_LOCK_UNLOCKED(bench.lock) };

/*
 * The one-slot message path's length on Linux's side (polling mode): TSC
 * ticks from the call into the send function to its return, and from the
 * poll that finds the answer to its handler's entry, the least over the
 * rounds. Under QEMU's -icount the TSC counts instructions, so these are
 * exact counts; bench/smoke_bench.py reads them from the kernel log.
 */
static u64 path_send, path_receive;

static u64 rdtsc_cost(void)
{
	u64 t0 = rdtsc();

	return rdtsc() - t0;
}

static void on_ready(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	if (READ_ONCE(bench.e) == e)
		WRITE_ONCE(bench.ready, atoll_kmsg_word(m, 0));
}

static void on_echo(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	u64 at = rdtsc(), round = atoll_kmsg_word(m, 0);

	WRITE_ONCE(bench.echo_at, at);

	if (READ_ONCE(bench.e) == e && (round & ATOLL_BENCH_REPLY))
		WRITE_ONCE(bench.echo, round & ~ATOLL_BENCH_REPLY);
}

static void on_result(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	u64 mode = atoll_kmsg_word(m, 0);

	spin_lock(&bench.lock);
	if (bench.e == e && mode >= 1 && mode <= ATOLL_BENCH_MODES) {
		bench.fig[mode - 1] = (struct atoll_bench_figure){
			atoll_kmsg_word(m, 1), atoll_kmsg_word(m, 2), atoll_kmsg_word(m, 3),
			(s64)atoll_kmsg_word(m, 4) };
		bench.results++;
	}
	spin_unlock(&bench.lock);
}

static const u16 types[] = {
	ATOLL_KMSG_BENCH_READY, ATOLL_KMSG_BENCH_ECHO, ATOLL_KMSG_BENCH_RESULT
};

static const atoll_kmsg_handler handlers[] = { on_ready, on_echo, on_result };

int atoll_test_bench_init(void)
{
	return atoll_test_register(types, handlers, ARRAY_SIZE(types));
}

void atoll_test_bench_exit(void)
{
	atoll_test_unregister(types, ARRAY_SIZE(types));
}

/* Spins until done() or BENCH_WAIT_NS; polls e's messages if `poll`. */
static int spin_until(struct atoll_enclave *e, bool (*done)(u64 arg), u64 arg, bool poll)
{
	u64 deadline = ktime_get_ns() + BENCH_WAIT_NS, t0, at;

	while (!done(arg)) {
		/*
		 * Polls only once a message is whole, so the count never
		 * includes the LWK's writing it (under -icount, its vCPU's turn).
		 */
		if (poll && atoll_kmsg_waiting(e)) {
			t0 = rdtsc();
			atoll_kmsg_poll(e);
			at = READ_ONCE(bench.echo_at);
			if (at > t0)
				path_receive = min(path_receive, at - t0);
		}
		if (ktime_get_ns() > deadline || READ_ONCE(e->crashed))
			return -ETIMEDOUT;
		cpu_relax();
	}
	return 0;
}

static u64 *line_of(struct atoll_enclave *e)
{
	return e->shared + ATOLL_BENCH_LINE_OFFSET;
}

static bool ready_for(u64 mode)
{
	return READ_ONCE(bench.ready) == mode;
}

static bool echoed(u64 round)
{
	return READ_ONCE(bench.echo) == round;
}

static u64 *line_now;

static bool line_is(u64 value)
{
	return READ_ONCE(*line_now) == value;
}

static u64 ipis_before;

static bool ipi_back(u64 unused)
{
	return atoll_kmsg_ipis() != ipis_before;
}

static bool polled(u64 mode)
{
	return mode == ATOLL_BENCH_KMSG_POLL || mode == ATOLL_BENCH_SLOT_POLL;
}

/* One round trip of `mode`, round r. */
static int round_trip(struct atoll_enclave *e, u64 mode, u64 r)
{
	u64 msg[8] = { r };
	u32 len = mode == ATOLL_BENCH_SLOT_POLL ? ATOLL_KMSG_HEAD_DATA : sizeof(msg);
	u64 t0;
	int ret;

	switch (mode) {
	case ATOLL_BENCH_LINE:
		/* The LWK waits for this value, then writes the next. */
		WRITE_ONCE(*line_now, 2 * r + 1);
		return spin_until(e, line_is, 2 * r + 2, false);
	case ATOLL_BENCH_IPI:
		ipis_before = atoll_kmsg_ipis();
		atoll_apic_send(e->apic_ids[0], APIC_DM_FIXED | ATOLL_BENCH_VECTOR);
		return spin_until(e, ipi_back, 0, false);
	default:
		t0 = rdtsc();
		ret = atoll_kmsg_send(e, ATOLL_KMSG_BENCH_ECHO, msg, len);
		if (mode == ATOLL_BENCH_SLOT_POLL)
			path_send = min(path_send, rdtsc() - t0);
		/* With interrupts, the platform IPI's callback takes the answer. */
		return ret ?: spin_until(e, echoed, r, polled(mode));
	}
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Linux times `rounds` round trips of each of the n `modes` with e's LWK,
 * taking turns round by round (the LWK is set up for the first); ns has
 * room for n * rounds.
 */
static int time_modes(struct atoll_enclave *e, const u64 *modes, u32 n, u32 rounds,
		      u64 *ns, struct atoll_bench_figure *fig)
{
	/* The bare IPI goes where the LWK's messages go (boot.c's host_apic_id). */
	u64 respond[4] = { modes[0], rounds, cpu_physical_id(0), ATOLL_HOST_VECTOR };
	bool polling = polled(modes[0]);
	u64 t0, r, *t;
	u32 i;
	int ret;

	WRITE_ONCE(bench.ready, 0);
	WRITE_ONCE(bench.echo, U64_MAX);
	line_now = line_of(e);
	WRITE_ONCE(*line_now, 0);
	ret = atoll_kmsg_send(e, ATOLL_KMSG_BENCH_RESPOND, respond, sizeof(respond)) ?:
	      spin_until(e, ready_for, modes[0], true);
	if (ret)
		return ret;
	if (polling)
		atoll_kmsg_polling(e, true);
	path_send = U64_MAX;
	path_receive = U64_MAX;
	for (r = 0; r < (u64)rounds * n && !ret; r++) {
		preempt_disable();
		t0 = ktime_get_ns();
		ret = round_trip(e, modes[r % n], r);
		ns[(r % n) * rounds + r / n] = ktime_get_ns() - t0;
		preempt_enable();
		if (fatal_signal_pending(current))
			ret = -EINTR;
	}
	if (polling) {
		atoll_kmsg_polling(e, false);
		atoll_kmsg_send(e, ATOLL_KMSG_BENCH_DONE, NULL, 0);
		atoll_kmsg_poll(e);
	}
	if (ret)
		return ret;
	if (modes[0] == ATOLL_BENCH_SLOT_POLL && path_send != U64_MAX && path_receive != U64_MAX) {
		t0 = rdtsc_cost();
		pr_info("atoll: kmsg-path: linux send=%llu receive=%llu ticks (the TSC's own read, %llu, taken off)\n",
			path_send - t0, path_receive - t0, t0);
	}
	for (i = 0; i < n; i++) {
		t = ns + i * rounds;
		sort(t, rounds, sizeof(*t), cmp_u64, NULL);
		fig[modes[i] - 1] = (struct atoll_bench_figure){ t[rounds / 2], t[0],
								 t[rounds * 9 / 10], 0 };
	}
	return 0;
}

/*
 * Linux streams `rounds` messages of `size` bytes to e's LWK, then one echo:
 * when it comes back the LWK has handled every message before it. Next to
 * it, as many memcpy()s of that size on this CPU.
 */
static int stream(struct atoll_enclave *e, struct atoll_kmsg_bench_req *req)
{
	u32 size = req->stream_size, r;
	u64 t0, marker[8] = { U64_MAX >> 1 };
	u8 *src, *dst;
	int ret = 0;

	src = vzalloc(size);
	dst = vzalloc(size);
	if (!src || !dst) {
		ret = -ENOMEM;
		goto out;
	}
	WRITE_ONCE(bench.echo, U64_MAX);
	t0 = ktime_get_ns();
	for (r = 0; r < req->rounds && !ret; r++)
		ret = atoll_kmsg_check_send(e, ATOLL_KMSG_BENCH_SINK, src, size);
	ret = ret ?: atoll_kmsg_send(e, ATOLL_KMSG_BENCH_ECHO, marker, sizeof(marker)) ?:
	      spin_until(e, echoed, marker[0], false);
	req->stream_ns = ktime_get_ns() - t0;
	t0 = ktime_get_ns();
	for (r = 0; r < req->rounds; r++) {
		memcpy(dst, src, size);
		/* Keep the copy: the compiler may not drop it. */
		barrier();
	}
	req->memcpy_ns = ktime_get_ns() - t0;
out:
	vfree(src);
	vfree(dst);
	return ret;
}

static bool all_results(struct atoll_enclave *from, u64 unused)
{
	bool done;

	atoll_lwk_poll(from);
	spin_lock_irq(&bench.lock);
	done = bench.results == ATOLL_BENCH_MODES;
	spin_unlock_irq(&bench.lock);
	return done || READ_ONCE(from->crashed);
}

/* Enclave `from`'s LWK times every mode with e's and reports. */
static int lwk_times(struct atoll_enclave *from, struct atoll_enclave *e,
		     struct atoll_kmsg_bench_req *req)
{
	u64 run[2] = { e->id, req->rounds };
	u64 wait_ms = 10000 + 4ULL * req->rounds;
	int ret;

	WRITE_ONCE(bench.e, from);
	ret = atoll_kmsg_send(from, ATOLL_KMSG_BENCH_RUN, run, sizeof(run));
	if (!ret && !wait_event_timeout(from->wq, all_results(from, 0), msecs_to_jiffies(wait_ms)))
		ret = -ETIMEDOUT;
	spin_lock_irq(&bench.lock);
	memcpy(req->mode, bench.fig, sizeof(req->mode));
	spin_unlock_irq(&bench.lock);
	return ret;
}

/*
 * The modes timed together with `mode` (ATOLL_BENCH_TAKE_TURNS, at the first
 * of them; every other mode alone) into `group`: how many, or 0 if `mode`
 * goes with an earlier one.
 */
static u32 bench_group(u64 mode, u64 *group)
{
	bool together = ATOLL_BENCH_TAKE_TURNS & BIT_ULL(mode);
	u32 n = 0;
	u64 m;

	for (m = 1; m <= ATOLL_BENCH_MODES; m++)
		if (together ? ATOLL_BENCH_TAKE_TURNS & BIT_ULL(m) : m == mode)
			group[n++] = m;
	return group[0] == mode ? n : 0;
}

/* ATOLL_IOC_KMSG_BENCH, under atoll_lock: the enclaves stay, and no other benchmark runs. */
int atoll_test_kmsg_bench(struct atoll_kmsg_bench_req *req)
{
	struct atoll_enclave *e = atoll_enclave_find(req->id), *from = NULL;
	u64 mode, group[ATOLL_BENCH_MODES];
	int ret = 0;
	u32 i, n;
	u64 *ns;

	if (atoll_may_admin(req->error, "run message benchmarks"))
		return -EPERM;
	if (req->from_id)
		from = atoll_enclave_find(req->from_id);
	if (!e || (req->from_id && !from)) {
		atoll_err(req->error, "there is no enclave with id %u",
			  e ? req->from_id : req->id);
		return -ENOENT;
	}
	if (!req->rounds || req->rounds > BENCH_MAX_ROUNDS || from == e ||
	    req->stream_size > ATOLL_KMSG_MAX_LEN || (from && req->stream_size)) {
		atoll_err(req->error, "rounds are 1 to %u, between two different kernels; streams of up to %u bytes from Linux",
			  BENCH_MAX_ROUNDS, ATOLL_KMSG_MAX_LEN);
		return -EINVAL;
	}
	if (atoll_lwk_state(e) != ATOLL_ENCLAVE_RUNNING ||
	    (from && atoll_lwk_state(from) != ATOLL_ENCLAVE_RUNNING)) {
		atoll_err(req->error, "both enclaves must be running");
		return -EHOSTDOWN;
	}
	memset(bench.fig, 0, sizeof(bench.fig));
	bench.results = 0;
	if (from) {
		ret = lwk_times(from, e, req);
	} else {
		ns = vmalloc(array_size(req->rounds, sizeof(group)));
		if (!ns)
			return -ENOMEM;
		WRITE_ONCE(bench.e, e);
		for (mode = 1; mode <= ATOLL_BENCH_MODES; mode++) {
			n = bench_group(mode, group);
			if (!n)
				continue;
			ret = time_modes(e, group, n, req->rounds, ns, req->mode);
			if (ret == -EINTR)
				break;
			for (i = 0; i < n; i++)
				req->mode[group[i] - 1].error = ret;
			ret = 0;
		}
		vfree(ns);
		if (!ret && req->stream_size)
			ret = stream(e, req);
	}
	WRITE_ONCE(bench.e, NULL);
	if (ret == -ETIMEDOUT)
		atoll_err(req->error, "no answer in time; the benchmark needs the LWK's test image (--kernel /lib/atoll/atoll-kernel-test)");
	return ret;
}
