// SPDX-License-Identifier: GPL-2.0-only
/*
 * Enclaves: the registry and what each ioctl does to an enclave. Every
 * failure gives back what was taken, in reverse order.
 */
#include <linux/ctype.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "atoll.h"

static struct atoll_enclave *registry[ATOLL_MAX_ENCLAVES];
static DEFINE_SPINLOCK(registry_lock);	/* also taken in the platform IPI */
static u32 next_id = 1;
static u64 ping_cookie;

void atoll_enclave_for_each(void (*fn)(struct atoll_enclave *e))
{
	unsigned long flags;
	int i;

	spin_lock_irqsave(&registry_lock, flags);
	for (i = 0; i < ATOLL_MAX_ENCLAVES; i++)
		if (registry[i] && registry[i]->channel)
			fn(registry[i]);
	spin_unlock_irqrestore(&registry_lock, flags);
}

static int registry_add(struct atoll_enclave *e)
{
	unsigned long flags;
	int i, ret = -ENOSPC;

	spin_lock_irqsave(&registry_lock, flags);
	for (i = 0; i < ATOLL_MAX_ENCLAVES && ret; i++)
		if (!registry[i]) {
			registry[i] = e;
			ret = 0;
		}
	spin_unlock_irqrestore(&registry_lock, flags);
	return ret;
}

static void registry_remove(struct atoll_enclave *e)
{
	unsigned long flags;
	int i;

	spin_lock_irqsave(&registry_lock, flags);
	for (i = 0; i < ATOLL_MAX_ENCLAVES; i++)
		if (registry[i] == e)
			registry[i] = NULL;
	spin_unlock_irqrestore(&registry_lock, flags);
}

static struct atoll_enclave *find(u32 id)
{
	int i;

	for (i = 0; i < ATOLL_MAX_ENCLAVES; i++)
		if (registry[i] && registry[i]->id == id)
			return registry[i];
	return NULL;
}

/* For program.c, under atoll_lock. */
struct atoll_enclave *atoll_enclave_find(u32 id)
{
	return find(id);
}

static bool name_ok(const char *name)
{
	const char *c;

	for (c = name; *c; c++)
		if (!isalnum(*c) && *c != '_' && *c != '-' && *c != '.')
			return false;
	return true;
}

static int take_name(struct atoll_enclave *e, const struct atoll_create *req, char *err)
{
	int i;

	memcpy(e->name, req->name, ATOLL_NAME_LEN);
	e->name[ATOLL_NAME_LEN - 1] = '\0';
	if (!e->name[0])
		snprintf(e->name, ATOLL_NAME_LEN, "enclave%u", e->id);
	if (!name_ok(e->name)) {
		atoll_err(err, "enclave names may hold only letters, digits, '_', '-' and '.'");
		return -EINVAL;
	}
	for (i = 0; i < ATOLL_MAX_ENCLAVES; i++)
		if (registry[i] && !strcmp(registry[i]->name, e->name)) {
			atoll_err(err, "an enclave named %s exists already", e->name);
			return -EEXIST;
		}
	return 0;
}

static void unmap_shared(struct atoll_enclave *e)
{
	if (e->shared)
		memunmap(e->shared);
	e->shared = NULL;
	e->channel = NULL;
	e->console = NULL;
}

/* Copies the console's last line into err after a failed boot. */
static void append_console_tail(struct atoll_enclave *e, char *err)
{
	struct atoll_console *c = e->console;
	char line[96];
	u64 head, pos, n = 0;
	const u8 *data;

	if (!c)
		return;
	data = (const u8 *)(c + 1);
	/* The LWK writes the text before it moves head (release). */
	head = smp_load_acquire(&c->head);
	pos = head;
	while (pos > 0 && head - pos < c->capacity && n < sizeof(line) - 1) {
		u8 ch = data[(pos - 1) % c->capacity];

		if (ch == '\n' && n)
			break;
		pos--;
		if (ch != '\n')
			n++;
	}
	if (!n) {
		strlcat(err, "; the LWK printed nothing", ATOLL_ERROR_LEN);
		return;
	}
	for (n = 0; pos < head && n < sizeof(line) - 1; pos++)
		if (data[pos % c->capacity] != '\n')
			line[n++] = data[pos % c->capacity];
	line[n] = '\0';
	strlcat(err, "; its console ends: ", ATOLL_ERROR_LEN);
	strlcat(err, line, ATOLL_ERROR_LEN);
}

/* The enclave's Linux CPU numbers as the ABI's host-CPU bitmap. */
static void copy_cpus(const struct atoll_enclave *e, __u64 out[ATOLL_HOST_CPU_WORDS])
{
	memset(out, 0, ATOLL_HOST_CPU_WORDS * sizeof(__u64));
	memcpy(out, cpumask_bits(&e->cpus),
	       min(ATOLL_HOST_CPU_WORDS * sizeof(__u64),
		   (size_t)BITS_TO_LONGS(nr_cpu_ids) * sizeof(long)));
}

int atoll_enclave_create(struct atoll_create *req)
{
	struct atoll_enclave *e;
	char *err = req->error;
	unsigned int cpu;
	u64 t;
	int ret;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	spin_lock_init(&e->msg_lock);
	spin_lock_init(&e->send_lock);
	init_waitqueue_head(&e->wq);
	init_waitqueue_head(&e->prog_wq);
	e->id = next_id;
	ret = take_name(e, req, err);
	if (!ret)
		ret = atoll_cpus_pick(req, &e->cpus, err);
	if (ret)
		goto out_free;
	for_each_cpu(cpu, &e->cpus)
		e->apic_ids[e->cpu_count++] = cpu_physical_id(cpu);

	t = ktime_get_ns();
	ret = atoll_cpus_take(&e->cpus, err);
	if (ret)
		goto out_free;
	e->phase_ns[ATOLL_PHASE_CPUS] = ktime_get_ns() - t;

	t = ktime_get_ns();
	ret = atoll_memory_take(e, req->mem_bytes, err);
	if (ret)
		goto out_cpus;
	e->phase_ns[ATOLL_PHASE_MEMORY] = ktime_get_ns() - t;
	if (fatal_signal_pending(current)) {
		atoll_err(err, "interrupted");
		ret = -EINTR;
		goto out_memory;
	}

	ret = registry_add(e);
	if (ret) {
		atoll_err(err, "there are %u enclaves already, the most this module keeps",
			  ATOLL_MAX_ENCLAVES);
		goto out_memory;
	}
	ret = atoll_boot(e, req, err);
	if (ret) {
		append_console_tail(e, err);
		goto out_registry;
	}
	next_id++;
	e->created_ns = ktime_get_ns();
	__module_get(THIS_MODULE);	/* no unload while an enclave exists */

	req->id = e->id;
	memcpy(req->name, e->name, ATOLL_NAME_LEN);
	copy_cpus(e, req->taken_cpus);
	req->mem_count = e->block_count;
	atoll_memory_ranges(e, req->mem);
	memcpy(req->phase_ns, e->phase_ns, sizeof(req->phase_ns));
	pr_info("atoll: enclave %s (id %u) up on %u CPUs and %u MiB\n", e->name, e->id,
		e->cpu_count, (u32)(e->block_count * e->block_size >> 20));
	return 0;

out_registry:
	registry_remove(e);
	unmap_shared(e);
out_memory:
	atoll_memory_give_back(e);
out_cpus:
	atoll_cpus_give_back(&e->cpus);
out_free:
	kfree(e);
	return ret;
}

static bool stop_settled(struct atoll_enclave *e)
{
	atoll_channel_drain(e);
	return e->stopped || e->crashed;
}

int atoll_enclave_destroy(struct atoll_destroy *req)
{
	struct atoll_enclave *e = find(req->id);
	u64 t = ktime_get_ns();
	u32 i;
	int ret;

	if (!e) {
		atoll_err(req->error, "there is no enclave with id %u", req->id);
		return -ENOENT;
	}
	/* A bound program's mirror maps this memory: refused even with force. */
	ret = atoll_program_check_destroy(e, req->error);
	if (ret)
		return ret;
	atoll_channel_drain(e);
	if (!req->force && !e->crashed) {
		if (atoll_channel_send(e, ATOLL_MSG_SHUTDOWN, 0) ||
		    !wait_event_timeout(e->wq, stop_settled(e),
					msecs_to_jiffies(ATOLL_STOP_WAIT_MS))) {
			atoll_err(req->error, "the LWK did not stop within %u ms; `atoll destroy --force` parks its CPUs anyway",
				  ATOLL_STOP_WAIT_MS);
			return -ETIMEDOUT;
		}
	}
	/* INIT parks each CPU whatever it runs; Linux then boots it afresh. */
	for (i = 0; i < e->cpu_count; i++)
		atoll_cpu_init(e->apic_ids[i]);
	registry_remove(e);
	req->phase_ns[ATOLL_DPHASE_STOP] = ktime_get_ns() - t;

	t = ktime_get_ns();
	atoll_cpus_give_back(&e->cpus);
	req->phase_ns[ATOLL_DPHASE_CPUS] = ktime_get_ns() - t;

	t = ktime_get_ns();
	unmap_shared(e);
	atoll_memory_give_back(e);
	req->phase_ns[ATOLL_DPHASE_MEMORY] = ktime_get_ns() - t;

	pr_info("atoll: enclave %s (id %u) destroyed\n", e->name, e->id);
	kfree(e);
	module_put(THIS_MODULE);
	return 0;
}

static u32 state_of(struct atoll_enclave *e)
{
	atoll_channel_drain(e);
	if (e->crashed)
		return ATOLL_ENCLAVE_CRASHED;
	if (e->stopped)
		return ATOLL_ENCLAVE_STOPPED;
	return e->booted ? ATOLL_ENCLAVE_RUNNING : ATOLL_ENCLAVE_BOOTING;
}

u32 atoll_enclave_state(struct atoll_enclave *e)
{
	return state_of(e);
}

int atoll_enclave_info(struct atoll_enclave_info *req)
{
	struct atoll_enclave *e = NULL;
	u32 i, seen = 0;

	for (i = 0; i < ATOLL_MAX_ENCLAVES && !e; i++)
		if (registry[i] && seen++ == req->index)
			e = registry[i];
	if (!e)
		return -ENOENT;
	req->id = e->id;
	req->state = state_of(e);
	req->cpu_count = e->cpu_count;
	req->mem_count = e->block_count;
	memcpy(req->name, e->name, ATOLL_NAME_LEN);
	copy_cpus(e, req->cpus);
	atoll_memory_ranges(e, req->mem);
	req->uptime_ns = ktime_get_ns() - e->created_ns;
	memcpy(req->phase_ns, e->phase_ns, sizeof(req->phase_ns));
	req->lwk_free_bytes = READ_ONCE(e->channel->free_bytes);
	req->lwk_total_bytes = READ_ONCE(e->channel->total_bytes);
	req->program_pid = atoll_program_pid(e);
	return 0;
}

int atoll_enclave_console(struct atoll_console_read *req)
{
	struct atoll_enclave *e = find(req->id);
	struct atoll_console *c;
	const u8 *data;
	u64 head, oldest, off, n, at, first;

	if (!e)
		return -ENOENT;
	c = e->console;
	data = (const u8 *)(c + 1);
	/* The LWK writes the text before it moves head (release). */
	head = smp_load_acquire(&c->head);
	oldest = head > c->capacity ? head - c->capacity : 0;
	off = clamp(req->offset, oldest, head);
	n = min(head - off, req->buf_len);
	at = off % c->capacity;
	first = min(n, c->capacity - at);
	if (copy_to_user(u64_to_user_ptr(req->buf_ptr), data + at, first) ||
	    copy_to_user(u64_to_user_ptr(req->buf_ptr + first), data, n - first))
		return -EFAULT;
	req->offset = off;
	req->copied = n;
	req->head = head;
	return 0;
}

static bool pong_seen(struct atoll_enclave *e, u64 cookie)
{
	atoll_channel_drain(e);
	return e->pong_cookie == cookie || e->crashed;
}

int atoll_enclave_ping(struct atoll_ping *req)
{
	struct atoll_enclave *e = find(req->id);
	u64 cookie = ++ping_cookie, t0, spin_until;
	int ret;

	if (!e)
		return -ENOENT;
	if (state_of(e) != ATOLL_ENCLAVE_RUNNING)
		return -EHOSTDOWN;
	t0 = ktime_get_ns();
	ret = atoll_channel_send(e, ATOLL_MSG_PING, cookie);
	if (ret)
		return ret;
	/* Spin briefly (the answer usually comes within microseconds), then sleep. */
	spin_until = t0 + 2 * NSEC_PER_MSEC;
	while (!pong_seen(e, cookie) && ktime_get_ns() < spin_until)
		cpu_relax();
	if (!pong_seen(e, cookie) &&
	    wait_event_killable_timeout(e->wq, pong_seen(e, cookie), HZ) <= 0)
		return -ETIMEDOUT;
	if (e->crashed)
		return -EHOSTDOWN;
	req->rtt_ns = ktime_get_ns() - t0;
	return 0;
}
