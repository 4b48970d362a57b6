// SPDX-License-Identifier: GPL-2.0-only
/*
 * Programs in an enclave (abi/atoll_abi.h, "Programs"): each open
 * /dev/atoll file can be bound to one program, in one of the enclave's
 * program areas. RUN has the LWK build the address space, START runs it, CALL hands
 * the LWK's delegated system calls to the `atoll run` process's workers
 * and returns their results, KILL ends the program, and the file's release
 * lets the LWK free it.
 *
 * Only RUN touches the registry (under atoll_lock, briefly). The binding
 * keeps the enclave alive: destroy refuses while one exists, and it ends
 * only when the file is released, so the other paths use p->e freely.
 */
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <asm/apic.h>
#include "atoll.h"

/* A sleeping worker's slices between looks at the LWK's messages. */
#define CALL_SLICE_MIN_MS	10
#define CALL_SLICE_MAX_MS	1000

struct atoll_program *atoll_program_alloc(void)
{
	struct atoll_program *p = kzalloc(sizeof(*p), GFP_KERNEL);

	if (!p)
		return NULL;
	mutex_init(&p->lock);
	init_rwsem(&p->map_sem);
	INIT_LIST_HEAD(&p->mirror_node);
	spin_lock_init(&p->call_lock);
	return p;
}

/* ---- The LWK's program messages (run in the message interrupt) ------- */

/* The area a message names; NULL (and a warning) if it names none. */
static struct atoll_area *msg_area(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	u64 i = atoll_kmsg_word(m, 0);

	if (i < ATOLL_MAX_PROGRAMS)
		return &e->areas[i];
	pr_warn_ratelimited("atoll: enclave %s: message %u names program area %llu: refused\n",
			    e->name, m->type, i);
	return NULL;
}

static void on_created(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	struct atoll_area *a = msg_area(e, m);

	if (!a)
		return;
	spin_lock(&e->msg_lock);
	a->result = (s64)atoll_kmsg_word(m, 1);
	a->pid = atoll_kmsg_word(m, 2);
	/* Result and pid first: readers take created with an acquire. */
	smp_store_release(&a->created, true);
	spin_unlock(&e->msg_lock);
}

static void on_exit(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	struct atoll_area *a = msg_area(e, m);

	if (!a)
		return;
	spin_lock(&e->msg_lock);
	/* An earlier occupant's message (the pid tells) is old news. */
	if (a->created && a->pid == atoll_kmsg_word(m, 2)) {
		a->wait_status = atoll_kmsg_word(m, 1);
		/* The status first: readers take exited with an acquire. */
		smp_store_release(&a->exited, true);
	}
	spin_unlock(&e->msg_lock);
}

static void on_freed(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	struct atoll_area *a = msg_area(e, m);

	if (!a)
		return;
	spin_lock(&e->msg_lock);
	if (a->created && a->pid == atoll_kmsg_word(m, 1))
		WRITE_ONCE(a->freed, true);
	spin_unlock(&e->msg_lock);
}

/* Records (task) or forgets (NULL) the worker performing slot i's call. */
static void set_caller(struct atoll_program *p, u32 i, struct task_struct *task)
{
	struct task_struct *old;
	unsigned long flags;

	if (task)
		get_task_struct(task);
	spin_lock_irqsave(&p->call_lock, flags);
	old = p->callers[i];
	p->callers[i] = task;
	spin_unlock_irqrestore(&p->call_lock, flags);
	if (old)
		put_task_struct(old);
}

/*
 * A signal came for the LWK thread waiting in a slot: interrupt the worker
 * performing its call (`atoll run` catches ATOLL_CANCEL_SIGNAL without
 * SA_RESTART, so a blocking call returns EINTR).
 */
static void on_call_cancel(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	struct atoll_area *a = msg_area(e, m);
	u64 slot = atoll_kmsg_word(m, 1);
	struct atoll_program *p;

	if (!a || slot >= ATOLL_MAX_SLOTS)
		return;
	spin_lock(&e->msg_lock);
	/* The binding keeps p alive while msg_lock is held (unbind takes it). */
	p = a->program;
	if (p) {
		spin_lock(&p->call_lock);
		if (p->callers[slot])
			send_sig(ATOLL_CANCEL_SIGNAL, p->callers[slot], 1);
		spin_unlock(&p->call_lock);
	}
	spin_unlock(&e->msg_lock);
}

static void on_execed(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
	struct atoll_area *a = msg_area(e, m);

	if (!a)
		return;
	spin_lock(&e->msg_lock);
	a->exec_result = (s64)atoll_kmsg_word(m, 1);
	a->exec_cr3 = atoll_kmsg_word(m, 2);
	/* Result and root first: readers take execed with an acquire. */
	smp_store_release(&a->execed, true);
	spin_unlock(&e->msg_lock);
}

/*
 * A thread posted a delegated call in its slot (CALL_POSTED), or the LWK
 * answered a worker's PAGE_WANTED in its slot (PAGE_READY, mirror.c). The
 * slots themselves say which (atoll_call_event() claims calls); the message's
 * job is done by the wake-up of e->wq that follows every batch of messages.
 */
static void on_call_posted(struct atoll_enclave *e, const struct atoll_kmsg *m)
{
}

int atoll_program_init(void)
{
	return atoll_kmsg_register(ATOLL_KMSG_PROC_CREATED, on_created) ?:
	       atoll_kmsg_register(ATOLL_KMSG_PROC_EXIT, on_exit) ?:
	       atoll_kmsg_register(ATOLL_KMSG_PROC_FREED, on_freed) ?:
	       atoll_kmsg_register(ATOLL_KMSG_CALL_POSTED, on_call_posted) ?:
	       atoll_kmsg_register(ATOLL_KMSG_PAGE_READY, on_call_posted) ?:
	       atoll_kmsg_register(ATOLL_KMSG_CALL_CANCEL, on_call_cancel) ?:
	       atoll_kmsg_register(ATOLL_KMSG_PROC_EXECED, on_execed);
}

/* Sends a message about p's program: its area, and one u64 argument. */
static int send_proc(struct atoll_program *p, u16 type, u64 arg)
{
	u64 msg[2] = { p->area, arg };

	return atoll_kmsg_send_wait(p->e, type, msg, sizeof(msg));
}

static struct atoll_area *area_of(struct atoll_program *p)
{
	return &p->e->areas[p->area];
}

/* Ends the binding; the caller touches p->e no more afterwards. */
static void unbind(struct atoll_program *p)
{
	atoll_enclave_unbind(p->e, p);
	WRITE_ONCE(p->created, false);
	p->e = NULL;
	p->proc = NULL;
}

/* Lets the LWK free what a CREATE built (every CREATE gets one RELEASE). */
static void release_in_lwk(struct atoll_program *p)
{
	struct atoll_enclave *e = p->e;

	if (READ_ONCE(e->crashed))
		return;
	if (send_proc(p, ATOLL_KMSG_PROC_RELEASE, 0))
		pr_warn("atoll: enclave %s: could not tell the LWK to free its program; its message ring stays full\n",
			e->name);
}

void atoll_program_release(struct atoll_program *p)
{
	u32 i;

	for (i = 0; i < ATOLL_MAX_SLOTS; i++)
		set_caller(p, i, NULL);
	atoll_mirror_untrack(p);
	if (p->e) {
		/*
		 * Vacated before the LWK hears of it: once it frees the area it
		 * may fork a child into it at once, whose ADOPT needs it free.
		 * The binding, which keeps e alive, ends after the message.
		 * No wait for FREED: the area is claimed again only once FREE.
		 */
		atoll_enclave_vacate(p->e, p);
		if (p->created)
			release_in_lwk(p);
		unbind(p);
	}
	atoll_mirror_put(p);
	atoll_xemem_file_gone(p);
	kfree(p);
}

typedef long (*atoll_program_op)(struct atoll_program *p, void *req);

/*
 * A program ioctl with a request struct of `size` bytes: copied in, its
 * header checked, `op` run under p->lock, copied back (with the reason
 * in its error field on failure).
 */
static long locked_request(struct atoll_program *p, unsigned long arg, size_t size, u32 magic,
			   atoll_program_op op)
{
	struct atoll_header *req;
	long ret;

	req = kmalloc(size, GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	if (copy_from_user(req, (void __user *)arg, size)) {
		ret = -EFAULT;
		goto out;
	}
	ret = atoll_req_check(req, size, magic);
	if (ret)
		goto out;
	if (mutex_lock_killable(&p->lock)) {
		ret = -EINTR;
		goto out;
	}
	ret = op(p, req);
	mutex_unlock(&p->lock);
	if (copy_to_user((void __user *)arg, req, size))
		ret = -EFAULT;
out:
	kfree(req);
	return ret;
}

/* ---- RUN ---------------------------------------------------------------- */

/* The program's and its loader's names, for /proc/<pid>/maps, ended. */
static void copy_file_names(struct atoll_proc *proc, const struct atoll_run *run)
{
	unsigned int i;

	memcpy(proc->file, run->file, sizeof(proc->file));
	for (i = 0; i < ARRAY_SIZE(proc->file); i++)
		proc->file[i].path[ATOLL_FILE_PATH_LEN - 1] = 0;
}

static int check_regions(const struct atoll_run *run, char *err)
{
	const struct atoll_region *r, *q;
	u32 i, j;

	if (run->region_count > ATOLL_MAX_REGIONS) {
		atoll_err(err, "a program has at most %u regions, not %u", ATOLL_MAX_REGIONS,
			  run->region_count);
		return -EINVAL;
	}
	for (i = 0; i < run->region_count; i++) {
		r = &run->region[i];
		if (!r->size || ((r->start | r->size) & ~PAGE_MASK)) {
			atoll_err(err, "region %u (%#llx, %#llx bytes) is empty or not page aligned",
				  i, r->start, r->size);
			return -EINVAL;
		}
		if (r->start < ATOLL_USER_START || r->start >= ATOLL_USER_END ||
		    r->size > ATOLL_USER_END - r->start) {
			atoll_err(err, "region %u (%#llx, %#llx bytes) lies outside the program's addresses [%#llx, %#llx)",
				  i, r->start, r->size, ATOLL_USER_START, ATOLL_USER_END);
			return -EINVAL;
		}
		if (r->prot & ~(ATOLL_PROT_READ | ATOLL_PROT_WRITE | ATOLL_PROT_EXEC)) {
			atoll_err(err, "region %u has unknown protection bits %#x", i, r->prot);
			return -EINVAL;
		}
		if (r->flags & ~(ATOLL_REGION_ON_DEMAND | ATOLL_REGION_STACK |
				 ATOLL_REGION_PROGRAM | ATOLL_REGION_LOADER)) {
			atoll_err(err, "region %u has unknown flags %#x", i, r->flags);
			return -EINVAL;
		}
		if ((r->flags & ATOLL_REGION_ON_DEMAND) &&
		    (r->prot & ATOLL_PROT_EXEC || !(r->prot & ATOLL_PROT_WRITE))) {
			atoll_err(err, "region %u: on demand but not plain read-write", i);
			return -EINVAL;
		}
		for (j = 0; j < i; j++) {
			q = &run->region[j];
			if (r->start < q->start + q->size && q->start < r->start + r->size) {
				atoll_err(err, "regions %u and %u overlap", j, i);
				return -EINVAL;
			}
		}
		/*
		 * The heap must start outside every region. Not "above every
		 * one": the stack is a region too, at the top of the addresses.
		 */
		if (run->brk_start >= r->start && run->brk_start < r->start + r->size) {
			atoll_err(err, "the heap start %#llx lies in region %u (%#llx, %#llx bytes)",
				  run->brk_start, i, r->start, r->size);
			return -EINVAL;
		}
	}
	if ((run->brk_start & ~PAGE_MASK) || run->brk_start < ATOLL_USER_START ||
	    run->brk_start >= ATOLL_USER_END) {
		atoll_err(err, "the heap start %#llx is not a page-aligned program address",
			  run->brk_start);
		return -EINVAL;
	}
	return 0;
}

static bool create_answered(struct atoll_program *p)
{
	atoll_lwk_poll(p->e);
	/* Pairs with the release in on_created(): the result is set before it. */
	return smp_load_acquire(&area_of(p)->created) || READ_ONCE(p->e->crashed);
}

/* After RELEASE of a CREATE we gave up on: freed, or its creation failed. */
static bool abandoned_settled(struct atoll_program *p)
{
	struct atoll_area *a = area_of(p);

	atoll_lwk_poll(p->e);
	if (READ_ONCE(a->freed) || READ_ONCE(p->e->crashed))
		return true;
	/* Pairs with the release in on_created(): the result is set before it. */
	if (!smp_load_acquire(&a->created) || !a->result)
		return false;
	/* The LWK sets each state with a release. */
	return smp_load_acquire(&p->proc->state) == ATOLL_PROC_FREE;
}

/* Waits in short slices (a lost interrupt costs one) until done or timeout_ms. */
static int wait_settled(struct atoll_program *p, bool (*done)(struct atoll_program *p),
			u32 timeout_ms)
{
	u64 deadline = ktime_get_ns() + (u64)timeout_ms * NSEC_PER_MSEC;

	while (!done(p)) {
		if (ktime_get_ns() > deadline)
			return -ETIMEDOUT;
		if (wait_event_killable_timeout(p->e->wq, done(p), msecs_to_jiffies(10)) < 0)
			return -EINTR;
	}
	return 0;
}

static const char *errno_text(int err)
{
	switch (err) {
	case ENOMEM:	return "out of memory";
	case EINVAL:	return "invalid argument";
	case EFAULT:	return "bad address";
	case ENOSPC:	return "no space left";
	case E2BIG:	return "too many regions or arguments";
	case EBUSY:	return "busy";
	case EEXIST:	return "address already mapped";
	case ENOSYS:	return "not supported";
	case EAGAIN:	return "try again";
	case EPERM:	return "not permitted";
	default:	return NULL;
	}
}

static int lwk_create_error(struct atoll_enclave *e, s64 result, char *err)
{
	int code = -result;
	const char *text = errno_text(code);

	if (text)
		atoll_err(err, "the LWK could not create the program's address space: %s (see `atoll console %s`)",
			  text, e->name);
	else
		atoll_err(err, "the LWK could not create the program's address space: error %lld (see `atoll console %s`)",
			  result, e->name);
	return result < 0 && result >= -MAX_ERRNO ? (int)result : -EIO;
}

/*
 * uname's host name for the program: that of the `atoll run` serving it
 * (its UTS namespace), so that an MPI rank finds itself on its node.
 * uts_sem is not exported; a sethostname at this very moment could give
 * a mixed name, as other readers of utsname() without it may see.
 */
static void set_nodename(struct atoll_proc *proc)
{
	strscpy(proc->nodename, utsname()->nodename, sizeof(proc->nodename));
}

/* Fills the area, sends CREATE and waits for CREATED (pid, cr3). */
static int create_in_lwk(struct atoll_program *p, const struct atoll_run *run, char *err)
{
	struct atoll_enclave *e = p->e;
	struct atoll_area *a = area_of(p);
	struct atoll_proc *proc = p->proc;
	u64 area = p->area;
	u32 state;
	int ret;

	/* Everything but the state, which says CREATING: the area is ours. */
	memset((u8 *)proc + offsetof(struct atoll_proc, pid), 0,
	       sizeof(*proc) - offsetof(struct atoll_proc, pid));
	proc->hdr = (struct atoll_header){ ATOLL_MAGIC_PROC, ATOLL_ABI_VERSION, sizeof(*proc), 0 };
	proc->region_count = run->region_count;
	proc->cpu_count = run->cpu_count;
	proc->brk_start = run->brk_start;
	proc->cpus = run->cpus;
	proc->kernel_mode = run->kernel_mode;
	proc->host_pid = task_tgid_nr(current);
	memcpy(proc->comm, run->comm, ATOLL_COMM_LEN);
	proc->comm[ATOLL_COMM_LEN - 1] = 0;
	set_nodename(proc);
	memcpy(proc->region, run->region, run->region_count * sizeof(run->region[0]));
	copy_file_names(proc, run);
	/* The message is sent with a release: the LWK sees the area filled. */
	if (atoll_kmsg_send(e, ATOLL_KMSG_PROC_CREATE, &area, sizeof(area))) {
		WRITE_ONCE(proc->state, ATOLL_PROC_FREE);
		atoll_err(err, "enclave %s's message ring is full; the LWK is not answering",
			  e->name);
		return -EBUSY;
	}

	ret = wait_settled(p, create_answered, ATOLL_PROC_CREATE_MS);
	/* Settled without CREATED (set with a release in on_created()): a crash. */
	if (!ret && !smp_load_acquire(&a->created)) {
		atoll_err(err, "enclave %s crashed while creating the program; `atoll console %s` shows why",
			  e->name, e->name);
		return -EHOSTDOWN;
	}
	/* The LWK sets each state with a release. */
	state = smp_load_acquire(&proc->state);
	if (ret == -ETIMEDOUT) {
		atoll_err(err, "the LWK did not create the program within %u ms (see `atoll console %s`)",
			  ATOLL_PROC_CREATE_MS, e->name);
	} else if (ret == -EINTR) {
		atoll_err(err, "interrupted while the LWK was creating the program");
	} else if (a->result) {
		return lwk_create_error(e, a->result, err);	/* the LWK freed it all */
	} else if (state != ATOLL_PROC_LOADED) {
		atoll_err(err, "the LWK answered, but left the program area in state %u, not loaded",
			  state);
		ret = -EIO;
	} else if (!a->pid || a->pid > INT_MAX) {
		atoll_err(err, "the LWK gave the program pid %u", a->pid);
		ret = -EIO;
	}
	if (ret) {
		/*
		 * The LWK may still build it: RELEASE, and stay bound a while
		 * so that a next RUN does not overlap what is left of this one.
		 */
		release_in_lwk(p);
		wait_settled(p, abandoned_settled, ATOLL_PROC_FREE_WAIT_MS);
		return ret;
	}
	p->pid = a->pid;
	p->cr3 = READ_ONCE(proc->cr3);
	p->zapped_gen = READ_ONCE(proc->map_generation);
	p->next_slot = 0;
	bitmap_zero(p->claimed, ATOLL_MAX_SLOTS);
	return 0;
}

static long run_locked(struct atoll_program *p, void *req)
{
	struct atoll_run *run = req;
	char *err = run->error;
	int ret;

	memset(run->error, 0, sizeof(run->error));
	if (p->e) {
		atoll_err(err, "this file is bound to a program already; open /dev/atoll again for another");
		return -EBUSY;
	}
	ret = atoll_enclave_check_use(run->id, err);
	if (ret)
		return ret;
	ret = check_regions(run, err);
	if (ret)
		return ret;
	ret = atoll_enclave_bind(run->id, p, run->cpu_count, run->cpus, err);
	if (ret)
		return ret;
	ret = atoll_hrt_check_run(p->e, run->kernel_mode, err) ?: create_in_lwk(p, run, err);
	if (ret) {
		unbind(p);
		return ret;
	}
	run->pid = p->pid;
	run->created_tsc = READ_ONCE(p->proc->created_tsc);
	atoll_mirror_track(p);
	/* pid, cr3 and the binding first: readers take created with an acquire. */
	smp_store_release(&p->created, true);
	return p->pid;
}

/* ---- EXEC: an execve's new image --------------------------------------- */

static bool exec_answered(struct atoll_program *p)
{
	atoll_lwk_poll(p->e);
	/* Pairs with the release in on_execed(). */
	return smp_load_acquire(&area_of(p)->execed) || READ_ONCE(p->e->crashed);
}

static long exec_locked(struct atoll_program *p, void *req)
{
	struct atoll_run *run = req;
	struct atoll_proc *proc = p->proc;
	struct atoll_area *a;
	unsigned long flags;
	u64 area = p->area;
	long ret;

	memset(run->error, 0, sizeof(run->error));
	if (!p->created || !p->started)
		return -ENXIO;
	if (READ_ONCE(p->e->crashed))
		return -EHOSTDOWN;
	ret = check_regions(run, run->error);
	if (ret)
		return ret;
	a = area_of(p);
	spin_lock_irqsave(&p->e->msg_lock, flags);
	a->execed = false;
	spin_unlock_irqrestore(&p->e->msg_lock, flags);
	/* The LWK reads these only once it has the message (sent with a release). */
	proc->region_count = run->region_count;
	proc->brk_start = run->brk_start;
	memcpy(proc->region, run->region, run->region_count * sizeof(run->region[0]));
	copy_file_names(proc, run);
	memcpy(proc->comm, run->comm, ATOLL_COMM_LEN);
	proc->comm[ATOLL_COMM_LEN - 1] = 0;
	ret = atoll_kmsg_send_wait(p->e, ATOLL_KMSG_PROC_EXEC, &area, sizeof(area));
	if (ret)
		return ret == -EAGAIN ? -EHOSTDOWN : ret;
	ret = wait_settled(p, exec_answered, ATOLL_PROC_CREATE_MS);
	if (ret)
		return ret;
	/* Pairs with the release in on_execed(): the result is set before it. */
	if (!smp_load_acquire(&a->execed))
		return -EHOSTDOWN;
	if (a->exec_result)
		return a->exec_result < 0 && a->exec_result >= -MAX_ERRNO ? a->exec_result : -EIO;
	atoll_mirror_reload(p, a->exec_cr3);
	return 0;
}

/* ---- ADOPT: a child the LWK forked ------------------------------------- */

static long adopt_locked(struct atoll_program *p, void *req)
{
	struct atoll_adopt *a = req;
	int ret;

	memset(a->error, 0, sizeof(a->error));

	if (p->e) {
		atoll_err(a->error, "this file is bound to a program already; open /dev/atoll again for another");
		return -EBUSY;
	}
	ret = atoll_enclave_adopt(a->id, p, a->area, a->pid, a->token, a->error);
	if (ret)
		return ret;
	p->pid = a->pid;
	p->cr3 = READ_ONCE(p->proc->cr3);
	p->zapped_gen = READ_ONCE(p->proc->map_generation);
	p->next_slot = 0;
	bitmap_zero(p->claimed, ATOLL_MAX_SLOTS);
	p->adopted = true;
	/* Its parent in the LWK starts it once the fork is answered: no START. */
	down_write(&p->map_sem);
	p->started = true;
	up_write(&p->map_sem);
	WRITE_ONCE(p->proc->host_pid, task_tgid_nr(current));
	set_nodename(p->proc);
	atoll_mirror_track(p);
	/* pid, cr3 and the binding first: readers take created with an acquire. */
	smp_store_release(&p->created, true);
	return 0;
}

/* ---- START, KILL -------------------------------------------------------- */

static bool user_addr(u64 a)
{
	return a >= ATOLL_USER_START && a < ATOLL_USER_END;
}

static long start_locked(struct atoll_program *p, const struct atoll_start *s)
{
	struct atoll_proc *proc = p->proc;
	int ret;

	if (!p->created)
		return -ENXIO;
	if (READ_ONCE(p->e->crashed))
		return -EHOSTDOWN;
	/* The LWK sets each state with a release. An adopted child counts as started. */
	if (p->started || smp_load_acquire(&proc->state) != ATOLL_PROC_LOADED)
		return -EINVAL;
	if (!user_addr(s->entry) || !user_addr(s->stack_pointer))
		return -EINVAL;
	proc->entry = s->entry;
	proc->stack_pointer = s->stack_pointer;
	proc->realtime_ns = ktime_get_real_ns();
	/* Write access granted for loading must not outlive it. */
	atoll_mirror_zap(p, true);
	ret = send_proc(p, ATOLL_KMSG_PROC_START, 0);
	return ret == -EAGAIN ? -EHOSTDOWN : ret;
}

static long program_start(struct atoll_program *p, unsigned long arg)
{
	struct atoll_start s;
	long ret;

	if (copy_from_user(&s, (void __user *)arg, sizeof(s)))
		return -EFAULT;
	ret = atoll_req_check(&s.hdr, sizeof(s), ATOLL_MAGIC_START);
	if (ret)
		return ret;
	if (mutex_lock_killable(&p->lock))
		return -EINTR;
	ret = start_locked(p, &s);
	mutex_unlock(&p->lock);
	return ret;
}

static long program_kill(struct atoll_program *p, unsigned long arg)
{
	struct atoll_kill k;
	long ret;

	if (copy_from_user(&k, (void __user *)arg, sizeof(k)))
		return -EFAULT;
	ret = atoll_req_check(&k.hdr, sizeof(k), ATOLL_MAGIC_KILL);
	if (ret)
		return ret;
	if (k.signal < 1 || k.signal > 64)
		return -EINVAL;
	/* Pairs with the release in run_locked(): the binding is set. */
	if (!smp_load_acquire(&p->created))
		return -ENXIO;
	if (READ_ONCE(p->e->crashed))
		return -EHOSTDOWN;
	/* Set with a release in on_exit(). */
	if (smp_load_acquire(&area_of(p)->exited))
		return 0;
	ret = send_proc(p, ATOLL_KMSG_PROC_KILL, k.signal);
	return ret == -EAGAIN ? -EHOSTDOWN : ret;
}

/* ---- CALL: the hot path, without atoll_lock ---------------------------- */

/* Delivers a worker's result to the LWK thread waiting in slot i. */
static int call_done(struct atoll_program *p, s32 i, s64 result)
{
	struct atoll_enclave *e = p->e;
	struct atoll_slot *s;
	u32 cpu;

	if (i >= ATOLL_MAX_SLOTS || !test_and_clear_bit(i, p->claimed))
		return -EINVAL;
	set_caller(p, i, NULL);
	s = &p->proc->slot[i];
	WRITE_ONCE(s->answered_tsc, rdtsc());
	WRITE_ONCE(s->ret, result);
	cpu = READ_ONCE(s->cpu);
	/*
	 * Full barrier: ret is visible before DONE. A slot no longer claimed
	 * (its thread ended with the program) gets nothing.
	 */
	if (cmpxchg(&s->state, ATOLL_SLOT_CLAIMED, ATOLL_SLOT_DONE) != ATOLL_SLOT_CLAIMED)
		return 0;
	/*
	 * The caller still polls and sees DONE: no interrupt. Read after DONE
	 * (the cmpxchg orders it), as the LWK clears it before its last look.
	 */
	if (READ_ONCE(s->spinning))
		return 0;
	if (cpu >= ATOLL_MAX_CPUS) {
		pr_warn_ratelimited("atoll: enclave %s: delegated call in slot %d names CPU %u\n",
				    e->name, i, cpu);
		return 0;
	}
	/*
	 * A CPU the enclave let go of (or is letting go of): its boot CPU
	 * took over its waiters. Read after DONE (the cmpxchg orders it).
	 */
	if (!(READ_ONCE(e->lwk_cpus) & BIT_ULL(cpu)))
		cpu = 0;
	if (!READ_ONCE(e->crashed))
		atoll_apic_send(e->apic_ids[cpu], APIC_DM_FIXED | ATOLL_DONE_VECTOR);
	return 0;
}

/* The LWK's posted bitmap: a bit per slot whose REQUEST no worker took yet. */
static unsigned long *posted_bits(struct atoll_program *p)
{
	BUILD_BUG_ON(sizeof(p->proc->posted) * BITS_PER_BYTE != ATOLL_MAX_SLOTS);
	return (unsigned long *)p->proc->posted;
}

/*
 * Claims the next event for one worker, or returns false. Runs as a wait
 * condition (task not running): no sleeping here. Only the worker that
 * clears a slot's posted bit claims it; the cmpxchg then makes sure the
 * slot still holds a request (a bit left from a slot its program gave up).
 */
bool atoll_call_event(struct atoll_program *p, struct atoll_call *c)
{
	struct atoll_enclave *e = p->e;
	unsigned long *posted = posted_bits(p);
	struct atoll_slot *s;
	u32 i;

	if (READ_ONCE(e->crashed)) {
		c->event = ATOLL_EVENT_CRASHED;
		return true;
	}
	/* Pairs with the release in on_exit(): the status is set before it. */
	if (smp_load_acquire(&area_of(p)->exited)) {
		c->event = ATOLL_EVENT_EXITED;
		c->wait_status = area_of(p)->wait_status;
		return true;
	}
	for_each_set_bit_wrap(i, posted, ATOLL_MAX_SLOTS, READ_ONCE(p->next_slot)) {
		s = &p->proc->slot[i];
		/* Fully ordered: the LWK's REQUEST came before its bit. */
		if (!test_and_clear_bit(i, posted) ||
		    cmpxchg(&s->state, ATOLL_SLOT_REQUEST,
			    ATOLL_SLOT_CLAIMED) != ATOLL_SLOT_REQUEST)
			continue;
		WRITE_ONCE(s->taken_tsc, rdtsc());
		set_bit(i, p->claimed);
		set_caller(p, i, current);
		/* Fairness between LWK threads: the next scan starts after this one. */
		WRITE_ONCE(p->next_slot, (i + 1) % ATOLL_MAX_SLOTS);
		c->event = ATOLL_EVENT_CALL;
		c->slot = i;
		c->kind = READ_ONCE(s->kind);
		c->tid = READ_ONCE(s->tid);
		c->nr = READ_ONCE(s->nr);
		memcpy(c->args, s->args, sizeof(c->args));
		if (c->kind == ATOLL_CALL_FORK)
			atoll_enclave_fork_token(e, c->args[0], c->args[1], &c->args[2]);
		return true;
	}
	return false;
}

/* A claim the worker never got (its struct could not be written) goes back. */
static void call_unclaim(struct atoll_program *p, u32 i)
{
	struct atoll_slot *s = &p->proc->slot[i];

	if (!test_and_clear_bit(i, p->claimed))
		return;
	set_caller(p, i, NULL);
	if (cmpxchg(&s->state, ATOLL_SLOT_CLAIMED, ATOLL_SLOT_REQUEST) == ATOLL_SLOT_CLAIMED)
		set_bit(i, posted_bits(p));
	wake_up_all(&p->e->wq);
}

/*
 * Sleeps in slices, polling the LWK's messages between them: without the
 * platform IPI hook, that is how a call is found, so the slices stay short.
 * With it, they only cover a lost interrupt or a crash that sent no
 * message, and grow while nothing comes, so an idle server hardly wakes.
 */
static int call_sleep(struct atoll_program *p, struct atoll_call *c)
{
	struct atoll_enclave *e = p->e;
	unsigned int ms = CALL_SLICE_MIN_MS;
	long left;

	for (;;) {
		atoll_lwk_poll(e);
		left = wait_event_interruptible_timeout(e->wq, atoll_call_event(p, c),
							msecs_to_jiffies(ms));
		if (left > 0)
			return 0;
		if (left < 0)
			return -EINTR;
		atoll_call_rate_tick(p, rdtsc());
		if (atoll_kmsg_hooked())
			ms = min(2 * ms, CALL_SLICE_MAX_MS);
	}
}

/* The next event: polled for first (call_poll.c), then slept for. */
static int call_wait(struct atoll_program *p, struct atoll_call *c)
{
	u64 start = rdtsc();
	int ret = atoll_call_poll(p, c) ? 0 : call_sleep(p, c);

	if (!ret && c->event == ATOLL_EVENT_CALL)
		atoll_call_taken(p, start);
	return ret;
}

static long program_call(struct atoll_program *p, unsigned long arg)
{
	struct atoll_call c;
	long ret;

	if (copy_from_user(&c, (void __user *)arg, sizeof(c)))
		return -EFAULT;
	ret = atoll_req_check(&c.hdr, sizeof(c), ATOLL_MAGIC_CALL);
	if (ret)
		return ret;
	/* Pairs with the release in run_locked(): the binding is set. */
	if (!smp_load_acquire(&p->created))
		return -ENXIO;
	if (c.done_slot >= 0) {
		ret = call_done(p, c.done_slot, c.done_ret);
		if (ret)
			return ret;
		c.done_slot = -1;	/* delivered: a retry must not deliver it again */
	}
	ret = call_wait(p, &c);
	/* The worker may touch memory the LWK unmapped since the last zap. */
	if (!ret && c.event == ATOLL_EVENT_CALL)
		atoll_mirror_zap(p, false);
	if (copy_to_user((void __user *)arg, &c, sizeof(c))) {
		if (!ret && c.event == ATOLL_EVENT_CALL)
			call_unclaim(p, c.slot);
		return -EFAULT;
	}
	return ret;
}

long atoll_program_ioctl(struct atoll_program *p, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case ATOLL_IOC_RUN:
		return locked_request(p, arg, sizeof(struct atoll_run), ATOLL_MAGIC_RUN,
				      run_locked);
	case ATOLL_IOC_START:
		return program_start(p, arg);
	case ATOLL_IOC_CALL:
		return program_call(p, arg);
	case ATOLL_IOC_KILL:
		return program_kill(p, arg);
	case ATOLL_IOC_ADOPT:
		return locked_request(p, arg, sizeof(struct atoll_adopt), ATOLL_MAGIC_ADOPT,
				      adopt_locked);
	case ATOLL_IOC_EXEC:
		return locked_request(p, arg, sizeof(struct atoll_run), ATOLL_MAGIC_RUN,
				      exec_locked);
	default:
		return -ENOTTY;
	}
}
