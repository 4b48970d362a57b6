/* SPDX-License-Identifier: GPL-2.0-only */
/* Atoll host module: state shared by its files. */
#ifndef ATOLL_HOST_H
#define ATOLL_HOST_H

#include <linux/bitmap.h>
#include <linux/list.h>
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include "atoll_abi.h"
#include "kmsg_ring.h"

#define ATOLL_MAX_ENCLAVES	16
#define ATOLL_DEFAULT_BOOT_MS	30000
#define ATOLL_STOP_WAIT_MS	2000
#define ATOLL_PROC_FREE_WAIT_MS	2000	/* RUN: an abandoned create being freed */
#define ATOLL_PROC_CREATE_MS	10000	/* RUN: the LWK building the address space */
#define ATOLL_KILL_WAIT_MS	3000	/* destroy --force: programs ending */
#define ATOLL_PAGE_WAIT		(10 * HZ)	/* mirror: longest wait for PAGE_WANTED's answer */

struct atoll_program;
struct mm_struct;
struct vm_area_struct;

struct atoll_block {
	unsigned long id;	/* memory block number in sysfs */
	bool movable;		/* zone it was onlined in, to put it back there */
};

/* Both directions between Linux and one LWK (kmsg.c). */
struct atoll_kmsg_link {
	struct list_head node;		/* in kmsg.c's list, while the rings exist */
	struct atoll_kring out;		/* Linux -> LWK */
	struct atoll_kring in;		/* LWK -> Linux */
	struct atoll_kreceiver rx;
	spinlock_t rx_lock;		/* rx, buf, rx_buf, msg, why, broken */
	u8 *buf;			/* ATOLL_KMSG_MAX_LEN bytes */
	u8 *rx_buf;			/* buf while the ring is read, else NULL */
	struct atoll_kmsg msg;		/* the message being handled (in buf) */
	const char *why;		/* how the LWK broke the protocol */
	u32 apic_id;			/* the LWK CPU that hears our messages */
	bool broken;			/* the LWK broke the protocol: not read again */
};

/* What the host knows of one program area; reset when a RUN claims it. */
struct atoll_area {
	struct atoll_program *program;	/* bound to it, or NULL */
	bool created;			/* PROC_CREATED: result, pid (release/acquire) */
	s64 result;
	u32 pid;
	bool exited;			/* PROC_EXIT: wait_status (release/acquire) */
	u32 wait_status;
	bool freed;			/* PROC_FREED of pid */
	u64 adopt_token;		/* a forked child's: ADOPT must name it */
	u32 adopt_pid;			/* and the child (LWK pid) it was given for */
	bool execed;			/* PROC_EXECED: exec_result, exec_cr3 (release/acquire) */
	s64 exec_result;
	u64 exec_cr3;
	kuid_t uid;			/* of the `atoll run` that bound it (XEMEM's permissions) */
	kgid_t gid;
};

struct atoll_enclave {
	u32 id;
	char name[ATOLL_NAME_LEN];
	kuid_t owner_uid;		/* who may use it (access.c) */
	kgid_t owner_gid;
	s32 serve_nice;			/* its programs' servers' nice, 0: theirs (serve_nice.c) */
	u32 hrt;			/* ATOLL_HRT_*: who may run kernel-mode programs (hrt.c) */
	cpumask_t cpus;			/* Linux CPU numbers taken */
	u32 cpu_count;
	u64 lwk_cpus;			/* the LWK's CPU indices in use, a bit each */
	u32 apic_ids[ATOLL_MAX_CPUS];	/* by LWK index; [0] boots first and hears the messages */
	u32 linux_cpus[ATOLL_MAX_CPUS];	/* by LWK index: the Linux CPU number */
	struct atoll_block blocks[ATOLL_MAX_MEM_RANGES];
	u32 block_count;
	u64 block_size;
	void *shared;			/* the first block's shared area, mapped */
	struct atoll_status *status;
	struct atoll_console *console;
	struct atoll_kmsg_link link;
	u64 created_ns;
	u64 phase_ns[ATOLL_PHASES];
	wait_queue_head_t wq;		/* woken after every batch of messages */

	/* The life cycle (lifecycle.c), set by the LWK's messages. */
	bool booted;
	u32 booted_cpus;
	bool crashed;
	bool stopped;
	u64 pong_cookie;

	/* Rings to other enclaves (peer.c), set by the LWK's messages. */
	u64 peer_removed;		/* the last peer whose rings it unmapped */
	u64 peer_pong;			/* the last PEER_PONG's cookie ... */
	s64 peer_rtt;			/* ... and its round trip, or -errno */
	u64 peer_trusted;		/* the last PEER_TRUSTED's cookie */

	/* Multicast (kmsg_group.c), set by the LWK's messages. */
	u64 group_joined;		/* the last multicast group it joined ... */
	s64 group_result;		/* ... with this result */
	u64 group_left;			/* the last group whose ring it unmapped */

	u64 xemem_revoked;		/* the last attachment it unmapped (xemem.c) */
	/* Resizing (resize*.c): the LWK's last answer (about a block or a CPU), and the history. */
	u32 boot_blocks;		/* blocks it was created with: never removed */
	bool resize_answered;		/* release/acquire: resize_answer_* are set */
	u16 resize_answer_type;
	u64 resize_answer_key;		/* the block's address or the CPU's index */
	s64 resize_answer_result;
	u32 resizes;
	struct atoll_resize_event resize[ATOLL_RESIZE_HISTORY];	/* ring, by resizes */
	struct atoll_noise_wait *noise_wait;	/* a probe's waiter (noise.c), under msg_lock */
	bool xemem_deaf;		/* it let a revocation time out (cleared by the next) */
	struct list_head mirrors;	/* its programs' mirrors (mirror.c, under its lock) */

	/*
	 * Its programs, one per area of the shared memory (program.c), and
	 * the LWK's messages about each, under msg_lock. While any program
	 * is bound, destroy refuses, so a binding keeps the enclave alive.
	 */
	spinlock_t msg_lock;
	u32 programs;			/* areas bound */
	struct atoll_area areas[ATOLL_MAX_PROGRAMS];
};

/*
 * One open /dev/atoll file bound to one program (file->private_data). RUN
 * binds it; the file's release ends the binding.
 */
struct atoll_program {
	struct mutex lock;		/* RUN and START on this file */
	struct atoll_enclave *e;	/* bound enclave, NULL when none */
	u32 area;			/* its index in e->areas */
	struct atoll_proc *proc;	/* its area in e's shared memory */
	bool created;			/* RUN succeeded: pid, cr3 valid (release/acquire) */
	bool started;			/* START given; written under map_sem */
	bool adopted;			/* a forked child: START goes on from the fork */
	u32 pid;
	u64 cr3;
	u32 next_slot;			/* where the next scan for requests starts */
	DECLARE_BITMAP(claimed, ATOLL_MAX_SLOTS);	/* slots handed to a worker */
	spinlock_t call_lock;		/* callers */
	struct task_struct *callers[ATOLL_MAX_SLOTS];	/* the worker on each claimed slot */
	atomic_t pollers;		/* 1 while a worker polls the slots (call_poll.c) */
	u64 call_gap_tsc;		/* recent wait for a call: the polling window follows it */
	u64 rate_start_tsc;		/* the second calls are counted in */
	atomic_t rate_calls;		/* calls taken in it */

	/* The mirror of the program's address space (mirror.c). */
	unsigned long mirror_mapped;	/* bit 0: the one mmap was made */
	struct mm_struct *mm;		/* the mirror's address space, mmgrab'ed */
	struct rw_semaphore map_sem;	/* faults read, zaps write */
	u32 zapped_gen;			/* map_generation at the last zap */
	struct list_head mirror_node;	/* in e->mirrors from RUN or ADOPT to the file's release */
	/* e's blocks (by index) it mapped since its last zap: set by faults */
	DECLARE_BITMAP(mapped_blocks, ATOLL_MAX_MEM_RANGES);
};

static inline struct atoll_proc *atoll_proc_area(struct atoll_enclave *e, u32 i)
{
	return e->shared + ATOLL_PROC_OFFSET + (size_t)i * ATOLL_PROC_AREA_SIZE;
}

/* Serialises the enclave ioctls; the program ioctls take it only to bind. */
extern struct mutex atoll_lock;

/* main.c: an enclave ioctl's struct in, op(req) under atoll_lock, the struct out */
typedef int (*atoll_op)(void *req);
long atoll_run_op(unsigned long arg, size_t size, u32 magic, atoll_op op);

/* A request struct's header: -EINVAL if it is not one, -EPROTO if another build's. */
static inline int atoll_req_check(const struct atoll_header *hdr, size_t size, u32 magic)
{
	if (hdr->magic != magic || hdr->size != size)
		return -EINVAL;
	if (hdr->version != ATOLL_ABI_VERSION)
		return -EPROTO;	/* the CLI and the module come from different builds */
	return 0;
}

/*
 * Who calls whom (no loops): main.c -> program.c -> enclave.c -> boot.c,
 * peer.c and usermsg.c -> lifecycle.c -> kmsg.c -> kmsg_ring.c;
 * kmsg_group.c -> lifecycle.c, kmsg.c and cpus.c; enclave.c -> resize.c -> resize_mem.c
 * and resize_cpus.c -> resize_ask.c (-> kmsg.c), mirror.c, memory.c, cpus.c and boot.c;
 * enclave.c -> noise.c -> kmsg.c;
 * main.c, program.c and enclave.c -> xemem_lwk.c or xemem.c; xemem_lwk.c ->
 * xemem.c -> xemem_map.c, mirror.c and mirror_grant.c; mirror.c -> kmsg.c
 * (PAGE_WANTED) and mirror_grant.c; cpus.c, memory.c and symbols.c are
 * called, never call up. The LWK's messages reach the protocols only
 * through the handlers they register with kmsg.c. The test module
 * (host/atoll_test/) calls the functions exported for it (main.c's
 * atoll_run_op, enclave.c's atoll_enclave_find, kmsg_group.c, kmsg.c,
 * lifecycle.c, access.c's atoll_may_admin, cpus.c's atoll_apic_send);
 * nothing here calls it.
 */

/* enclave.c: the registry, the enclave operations, a program's binding */
int atoll_enclave_create(struct atoll_create *req);
int atoll_enclave_destroy(struct atoll_destroy *req);
int atoll_enclave_info(struct atoll_enclave_info *req);
int atoll_enclave_console(struct atoll_console_read *req);
int atoll_enclave_ping(struct atoll_ping *req);
int atoll_enclave_msg_send(struct atoll_msg_io *io);
int atoll_enclave_programs(struct atoll_programs *req);
int atoll_enclave_resize(struct atoll_resize *req);
int atoll_enclave_noise(struct atoll_noise_req *req);
int atoll_enclave_chown(struct atoll_chown *req);
struct atoll_enclave *atoll_enclave_find(u32 id);
int atoll_enclave_check_use(u32 id, char *err);
int atoll_enclave_bind(u32 id, struct atoll_program *p, u32 cpus, u64 cpu_mask, char *err);
int atoll_enclave_adopt(u32 id, struct atoll_program *p, u32 area, u32 pid, u64 token, char *err);
void atoll_enclave_fork_token(struct atoll_enclave *e, u64 area, u64 pid, u64 *token);
void atoll_enclave_vacate(struct atoll_enclave *e, struct atoll_program *p);
void atoll_enclave_unbind(struct atoll_enclave *e, struct atoll_program *p);

/* cpus.c: taking CPUs from Linux, giving them back, talking to their APICs */
int atoll_cpus_pick(const u64 *list, u32 count, cpumask_t *out, char *err);
int atoll_cpus_take(const cpumask_t *cpus, char *err);
void atoll_cpus_give_back(const cpumask_t *cpus);
void atoll_apic_send(u32 apic_id, u32 icr_low);
void atoll_cpu_init(u32 apic_id);
void atoll_cpu_sipi(u32 apic_id, unsigned long page_phys);

/* resize.c: memory and CPUs added to and taken back from a running enclave */
int atoll_resize(struct atoll_enclave *e, struct atoll_resize *req);
void atoll_resize_history(struct atoll_enclave *e, struct atoll_enclave_info *out);
/* resize_mem.c, resize_cpus.c: the two kinds, called by resize.c */
int atoll_resize_add_memory(struct atoll_enclave *e, struct atoll_resize *req);
int atoll_resize_remove_memory(struct atoll_enclave *e, struct atoll_resize *req);
int atoll_resize_add_cpus(struct atoll_enclave *e, struct atoll_resize *req);
int atoll_resize_remove_cpus(struct atoll_enclave *e, struct atoll_resize *req);
/* noise.c: OS noise probes on an enclave's CPUs */
struct atoll_noise_wait;
int atoll_noise_init(void);
int atoll_noise(struct atoll_enclave *e, struct atoll_noise_req *req);

/* resize_ask.c: one resize command to the LWK and its answer */
int atoll_resize_init(void);
int atoll_resize_ask(struct atoll_enclave *e, u16 kind, const u64 *words, u32 n, u64 *lwk_ns);

/* memory.c: 128 MB blocks through Linux's memory-hotplug sysfs path */
/* Linux's, exported by kernel/rcu/update.c but declared only in its own kernel/rcu/rcu.h. */
void rcu_expedite_gp(void);
void rcu_unexpedite_gp(void);
int atoll_memory_take(struct atoll_enclave *e, u64 bytes, char *err);
void atoll_memory_give_back(struct atoll_enclave *e);
void atoll_memory_give_back_to(struct atoll_enclave *e, u32 keep);
u64 atoll_block_phys(const struct atoll_enclave *e, u32 i);
void atoll_memory_ranges(const struct atoll_enclave *e, struct atoll_mem_range *out);

/* boot.c: load the LWK, write its boot parameters, start it; lend a CPU added later the same way */
int atoll_boot(struct atoll_enclave *e, const struct atoll_create *req, char *err);
struct atoll_cpu_loan;
struct atoll_cpu_loan *atoll_cpu_loan_start(struct atoll_enclave *e, u64 *page, u64 *cr3,
					    char *err);
void atoll_cpu_loan_end(struct atoll_cpu_loan *loan);

/* lifecycle.c: the enclave's life-cycle protocol and its state */
int atoll_lifecycle_init(void);
void atoll_lwk_status_init(struct atoll_enclave *e);
void atoll_lwk_poll(struct atoll_enclave *e);
u32 atoll_lwk_state(struct atoll_enclave *e);
int atoll_lwk_wait_booted(struct atoll_enclave *e, u64 deadline_ns);
int atoll_lwk_ping(struct atoll_enclave *e, u64 *rtt_ns);
int atoll_lwk_shutdown(struct atoll_enclave *e, char *err);

/* kmsg.c: the one transport to the LWKs; protocols register handlers */
typedef void (*atoll_kmsg_handler)(struct atoll_enclave *e, const struct atoll_kmsg *m);
int atoll_kmsg_register(u16 type, atoll_kmsg_handler fn);
void atoll_kmsg_unregister(u16 type);
int atoll_kmsg_link_init(struct atoll_enclave *e);
void atoll_kmsg_link_exit(struct atoll_enclave *e);
int atoll_kmsg_send(struct atoll_enclave *e, u16 type, const void *data, u32 len);
int atoll_kmsg_send_wait(struct atoll_enclave *e, u16 type, const void *data, u32 len);
void atoll_kmsg_poll(struct atoll_enclave *e);
bool atoll_kmsg_waiting(struct atoll_enclave *e);
void atoll_kmsg_polling(struct atoll_enclave *e, bool on);
bool atoll_kmsg_broken(struct atoll_enclave *e);
u64 atoll_kmsg_ipis(void);
bool atoll_kmsg_hooked(void);
u64 atoll_kmsg_word(const struct atoll_kmsg *m, u32 i);
int atoll_kmsg_start(void);
void atoll_kmsg_stop(void);

/* peer.c: rings between enclaves, lent from Linux's memory */
int atoll_peers_init(void);
int atoll_peer_connect(struct atoll_enclave *a, struct atoll_enclave *b);
void atoll_peers_disconnect(struct atoll_enclave *e);
int atoll_peers_owner_changed(struct atoll_enclave *e);
int atoll_peer_ping(struct atoll_enclave *from, struct atoll_enclave *to, u64 *rtt_ns);

/* usermsg.c: messages between programs, Linux's ports */
int atoll_usermsg_init(void);
void atoll_usermsg_exit(void);
int atoll_usermsg_send(struct atoll_enclave *e, struct atoll_msg_io *io);
long atoll_usermsg_recv(unsigned long arg);

/* kmsg_group.c: multicast rings lent to several LWKs (callers hold atoll_lock) */
struct atoll_kgroup {
	struct atoll_kring ring;
	struct atoll_enclave **es;	/* its n receivers */
	u32 n;
	u64 id;
	void *block;			/* the ring, size bytes */
	size_t size;
};

int atoll_kgroup_init(void);
int atoll_kgroup_join(struct atoll_kgroup *g, struct atoll_enclave **es, u32 n, char *err);
int atoll_kgroup_send(struct atoll_kgroup *g, u16 type, const void *data, u32 len);
void atoll_kgroup_leave(struct atoll_kgroup *g);
#define ATOLL_LWKS_WAIT_S	10	/* atoll_lwks_wait()'s limit */
int atoll_lwks_wait(struct atoll_enclave **es, u32 n,
		    bool (*done)(struct atoll_enclave *e, u64 arg), u64 arg);

/* program.c: programs in an enclave, one per open file */
int atoll_program_init(void);
struct atoll_program *atoll_program_alloc(void);
void atoll_program_release(struct atoll_program *p);
long atoll_program_ioctl(struct atoll_program *p, unsigned int cmd, unsigned long arg);
/* Claims p's next posted call, or its end, into c (program.c). */
bool atoll_call_event(struct atoll_program *p, struct atoll_call *c);
/* Waiting for calls (call_poll.c). */
bool atoll_call_poll(struct atoll_program *p, struct atoll_call *c);
void atoll_call_rate_tick(struct atoll_program *p, u64 now_tsc);
void atoll_call_taken(struct atoll_program *p, u64 waited_since_tsc);

/* mirror.c: the program's address space mapped into the `atoll run` process */
int atoll_mirror_mmap(struct atoll_program *p, struct vm_area_struct *vma);
void atoll_mirror_zap(struct atoll_program *p, bool start);
void atoll_mirror_reload(struct atoll_program *p, u64 cr3);
void atoll_mirror_put(struct atoll_program *p);
void atoll_mirror_track(struct atoll_program *p);
void atoll_mirror_untrack(struct atoll_program *p);
void atoll_mirror_zap_blocks(struct atoll_enclave *e, u32 first, u32 count);
struct atoll_mirror_grant;
void atoll_mirror_ungrant(struct atoll_mirror_grant *g);
int atoll_vma_no_split(struct vm_area_struct *vma, unsigned long addr);
int atoll_vma_no_mremap(struct vm_area_struct *vma);

/* mirror_grant.c: an XEMEM attachment's frames, which its program's mirror may map */
struct atoll_mirror_grant *atoll_mirror_grant(struct atoll_enclave *e, u32 area, u32 pid,
					      const u64 *frames, u32 count, bool writable);
void atoll_mirror_grant_free(struct atoll_mirror_grant *g);

/* Where a walk of the LWK's tables ended: the leaf entry and what it held. */
struct atoll_lwk_leaf {
	u64 *at;
	u64 seen;
};

int atoll_lwk_translate(struct atoll_enclave *e, u64 cr3, unsigned long va, u64 *phys,
			bool *writable, struct atoll_lwk_leaf *leaf);

/* xemem.c, xemem_map.c, xemem_lwk.c: segments shared between kernels' programs */
int atoll_xemem_init(void);
int atoll_xemem_lwk_init(void);
void atoll_xemem_exit(void);
long atoll_xemem_ioctl(struct atoll_program *p, unsigned long arg);
void atoll_xemem_file_gone(struct atoll_program *p);
void atoll_xemem_enclave_gone(struct atoll_enclave *e);
int atoll_xemem_list(struct atoll_xemem_list *req);

/* access.c: who may do what */
int atoll_may_admin(char *err, const char *what);
bool atoll_may_use(const struct atoll_enclave *e);
int atoll_check_use(const struct atoll_enclave *e, char *err);
int atoll_owner_set(struct atoll_enclave *e, u32 uid, u32 gid, char *err);
int atoll_serve_nice_set(struct atoll_enclave *e, s32 nice, char *err);
void atoll_serve_nice_apply(const struct atoll_enclave *e);

/* hrt.c: kernel-mode programs */
int atoll_hrt_set(struct atoll_enclave *e, u32 hrt, char *err);
int atoll_hrt_check_run(const struct atoll_enclave *e, u32 kernel_mode, char *err);

/* symbols.c: the few kernel symbols that are not exported */
int atoll_symbols_init(void);
u32 atoll_trampoline_phys(void);
void (**atoll_platform_ipi_hook(void))(void);

#define atoll_err(err, fmt, ...) \
	snprintf(err, ATOLL_ERROR_LEN, fmt, ##__VA_ARGS__)

#endif /* ATOLL_HOST_H */
