/* SPDX-License-Identifier: GPL-2.0-only */
/* Atoll host module: state shared by its files. */
#ifndef ATOLL_HOST_H
#define ATOLL_HOST_H

#include <linux/bitmap.h>
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include "atoll_abi.h"

#define ATOLL_MAX_ENCLAVES	16
#define ATOLL_DEFAULT_BOOT_MS	30000
#define ATOLL_STOP_WAIT_MS	2000
#define ATOLL_PROC_FREE_WAIT_MS	2000	/* RUN: the previous program being freed */
#define ATOLL_PROC_CREATE_MS	10000	/* RUN: the LWK building the address space */
#define ATOLL_CALL_SPIN_NS	30000	/* CALL: spin this long before sleeping */

struct atoll_program;
struct mm_struct;
struct vm_area_struct;

struct atoll_block {
	unsigned long id;	/* memory block number in sysfs */
	bool movable;		/* zone it was onlined in, to put it back there */
};

struct atoll_enclave {
	u32 id;
	char name[ATOLL_NAME_LEN];
	cpumask_t cpus;			/* Linux CPU numbers taken */
	u32 cpu_count;
	u32 apic_ids[ATOLL_MAX_CPUS];	/* [0] boots first and hears the channel */
	struct atoll_block blocks[ATOLL_MAX_MEM_RANGES];
	u32 block_count;
	u64 block_size;
	void *shared;			/* the first block's shared area, mapped */
	struct atoll_channel *channel;
	struct atoll_console *console;
	u64 created_ns;
	u64 phase_ns[ATOLL_PHASES];

	/* Filled in from the LWK's messages (channel.c), under msg_lock. */
	spinlock_t msg_lock;
	wait_queue_head_t wq;
	bool booted;
	u32 booted_cpus;
	bool crashed;
	bool stopped;
	u64 pong_cookie;

	spinlock_t send_lock;		/* to_lwk producers; to_lwk_seq */
	u32 to_lwk_seq;

	/*
	 * The program bound to this enclave (program.c), NULL when none. Set
	 * under atoll_lock and msg_lock, cleared under msg_lock; while set,
	 * destroy refuses, so the binding keeps the enclave alive.
	 */
	struct atoll_program *program;
	wait_queue_head_t prog_wq;	/* its workers: doorbell, exit, crash */
	u32 seen_doorbell;		/* under msg_lock */
	/* The LWK's program messages, under msg_lock; reset by each RUN. */
	bool proc_created;		/* PROC_CREATED: proc_result, proc_pid */
	s64 proc_result;
	u32 proc_pid;
	bool proc_exited;		/* PROC_EXIT: proc_wait_status */
	u32 proc_wait_status;
	bool proc_freed;
};

/*
 * One open /dev/atoll file bound to one program (file->private_data). RUN
 * binds it; the file's release ends the binding.
 */
struct atoll_program {
	struct mutex lock;		/* RUN and START on this file */
	struct atoll_enclave *e;	/* bound enclave, NULL when none */
	struct atoll_proc *proc;	/* e's program area */
	bool created;			/* RUN succeeded: pid, cr3 valid (release/acquire) */
	bool started;			/* START given; written under map_sem */
	u32 pid;
	u64 cr3;
	u32 next_slot;			/* where the next scan for requests starts */
	DECLARE_BITMAP(claimed, ATOLL_MAX_SLOTS);	/* slots handed to a worker */

	/* The mirror of the program's address space (mirror.c). */
	unsigned long mirror_mapped;	/* bit 0: the one mmap was made */
	struct mm_struct *mm;		/* the mirror's address space, mmgrab'ed */
	struct rw_semaphore map_sem;	/* faults read, zaps write */
	u32 zapped_gen;			/* map_generation at the last zap */
};

static inline struct atoll_proc *atoll_proc_area(struct atoll_enclave *e)
{
	return e->shared + ATOLL_PROC_OFFSET;
}

/* Serialises the enclave ioctls; the program ioctls take it only to bind. */
extern struct mutex atoll_lock;

/* enclave.c: the registry and the enclave operations */
int atoll_enclave_create(struct atoll_create *req);
int atoll_enclave_destroy(struct atoll_destroy *req);
int atoll_enclave_info(struct atoll_enclave_info *req);
int atoll_enclave_console(struct atoll_console_read *req);
int atoll_enclave_ping(struct atoll_ping *req);
void atoll_enclave_for_each(void (*fn)(struct atoll_enclave *e));
struct atoll_enclave *atoll_enclave_find(u32 id);
u32 atoll_enclave_state(struct atoll_enclave *e);

/* cpus.c: taking CPUs from Linux, giving them back, talking to their APICs */
int atoll_cpus_pick(const struct atoll_create *req, cpumask_t *out, char *err);
int atoll_cpus_take(const cpumask_t *cpus, char *err);
void atoll_cpus_give_back(const cpumask_t *cpus);
void atoll_apic_send(u32 apic_id, u32 icr_low);
void atoll_cpu_init(u32 apic_id);
void atoll_cpu_sipi(u32 apic_id, unsigned long page_phys);

/* memory.c: 128 MB blocks through Linux's memory-hotplug sysfs path */
int atoll_memory_take(struct atoll_enclave *e, u64 bytes, char *err);
void atoll_memory_give_back(struct atoll_enclave *e);
u64 atoll_block_phys(const struct atoll_enclave *e, u32 i);
void atoll_memory_ranges(const struct atoll_enclave *e, struct atoll_mem_range *out);

/* boot.c: load the LWK, write its boot parameters, start it */
int atoll_boot(struct atoll_enclave *e, const struct atoll_create *req, char *err);

/* channel.c: messages to and from the LWK */
void atoll_channel_init(struct atoll_enclave *e);
void atoll_channel_drain(struct atoll_enclave *e);
int atoll_channel_send(struct atoll_enclave *e, u32 type, u64 arg0);
int atoll_channel_start(void);
void atoll_channel_stop(void);

/* program.c: programs in an enclave, one per open file */
struct atoll_program *atoll_program_alloc(void);
void atoll_program_release(struct atoll_program *p);
long atoll_program_ioctl(struct atoll_program *p, unsigned int cmd, unsigned long arg);
int atoll_program_check_destroy(struct atoll_enclave *e, char *err);
u32 atoll_program_pid(struct atoll_enclave *e);

/* mirror.c: the program's address space mapped into the `atoll run` process */
int atoll_mirror_mmap(struct atoll_program *p, struct vm_area_struct *vma);
void atoll_mirror_zap(struct atoll_program *p, bool start);
void atoll_mirror_put(struct atoll_program *p);

/* main.c */
int atoll_req_check(const struct atoll_header *hdr, size_t size, u32 magic);

/* symbols.c: the few kernel symbols that are not exported */
int atoll_symbols_init(void);
u32 atoll_trampoline_phys(void);
void (**atoll_platform_ipi_hook(void))(void);

#define atoll_err(err, fmt, ...) \
	snprintf(err, ATOLL_ERROR_LEN, fmt, ##__VA_ARGS__)

#endif /* ATOLL_HOST_H */
