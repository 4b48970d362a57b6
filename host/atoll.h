/* SPDX-License-Identifier: GPL-2.0-only */
/* Atoll host module: state shared by its files. */
#ifndef ATOLL_HOST_H
#define ATOLL_HOST_H

#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include "atoll_abi.h"

#define ATOLL_MAX_ENCLAVES	16
#define ATOLL_DEFAULT_BOOT_MS	30000
#define ATOLL_STOP_WAIT_MS	2000

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
	u32 to_lwk_seq;
};

extern struct mutex atoll_lock;	/* serialises every ioctl */

/* enclave.c: the registry and the enclave operations */
int atoll_enclave_create(struct atoll_create *req);
int atoll_enclave_destroy(struct atoll_destroy *req);
int atoll_enclave_info(struct atoll_enclave_info *req);
int atoll_enclave_console(struct atoll_console_read *req);
int atoll_enclave_ping(struct atoll_ping *req);
void atoll_for_each_enclave(void (*fn)(struct atoll_enclave *e));

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

/* symbols.c: the few kernel symbols that are not exported */
int atoll_symbols_init(void);
u32 atoll_trampoline_phys(void);
void (**atoll_platform_ipi_hook(void))(void);

#define atoll_err(err, fmt, ...) \
	snprintf(err, ATOLL_ERROR_LEN, fmt, ##__VA_ARGS__)

#endif /* ATOLL_HOST_H */
