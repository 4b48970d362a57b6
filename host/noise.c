// SPDX-License-Identifier: GPL-2.0-only
/*
 * OS noise probes on an enclave's CPUs (atoll noise; atoll_abi.h, "OS noise
 * probes"): NOISE_RUN asks the LWK to run one, NOISE_DONE brings its result
 * and listed detours, which are checked before they are believed.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include "atoll.h"

#define ATOLL_NOISE_MAX_NS	(60ULL * NSEC_PER_SEC)
#define ATOLL_NOISE_SLACK_MS	5000	/* beyond the probe's duration */

static u64 next_cookie;

/* Where a waiting ATOLL_IOC_NOISE wants its answer (under e->msg_lock). */
struct atoll_noise_wait {
	u64 cookie;
	bool done;
	struct atoll_noise_result result;
	struct atoll_noise_detour *detours;	/* ATOLL_NOISE_MAX_LISTED */
};

static void on_done(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	const struct atoll_noise_result *r = (const void *)m->data;
	struct atoll_noise_wait *w;
	size_t want;

	if (m->len < sizeof(*r) || r->listed > ATOLL_NOISE_MAX_LISTED) {
		pr_warn_ratelimited("atoll: enclave %s: malformed noise result refused\n", e->name);
		return;
	}
	want = sizeof(*r) + (size_t)r->listed * sizeof(struct atoll_noise_detour);
	/* Selfish lists detours (of all counted); FWQ and FTQ list every sample. */
	if (m->len != want || (r->detours < r->listed && r->loops < r->listed) ||
	    (r->kernel_detours > r->detours && r->kernel_detours > r->loops)) {
		pr_warn_ratelimited("atoll: enclave %s: inconsistent noise result refused\n",
				    e->name);
		return;
	}
	spin_lock(&e->msg_lock);
	w = e->noise_wait;
	if (w && !w->done && w->cookie == r->cookie) {
		w->result = *r;
		memcpy(w->detours, m->data + sizeof(*r), want - sizeof(*r));
		/* The result first: the waiter reads done with an acquire. */
		smp_store_release(&w->done, true);
	}
	spin_unlock(&e->msg_lock);
	wake_up(&e->wq);
}

int atoll_noise_init(void)
{
	return atoll_kmsg_register(ATOLL_KMSG_NOISE_DONE, on_done);
}

static bool answered(struct atoll_noise_wait *w)
{
	/* Pairs with the release in on_done(): the result is there. */
	return smp_load_acquire(&w->done);
}

static int wait_result(struct atoll_enclave *e, struct atoll_noise_wait *w, u64 duration_ns)
{
	unsigned long deadline = jiffies + nsecs_to_jiffies(duration_ns) +
				 msecs_to_jiffies(ATOLL_NOISE_SLACK_MS);

	while (!answered(w)) {
		if (time_after(jiffies, deadline) || atoll_lwk_state(e) != ATOLL_ENCLAVE_RUNNING)
			return -ETIMEDOUT;
		if (wait_event_killable_timeout(e->wq, answered(w), msecs_to_jiffies(100)) < 0)
			return -EINTR;
		atoll_lwk_poll(e);
	}
	return 0;
}

/* ATOLL_IOC_NOISE, under atoll_lock, for a running enclave. */
int atoll_noise(struct atoll_enclave *e, struct atoll_noise_req *req)
{
	struct atoll_noise_run run = { .cpu = req->cpu, .probe = req->probe,
				       .duration_ns = req->duration_ns,
				       .threshold_ns = req->threshold_ns };
	struct atoll_noise_wait *w;
	unsigned long flags;
	int ret;

	if (req->probe < ATOLL_NOISE_SELFISH || req->probe > ATOLL_NOISE_FTQ ||
	    !req->duration_ns || req->duration_ns > ATOLL_NOISE_MAX_NS) {
		atoll_err(req->error, "a probe is selfish, FWQ or FTQ and runs 1 ns to %llu s",
			  ATOLL_NOISE_MAX_NS / NSEC_PER_SEC);
		return -EINVAL;
	}
	if (req->probe != ATOLL_NOISE_SELFISH && req->threshold_ns < NSEC_PER_USEC) {
		atoll_err(req->error, "FWQ and FTQ quanta are 1 us or longer");
		return -EINVAL;
	}
	if (req->cpu >= ATOLL_MAX_CPUS || !(e->lwk_cpus & BIT_ULL(req->cpu))) {
		atoll_err(req->error, "enclave %s has no LWK CPU %u", e->name, req->cpu);
		return -EINVAL;
	}
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (w)
		w->detours = kvcalloc(ATOLL_NOISE_MAX_LISTED, sizeof(*w->detours), GFP_KERNEL);
	if (!w || !w->detours) {
		kfree(w);
		return -ENOMEM;
	}
	run.cookie = ++next_cookie;
	w->cookie = run.cookie;
	spin_lock_irqsave(&e->msg_lock, flags);
	e->noise_wait = w;
	spin_unlock_irqrestore(&e->msg_lock, flags);

	ret = atoll_kmsg_send_wait(e, ATOLL_KMSG_NOISE_RUN, &run, sizeof(run));
	if (!ret)
		ret = wait_result(e, w, req->duration_ns);
	spin_lock_irqsave(&e->msg_lock, flags);
	e->noise_wait = NULL;
	spin_unlock_irqrestore(&e->msg_lock, flags);

	if (ret == -ETIMEDOUT)
		atoll_err(req->error, "enclave %s did not answer the probe", e->name);
	if (!ret && w->result.error) {
		ret = w->result.error;
		atoll_err(req->error, "enclave %s refused the probe on LWK CPU %u", e->name,
			  req->cpu);
	}
	if (!ret) {
		req->result = w->result;
		if (copy_to_user(u64_to_user_ptr(req->detours_ptr), w->detours,
				 w->result.listed * sizeof(*w->detours)))
			ret = -EFAULT;
	}
	kvfree(w->detours);
	kfree(w);
	return ret;
}
