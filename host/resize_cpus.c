// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPUs added to a running enclave and taken back (atoll_abi.h, "Resizing a
 * running enclave"), one CPU per step. Adding: Linux offlines the CPU as
 * at create, the LWK starts it at the lowest free LWK index through the
 * lent trampoline; if it refuses or does not answer, the CPU is Linux's
 * again (or, if the LWK cannot even say it let go, stays offline until
 * destroy). Removing: the LWK moves its threads away and parks it; only
 * then is it INITed and onlined in Linux. Delegated-call answers for a
 * leaving CPU go to the LWK's boot CPU from the moment it is asked.
 */
#include <linux/cpu.h>
#include <linux/ktime.h>
#include <asm/apic.h>
#include "atoll.h"

static void cpu_mask_text(const struct cpumask *m, char *buf, size_t len)
{
	snprintf(buf, len, "%*pbl", cpumask_pr_args(m));
}

/* Makes LWK CPU i look at its delegated-call waiters again. */
static void rescan_waiters(struct atoll_enclave *e, u32 i)
{
	smp_mb();	/* lwk_cpus is written before the kick */
	if (!READ_ONCE(e->crashed))
		atoll_apic_send(e->apic_ids[i], APIC_DM_FIXED | ATOLL_DONE_VECTOR);
}

/* Takes LWK CPU index i back from a running LWK: 0, or the LWK's error or -ETIMEDOUT. */
static int take_back(struct atoll_enclave *e, u32 i, struct atoll_resize *req)
{
	u64 word = i, t;
	int ret;

	WRITE_ONCE(e->lwk_cpus, e->lwk_cpus & ~BIT_ULL(i));
	smp_mb();	/* before the LWK hears of it: see program.c, call_done() */
	ret = atoll_resize_ask(e, ATOLL_KMSG_CPU_REMOVE, &word, 1, &req->lwk_ns);
	if (ret && ret != -EINVAL) {
		/*
		 * It stays, with its waiters: answers that went to the boot
		 * CPU meanwhile are looked at on it again.
		 */
		WRITE_ONCE(e->lwk_cpus, e->lwk_cpus | BIT_ULL(i));
		rescan_waiters(e, 0);
		rescan_waiters(e, i);
		return ret;
	}
	/* -EINVAL: the LWK never had it (it did not come up). */
	t = ktime_get_ns();
	atoll_cpu_init(e->apic_ids[i]);
	atoll_cpus_give_back(cpumask_of(e->linux_cpus[i]));
	cpumask_clear_cpu(e->linux_cpus[i], &e->cpus);
	e->cpu_count--;
	req->linux_ns += ktime_get_ns() - t;
	rescan_waiters(e, 0);
	return 0;
}

/* Adds Linux CPU cpu; on failure it is Linux's again unless the LWK is silent about it. */
static int add_one(struct atoll_enclave *e, unsigned int cpu, struct atoll_resize *req)
{
	struct atoll_cpu_loan *loan;
	u64 words[4], t = ktime_get_ns();
	u32 i = ffz(e->lwk_cpus);
	int ret;

	ret = atoll_cpus_take(cpumask_of(cpu), req->error);
	req->linux_ns += ktime_get_ns() - t;
	if (ret)
		return ret;
	e->apic_ids[i] = cpu_physical_id(cpu);
	e->linux_cpus[i] = cpu;
	words[0] = i;
	words[1] = e->apic_ids[i];
	loan = atoll_cpu_loan_start(e, &words[2], &words[3], req->error);
	if (IS_ERR(loan)) {
		ret = PTR_ERR(loan);
		goto give_back;
	}
	/* Threads may wait on it for delegated calls as soon as it runs. */
	smp_wmb();	/* apic_ids[i] before the bit: see program.c, call_done() */
	WRITE_ONCE(e->lwk_cpus, e->lwk_cpus | BIT_ULL(i));
	ret = atoll_resize_ask(e, ATOLL_KMSG_CPU_ADD, words, 4, &req->lwk_ns);
	atoll_cpu_loan_end(loan);
	if (!ret) {
		cpumask_set_cpu(cpu, &e->cpus);
		e->cpu_count++;
		return 0;
	}
	atoll_err(req->error, "enclave %s did not take CPU %u (%s): it is Linux's again",
		  e->name, cpu, ret == -ETIMEDOUT ? "no answer" : "refused");
	if (ret == -ETIMEDOUT) {
		/* It may have started it late: it must say it let go. */
		cpumask_set_cpu(cpu, &e->cpus);
		e->cpu_count++;
		if (take_back(e, i, req))
			atoll_err(req->error, "enclave %s did not take CPU %u and does not answer about it: it stays offline until the enclave is destroyed",
				  e->name, cpu);
		return ret;
	}
	/* Refused: it never ran a thread. */
	WRITE_ONCE(e->lwk_cpus, e->lwk_cpus & ~BIT_ULL(i));
give_back:
	t = ktime_get_ns();
	atoll_cpu_init(e->apic_ids[i]);
	atoll_cpus_give_back(cpumask_of(cpu));
	req->linux_ns += ktime_get_ns() - t;
	return ret;
}

/* The LWK index of Linux CPU cpu in e, or -1. */
static int lwk_index(struct atoll_enclave *e, unsigned int cpu)
{
	u32 i;

	for (i = 0; i < ATOLL_MAX_CPUS; i++)
		if ((e->lwk_cpus & BIT_ULL(i)) && e->linux_cpus[i] == cpu)
			return i;
	return -1;
}

/* The request's cpus[] become the CPUs done. */
static void report_done(struct atoll_resize *req, const struct cpumask *done)
{
	memset(req->cpus, 0, sizeof(req->cpus));
	memcpy(req->cpus, cpumask_bits(done), min_t(size_t, sizeof(req->cpus), cpumask_size()));
}

static int add_cpus(struct atoll_enclave *e, struct atoll_resize *req,
		    struct cpumask *want, struct cpumask *added)
{
	unsigned int cpu;
	char list[64];
	int ret;

	ret = atoll_cpus_pick(req->cpus, req->cpu_count, want, req->error);
	if (ret)
		return ret;
	if (e->cpu_count + cpumask_weight(want) > ATOLL_MAX_CPUS) {
		atoll_err(req->error, "enclave %s has %u CPUs; it can have at most %u",
			  e->name, e->cpu_count, ATOLL_MAX_CPUS);
		return -EINVAL;
	}
	for_each_cpu(cpu, want) {
		ret = add_one(e, cpu, req);
		if (ret)
			break;
		cpumask_set_cpu(cpu, added);
	}
	if (ret) {
		/* All or nothing: the ones this request added go back too. */
		for_each_cpu(cpu, added)
			if (take_back(e, lwk_index(e, cpu), req))
				pr_warn("atoll: enclave %s did not give CPU %u back\n",
					e->name, cpu);
		return ret;
	}
	report_done(req, added);
	cpu_mask_text(added, list, sizeof(list));
	pr_info("atoll: enclave %s: CPUs %s added\n", e->name, list);
	return 0;
}

typedef int (*cpus_step)(struct atoll_enclave *e, struct atoll_resize *req,
			 struct cpumask *which, struct cpumask *done);

/* Runs step with two empty CPU masks (too large for the stack with NR_CPUS 8192). */
static int with_masks(struct atoll_enclave *e, struct atoll_resize *req, cpus_step step)
{
	cpumask_var_t which, done;
	int ret = -ENOMEM;

	if (!zalloc_cpumask_var(&which, GFP_KERNEL))
		return ret;
	if (zalloc_cpumask_var(&done, GFP_KERNEL)) {
		ret = step(e, req, which, done);
		free_cpumask_var(done);
	}
	free_cpumask_var(which);
	return ret;
}

int atoll_resize_add_cpus(struct atoll_enclave *e, struct atoll_resize *req)
{
	return with_masks(e, req, add_cpus);
}

/* The CPUs to take: the request's list (each the enclave's, not its boot CPU) or its last ones. */
static int pick_removal(struct atoll_enclave *e, struct atoll_resize *req, struct cpumask *out)
{
	unsigned int cpu;
	u32 i, n = 0;
	int at;

	cpumask_clear(out);
	for (cpu = 0; cpu < ATOLL_HOST_CPU_WORDS * 64; cpu++) {
		if (!(req->cpus[cpu / 64] & BIT_ULL(cpu % 64)))
			continue;
		at = cpu < nr_cpu_ids ? lwk_index(e, cpu) : -1;
		if (at < 0) {
			atoll_err(req->error, "CPU %u is not enclave %s's", cpu, e->name);
			return -EINVAL;
		}
		if (at == 0) {
			atoll_err(req->error, "CPU %u is enclave %s's boot CPU: it hears Linux's messages and stays while the enclave runs",
				  cpu, e->name);
			return -EINVAL;
		}
		cpumask_set_cpu(cpu, out);
	}
	if (!cpumask_empty(out))
		return 0;
	for (i = ATOLL_MAX_CPUS; i-- > 1 && n < req->cpu_count;)
		if (e->lwk_cpus & BIT_ULL(i)) {
			cpumask_set_cpu(e->linux_cpus[i], out);
			n++;
		}
	if (!req->cpu_count || n < req->cpu_count) {
		atoll_err(req->error, "enclave %s has %u CPUs; it keeps at least its boot CPU, so at most %u can be removed",
			  e->name, e->cpu_count, e->cpu_count - 1);
		return -EINVAL;
	}
	return 0;
}

static int remove_cpus(struct atoll_enclave *e, struct atoll_resize *req,
		       struct cpumask *which, struct cpumask *removed)
{
	unsigned int cpu;
	char list[64];
	int ret;

	ret = pick_removal(e, req, which);
	if (ret)
		return ret;
	for_each_cpu(cpu, which) {
		ret = take_back(e, lwk_index(e, cpu), req);
		if (ret) {
			cpu_mask_text(removed, list, sizeof(list));
			atoll_err(req->error, "enclave %s did not let CPU %u go (%s); %s%s",
				  e->name, cpu,
				  ret == -ETIMEDOUT ? "a thread there did not yield in time" :
				  "refused", cpumask_empty(removed) ? "nothing removed" :
				  "removed only CPUs ", list);
			break;
		}
		cpumask_set_cpu(cpu, removed);
	}
	report_done(req, removed);
	if (!cpumask_empty(removed)) {
		cpu_mask_text(removed, list, sizeof(list));
		pr_info("atoll: enclave %s: CPUs %s removed\n", e->name, list);
	}
	return ret;
}

int atoll_resize_remove_cpus(struct atoll_enclave *e, struct atoll_resize *req)
{
	return with_masks(e, req, remove_cpus);
}
