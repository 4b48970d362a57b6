// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPUs: chosen and checked, taken from Linux through its own hotplug path
 * (remove_cpu), given back the same way (add_cpu), and driven through the
 * local APIC while they belong to an enclave.
 */
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/export.h>
#include <linux/irqflags.h>
#include <asm/apic.h>
#include "atoll.h"

static cpumask_t enclave_cpus;	/* CPUs some enclave holds, under atoll_lock */

static int check_cpu(unsigned int cpu, char *err)
{
	if (cpu == 0) {
		atoll_err(err, "CPU 0 cannot go to an enclave: it is Linux's boot CPU");
		return -EPERM;
	}
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu)) {
		atoll_err(err, "CPU %u does not exist (this machine has CPUs 0-%u)",
			  cpu, nr_cpu_ids - 1);
		return -EINVAL;
	}
	if (cpumask_test_cpu(cpu, &enclave_cpus)) {
		atoll_err(err, "CPU %u already belongs to another enclave", cpu);
		return -EBUSY;
	}
	if (!cpu_online(cpu)) {
		atoll_err(err, "CPU %u is offline in Linux; only online CPUs can be taken", cpu);
		return -EBUSY;
	}
	return 0;
}

/* Resolves a CPU list (ATOLL_HOST_CPU_WORDS words) or, if it is empty, a count into *out. */
int atoll_cpus_pick(const u64 *list, u32 count, cpumask_t *out, char *err)
{
	unsigned int cpu, want, i;
	int ret;

	cpumask_clear(out);
	for (i = 0; i < ATOLL_HOST_CPU_WORDS * 64; i++) {
		if (!(list[i / 64] & (1ULL << (i % 64))))
			continue;
		ret = check_cpu(i, err);
		if (ret)
			return ret;
		cpumask_set_cpu(i, out);
	}
	want = cpumask_weight(out);
	if (!want) {
		want = count;
		/* The highest-numbered free CPUs: Linux keeps its low ones. */
		for (cpu = nr_cpu_ids; cpu-- > 1 && cpumask_weight(out) < want;)
			if (cpu_online(cpu) && !cpumask_test_cpu(cpu, &enclave_cpus))
				cpumask_set_cpu(cpu, out);
		if (cpumask_weight(out) < want) {
			atoll_err(err, "asked for %u CPUs, but only %u can be taken (CPU 0 and the last online CPU stay with Linux)",
				  want, cpumask_weight(out));
			return -EBUSY;
		}
	}
	if (want == 0 || want > ATOLL_MAX_CPUS) {
		atoll_err(err, "an enclave needs 1 to %u CPUs, not %u", ATOLL_MAX_CPUS, want);
		return -EINVAL;
	}
	if (num_online_cpus() <= want) {
		atoll_err(err, "taking %u CPUs would leave Linux none of its %u online CPUs",
			  want, num_online_cpus());
		return -EBUSY;
	}
	return 0;
}

/* Offlines each CPU in Linux; on failure brings back the ones taken. */
int atoll_cpus_take(const cpumask_t *cpus, char *err)
{
	cpumask_t taken;
	unsigned int cpu;
	int ret;

	cpumask_clear(&taken);
	for_each_cpu(cpu, cpus) {
		ret = remove_cpu(cpu);
		if (ret) {
			atoll_err(err, "Linux refused to offline CPU %u (error %d)", cpu, ret);
			atoll_cpus_give_back(&taken);
			return ret;
		}
		cpumask_set_cpu(cpu, &taken);
		cpumask_set_cpu(cpu, &enclave_cpus);
	}
	return 0;
}

/* The CPUs must be parked (INIT) first: Linux boots them afresh. */
void atoll_cpus_give_back(const cpumask_t *cpus)
{
	unsigned int cpu;
	int ret;

	for_each_cpu(cpu, cpus) {
		ret = add_cpu(cpu);
		if (ret)
			pr_err("atoll: Linux could not bring CPU %u back online (error %d)\n",
			       cpu, ret);
		cpumask_clear_cpu(cpu, &enclave_cpus);
	}
}

void atoll_apic_send(u32 apic_id, u32 icr_low)
{
	unsigned long flags;

	local_irq_save(flags);
	apic->wait_icr_idle();
	apic->icr_write(icr_low, apic_id);
	local_irq_restore(flags);
}
EXPORT_SYMBOL_GPL(atoll_apic_send);

/* INIT parks a CPU in wait-for-SIPI, whatever it was running. */
void atoll_cpu_init(u32 apic_id)
{
	atoll_apic_send(apic_id, APIC_INT_LEVELTRIG | APIC_INT_ASSERT | APIC_DM_INIT);
	udelay(10);
	atoll_apic_send(apic_id, APIC_INT_LEVELTRIG | APIC_DM_INIT);
}

/* Starts a parked CPU in real mode at page_phys (below 1 MiB). */
void atoll_cpu_sipi(u32 apic_id, unsigned long page_phys)
{
	int i;

	for (i = 0; i < 2; i++) {
		atoll_apic_send(apic_id, APIC_DM_STARTUP | (page_phys >> 12));
		udelay(200);
	}
}
