// SPDX-License-Identifier: GPL-2.0-only
/*
 * Enclaves: the registry and what each ioctl does to an enclave. Every
 * failure gives back what was taken, in reverse order.
 */
#include <linux/ctype.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include "atoll.h"

static struct atoll_enclave *registry[ATOLL_MAX_ENCLAVES];
static DEFINE_SPINLOCK(registry_lock);	/* also taken in the platform IPI */
static u32 next_id = 1;

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

/* Enclave id or NULL, for the test module's ioctls (under atoll_lock). */
struct atoll_enclave *atoll_enclave_find(u32 id)
{
	return find(id);
}
EXPORT_SYMBOL_GPL(atoll_enclave_find);

/*
 * Claims a free area of e for p (FREE -> CREATING; the LWK claims areas the
 * same way) and forgets what the LWK said about its last occupant.
 */
static int claim_area(struct atoll_enclave *e, struct atoll_program *p)
{
	struct atoll_area *a;
	u32 i;

	for (i = 0; i < ATOLL_MAX_PROGRAMS; i++) {
		a = &e->areas[i];
		if (a->program || cmpxchg(&atoll_proc_area(e, i)->state, ATOLL_PROC_FREE,
					  ATOLL_PROC_CREATING) != ATOLL_PROC_FREE)
			continue;
		*a = (struct atoll_area){ .program = p, .uid = current_euid(),
					  .gid = current_egid() };
		e->programs++;
		p->e = e;
		p->area = i;
		p->proc = atoll_proc_area(e, i);
		return 0;
	}
	return -EBUSY;
}

/*
 * For a program ioctl: takes atoll_lock and finds enclave id. On failure
 * the lock is not held and err says why.
 */
static int lock_and_find(u32 id, struct atoll_enclave **e, char *err)
{
	if (mutex_lock_killable(&atoll_lock)) {
		atoll_err(err, "interrupted");
		return -EINTR;
	}
	*e = find(id);
	if (*e)
		return 0;
	mutex_unlock(&atoll_lock);
	atoll_err(err, "there is no enclave with id %u", id);
	return -ENOENT;
}

/* Whether the caller may use enclave id (program.c checks before anything else). */
int atoll_enclave_check_use(u32 id, char *err)
{
	struct atoll_enclave *e;
	int ret = lock_and_find(id, &e, err);

	if (ret)
		return ret;
	ret = atoll_check_use(e, err);
	mutex_unlock(&atoll_lock);
	return ret;
}

/* Binds program p to an area of enclave id (program.c's RUN). */
int atoll_enclave_bind(u32 id, struct atoll_program *p, u32 cpus, u64 cpu_mask, char *err)
{
	struct atoll_enclave *e;
	unsigned long flags;
	u32 state;
	int ret;

	ret = lock_and_find(id, &e, err);
	if (ret)
		return ret;
	ret = atoll_check_use(e, err);
	if (ret)
		goto out;
	state = atoll_lwk_state(e);
	if (state == ATOLL_ENCLAVE_CRASHED) {
		atoll_err(err, "enclave %s has crashed; `atoll console %s` shows why",
			  e->name, e->name);
		ret = -EHOSTDOWN;
	} else if (state != ATOLL_ENCLAVE_RUNNING) {
		atoll_err(err, "enclave %s is not running", e->name);
		ret = -EHOSTDOWN;
	} else if (cpus > e->cpu_count) {
		atoll_err(err, "the program asks for %u CPUs, but enclave %s has %u",
			  cpus, e->name, e->cpu_count);
		ret = -EINVAL;
	} else if (cpu_mask & ~e->lwk_cpus) {
		atoll_err(err, "the program asks for LWK CPU %u, but enclave %s has LWK CPUs %*pbl",
			  (u32)__ffs64(cpu_mask & ~e->lwk_cpus), e->name, 64, &e->lwk_cpus);
		ret = -EINVAL;
	}
	if (ret)
		goto out;
	/* Messages about areas' last occupants come before they were FREE: take them now. */
	atoll_lwk_poll(e);
	spin_lock_irqsave(&e->msg_lock, flags);
	ret = claim_area(e, p);
	spin_unlock_irqrestore(&e->msg_lock, flags);
	if (ret)
		atoll_err(err, "enclave %s runs %u programs, as many as it can at once (or some are still being freed)",
			  e->name, ATOLL_MAX_PROGRAMS);
	else
		atoll_serve_nice_apply(e);
out:
	mutex_unlock(&atoll_lock);
	return ret;
}

/*
 * Binds p to the program the LWK forked into area (ATOLL_IOC_ADOPT): the
 * area must hold that pid, LOADED (or EXITED, see below), bound to no file.
 */
int atoll_enclave_adopt(u32 id, struct atoll_program *p, u32 area, u32 pid, u64 token, char *err)
{
	struct atoll_enclave *e;
	struct atoll_proc *proc;
	unsigned long flags;
	u32 state;
	int ret;

	ret = lock_and_find(id, &e, err);
	if (ret)
		return ret;
	if (area >= ATOLL_MAX_PROGRAMS) {
		atoll_err(err, "enclave %s has no program area %u", e->name, area);
		ret = -EINVAL;
		goto out;
	}
	/*
	 * The child's one-time token (only its parent's server had it) lets a
	 * program that became another user (setuid) fork; others must be
	 * allowed to use the enclave.
	 */
	if (!token || READ_ONCE(e->areas[area].adopt_token) != token) {
		ret = atoll_check_use(e, err);
		if (ret)
			goto out;
	}
	atoll_lwk_poll(e);
	proc = atoll_proc_area(e, area);
	spin_lock_irqsave(&e->msg_lock, flags);
	/*
	 * The LWK sets each state with a release. RUNNING: a child that ran
	 * before it needed a server. EXITED too: a child whose parent ended
	 * mid-fork is adopted only to be released (and freed). The token was
	 * given for this child (pid): a stale one cannot take a later occupant.
	 */
	state = smp_load_acquire(&proc->state);
	if (e->areas[area].program ||
	    (state != ATOLL_PROC_LOADED && state != ATOLL_PROC_RUNNING &&
	     state != ATOLL_PROC_EXITED) ||
	    READ_ONCE(proc->pid) != pid || !pid || !token || e->areas[area].adopt_token != token ||
	    e->areas[area].adopt_pid != pid) {
		atoll_err(err, "enclave %s has no forked program %u waiting in area %u",
			  e->name, pid, area);
		ret = -ESRCH;
	} else {
		e->areas[area] = (struct atoll_area){ .program = p, .pid = pid,
						      .uid = current_euid(),
						      .gid = current_egid() };
		if (state == ATOLL_PROC_EXITED) {
			e->areas[area].wait_status = READ_ONCE(proc->wait_status);
			/* Its end came first: the status before the flag, as in on_exit(). */
			smp_store_release(&e->areas[area].exited, true);
		}
		/* Created: pid set first (readers take created with an acquire). */
		smp_store_release(&e->areas[area].created, true);
		e->programs++;
		p->e = e;
		p->area = area;
		p->proc = proc;
	}
	spin_unlock_irqrestore(&e->msg_lock, flags);
	if (!ret)
		atoll_serve_nice_apply(e);
out:
	mutex_unlock(&atoll_lock);
	return ret;
}

/*
 * A delegated fork is handed to a worker: the child's area gets a fresh
 * random token, which only that worker learns (the call's args[2]) and
 * its forked `atoll run` must show to adopt the child.
 */
void atoll_enclave_fork_token(struct atoll_enclave *e, u64 area, u64 pid, u64 *token)
{
	unsigned long flags;

	*token = 0;
	if (area >= ATOLL_MAX_PROGRAMS)
		return;
	*token = get_random_u64() | 1;
	spin_lock_irqsave(&e->msg_lock, flags);
	if (!e->areas[area].program) {
		e->areas[area].adopt_token = *token;
		e->areas[area].adopt_pid = pid;
	} else {
		*token = 0;
	}
	spin_unlock_irqrestore(&e->msg_lock, flags);
}

/*
 * Lets p's area take its next occupant (a child the LWK forks into it as
 * soon as it is free must be adoptable), while p still holds e.
 */
void atoll_enclave_vacate(struct atoll_enclave *e, struct atoll_program *p)
{
	struct atoll_area *a = &e->areas[p->area];
	unsigned long flags;

	spin_lock_irqsave(&e->msg_lock, flags);
	if (a->program == p)
		a->program = NULL;
	spin_unlock_irqrestore(&e->msg_lock, flags);
}

/*
 * Ends p's binding (vacated or not; p holds one binding until this): when
 * none is left, destroy may go ahead again.
 */
void atoll_enclave_unbind(struct atoll_enclave *e, struct atoll_program *p)
{
	unsigned long flags;

	atoll_enclave_vacate(e, p);
	spin_lock_irqsave(&e->msg_lock, flags);
	e->programs--;
	spin_unlock_irqrestore(&e->msg_lock, flags);
	wake_up_all(&e->wq);
}

static u32 programs_bound(struct atoll_enclave *e)
{
	unsigned long flags;
	u32 n;

	spin_lock_irqsave(&e->msg_lock, flags);
	n = e->programs;
	spin_unlock_irqrestore(&e->msg_lock, flags);
	return n;
}

/* Destroy --force: every program is told to end, and its `atoll run` ends with it. */
static void kill_programs(struct atoll_enclave *e)
{
	u64 msg[2] = { 0, 9 };	/* area, SIGKILL */
	unsigned long flags;
	bool bound;
	u32 i;

	for (i = 0; i < ATOLL_MAX_PROGRAMS; i++) {
		spin_lock_irqsave(&e->msg_lock, flags);
		bound = e->areas[i].program;
		spin_unlock_irqrestore(&e->msg_lock, flags);
		msg[0] = i;
		if (bound && atoll_kmsg_send_wait(e, ATOLL_KMSG_PROC_KILL, msg, sizeof(msg)))
			return;
	}
	wait_event_killable_timeout(e->wq, !programs_bound(e),
				    msecs_to_jiffies(ATOLL_KILL_WAIT_MS));
}

/* Destroy: refused while programs are bound (their mirrors map our memory). */
static int check_no_program(struct atoll_enclave *e, bool force, char *err)
{
	u32 n;

	if (force && programs_bound(e) && atoll_lwk_state(e) == ATOLL_ENCLAVE_RUNNING)
		kill_programs(e);
	n = programs_bound(e);
	if (!n)
		return 0;
	atoll_err(err, "enclave %s is running %u program%s: end `atoll run` first%s",
		  e->name, n, n == 1 ? "" : "s",
		  force ? " (they did not end when told to)" : ", or destroy --force to kill them");
	return -EBUSY;
}

/* ATOLL_IOC_PROGRAMS: every area in use, as the LWK and the host filled it. */
int atoll_enclave_programs(struct atoll_programs *req)
{
	struct atoll_enclave *e = find(req->id);
	struct atoll_program_info *out;
	struct atoll_proc *proc;
	u32 i, state;

	if (!e)
		return -ENOENT;
	if (!atoll_may_use(e))
		return -EACCES;
	req->count = 0;
	for (i = 0; i < ATOLL_MAX_PROGRAMS; i++) {
		proc = atoll_proc_area(e, i);
		/* The LWK sets each state with a release. */
		state = smp_load_acquire(&proc->state);
		if (state == ATOLL_PROC_FREE || state == ATOLL_PROC_CREATING)
			continue;
		out = &req->program[req->count++];
		out->pid = READ_ONCE(proc->pid);
		out->host_pid = READ_ONCE(proc->host_pid);
		out->state = state;
		out->threads = READ_ONCE(proc->threads);
		out->cpus = READ_ONCE(proc->cpus);
		out->mem_bytes = READ_ONCE(proc->mem_bytes);
		out->poll_window_us = READ_ONCE(proc->poll_window_us);
		out->calls_per_s = READ_ONCE(proc->calls_per_s);
		out->kernel_mode = READ_ONCE(proc->kernel_mode);
		memcpy(out->comm, proc->comm, ATOLL_COMM_LEN);
		out->comm[ATOLL_COMM_LEN - 1] = 0;
	}
	return 0;
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
	atoll_kmsg_link_exit(e);
	if (e->shared)
		vunmap(e->shared);
	e->shared = NULL;
	e->status = NULL;
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

/* The new enclave gets rings to every running one (a failure costs only those rings). */
static void connect_peers(struct atoll_enclave *e)
{
	int i;

	for (i = 0; i < ATOLL_MAX_ENCLAVES; i++) {
		if (!registry[i] || registry[i] == e ||
		    atoll_lwk_state(registry[i]) != ATOLL_ENCLAVE_RUNNING)
			continue;
		if (atoll_peer_connect(registry[i], e))
			pr_warn("atoll: no memory for rings between enclaves %s and %s\n",
				registry[i]->name, e->name);
	}
}

int atoll_enclave_create(struct atoll_create *req)
{
	struct atoll_enclave *e;
	char *err = req->error;
	unsigned int cpu;
	u64 t;
	int ret;

	ret = atoll_may_admin(err, "create enclaves");
	if (ret)
		return ret;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	spin_lock_init(&e->msg_lock);
	init_waitqueue_head(&e->wq);
	INIT_LIST_HEAD(&e->mirrors);
	e->id = next_id;
	ret = atoll_owner_set(e, req->owner_uid, req->owner_gid, err);
	if (!ret)
		ret = atoll_serve_nice_set(e, req->serve_nice, err);
	if (!ret)
		ret = atoll_hrt_set(e, req->hrt, err);
	if (!ret)
		ret = take_name(e, req, err);
	if (!ret)
		ret = atoll_cpus_pick(req->cpus, req->cpu_count, &e->cpus, err);
	if (ret)
		goto out_free;
	for_each_cpu(cpu, &e->cpus) {
		e->linux_cpus[e->cpu_count] = cpu;
		e->apic_ids[e->cpu_count++] = cpu_physical_id(cpu);
	}
	e->lwk_cpus = e->cpu_count == 64 ? ~0ULL : BIT_ULL(e->cpu_count) - 1;

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
	e->boot_blocks = e->block_count;
	connect_peers(e);
	__module_get(THIS_MODULE);	/* no unload while an enclave exists */

	req->id = e->id;
	memcpy(req->name, e->name, ATOLL_NAME_LEN);
	copy_cpus(e, req->taken_cpus);
	req->mem_count = e->block_count;
	atoll_memory_ranges(e, req->mem);
	memcpy(req->phase_ns, e->phase_ns, sizeof(req->phase_ns));
	pr_notice("atoll: enclave %s (id %u) up on %u CPUs and %u MiB\n", e->name, e->id,
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

int atoll_enclave_destroy(struct atoll_destroy *req)
{
	struct atoll_enclave *e = find(req->id);
	u64 t = ktime_get_ns();
	u32 i;
	int ret;

	ret = atoll_may_admin(req->error, "destroy enclaves");
	if (ret)
		return ret;
	if (!e) {
		atoll_err(req->error, "there is no enclave with id %u", req->id);
		return -ENOENT;
	}
	/* A bound program's mirror maps this memory: force kills them first. */
	ret = check_no_program(e, req->force, req->error);
	if (ret)
		return ret;
	if (!req->force && atoll_lwk_state(e) != ATOLL_ENCLAVE_CRASHED) {
		ret = atoll_lwk_shutdown(e, req->error);
		if (ret)
			return ret;
	}
	/* INIT parks each CPU whatever it runs; Linux then boots it afresh. */
	for (i = 0; i < ATOLL_MAX_CPUS; i++)
		if (e->lwk_cpus & BIT_ULL(i))
			atoll_cpu_init(e->apic_ids[i]);
	registry_remove(e);
	atoll_peers_disconnect(e);
	/*
	 * Before its memory goes back: nobody may map it then. Its messages
	 * stop first, so no handler queues work naming e after this.
	 */
	atoll_kmsg_link_exit(e);
	atoll_xemem_enclave_gone(e);
	req->phase_ns[ATOLL_DPHASE_STOP] = ktime_get_ns() - t;

	t = ktime_get_ns();
	atoll_cpus_give_back(&e->cpus);
	req->phase_ns[ATOLL_DPHASE_CPUS] = ktime_get_ns() - t;

	t = ktime_get_ns();
	unmap_shared(e);
	atoll_memory_give_back(e);
	req->phase_ns[ATOLL_DPHASE_MEMORY] = ktime_get_ns() - t;

	pr_notice("atoll: enclave %s (id %u) destroyed\n", e->name, e->id);
	kfree(e);
	module_put(THIS_MODULE);
	return 0;
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
	req->state = atoll_lwk_state(e);
	memcpy(req->name, e->name, ATOLL_NAME_LEN);
	req->owner_uid = from_kuid_munged(current_user_ns(), e->owner_uid);
	req->owner_gid = gid_valid(e->owner_gid) ?
			 from_kgid_munged(current_user_ns(), e->owner_gid) : ATOLL_NO_GROUP;
	req->yours = atoll_may_use(e);
	if (!req->yours)
		return 0;
	req->cpu_count = e->cpu_count;
	req->mem_count = e->block_count;
	req->serve_nice = e->serve_nice;
	req->hrt = e->hrt;
	copy_cpus(e, req->cpus);
	atoll_memory_ranges(e, req->mem);
	req->uptime_ns = ktime_get_ns() - e->created_ns;
	memcpy(req->phase_ns, e->phase_ns, sizeof(req->phase_ns));
	req->lwk_free_bytes = READ_ONCE(e->status->free_bytes);
	req->lwk_total_bytes = READ_ONCE(e->status->total_bytes);
	req->programs = programs_bound(e);
	atoll_resize_history(e, req);
	req->lwk_cpus = e->lwk_cpus;
	return 0;
}

/* ATOLL_IOC_CHOWN: who may use enclave id. */
int atoll_enclave_chown(struct atoll_chown *req)
{
	struct atoll_enclave *e;
	int ret = atoll_may_admin(req->error, "change an enclave's owner");

	if (ret)
		return ret;
	e = find(req->id);
	if (!e) {
		atoll_err(req->error, "there is no enclave with id %u", req->id);
		return -ENOENT;
	}
	ret = atoll_owner_set(e, req->uid, req->gid, req->error);
	if (ret)
		return ret;
	ret = atoll_peers_owner_changed(e);
	if (ret)
		atoll_err(req->error, "enclave %s has its new owner, but an LWK did not confirm whether programs may message it now (see dmesg)",
			  e->name);
	return ret;
}

/* Enclave id, if it runs; else NULL with *ret and err saying why. */
static struct atoll_enclave *find_running(u32 id, char *err, int *ret)
{
	struct atoll_enclave *e = find(id);

	if (!e) {
		atoll_err(err, "there is no enclave with id %u", id);
		*ret = -ENOENT;
	} else if (atoll_lwk_state(e) != ATOLL_ENCLAVE_RUNNING) {
		atoll_err(err, "enclave %s is not running", e->name);
		*ret = -EHOSTDOWN;
		e = NULL;
	}
	return e;
}

/* ATOLL_IOC_RESIZE: CPUs or memory added to or taken back from a running enclave. */
int atoll_enclave_resize(struct atoll_resize *req)
{
	int ret = atoll_may_admin(req->error, "resize enclaves");
	struct atoll_enclave *e = ret ? NULL : find_running(req->id, req->error, &ret);

	return e ? atoll_resize(e, req) : ret;
}

/* ATOLL_IOC_NOISE: a noise probe on one of a running enclave's CPUs. */
int atoll_enclave_noise(struct atoll_noise_req *req)
{
	int ret = atoll_may_admin(req->error, "run noise probes (they hold an enclave CPU)");
	struct atoll_enclave *e = ret ? NULL : find_running(req->id, req->error, &ret);

	return e ? atoll_noise(e, req) : ret;
}

int atoll_enclave_console(struct atoll_console_read *req)
{
	struct atoll_enclave *e = find(req->id);
	struct atoll_console *c;
	const u8 *data;
	u64 head, oldest, off, n, at, first;

	if (!e)
		return -ENOENT;
	if (!atoll_may_use(e))
		return -EACCES;
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

int atoll_enclave_ping(struct atoll_ping *req)
{
	struct atoll_enclave *e = find(req->id), *from;

	if (!e)
		return -ENOENT;
	if (!atoll_may_use(e))
		return -EACCES;
	if (!req->from_id)
		return atoll_lwk_ping(e, &req->rtt_ns);
	from = find(req->from_id);
	if (!from)
		return -ENOENT;
	if (!atoll_may_use(from))
		return -EACCES;
	return atoll_peer_ping(from, e, &req->rtt_ns);
}

int atoll_enclave_msg_send(struct atoll_msg_io *io)
{
	struct atoll_enclave *e = NULL;

	if (io->kernel != ATOLL_KERNEL_LINUX) {
		e = find(io->kernel);
		if (!e)
			return -EHOSTUNREACH;
		if (!atoll_may_use(e))
			return -EACCES;
	}
	return atoll_usermsg_send(e, io);
}
