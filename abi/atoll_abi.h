/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Atoll ABI: everything that crosses a boundary between the host module, the
 * LWK and the `atoll` CLI. This header is the C side; abi/src/lib.rs is the
 * Rust side. abi/tests/layout.rs fails when the two disagree on any size or
 * offset, so change both together and bump ATOLL_ABI_VERSION.
 *
 * Every shared struct starts with struct atoll_header (magic, version, size).
 * Fields are fixed-width and padding is explicit.
 */
#ifndef ATOLL_ABI_H
#define ATOLL_ABI_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define ATOLL_ABI_VERSION	1

#define ATOLL_MAX_CPUS		64	/* CPUs in one enclave */
#define ATOLL_HOST_CPU_WORDS	4	/* host CPU bitmaps: 256 CPUs */
#define ATOLL_MAX_MEM_RANGES	16
#define ATOLL_NAME_LEN		32
#define ATOLL_CMDLINE_LEN	512
#define ATOLL_ERROR_LEN		256
#define ATOLL_RING_SLOTS	64

/* One magic per struct ("AT" + two letters, little-endian). */
#define ATOLL_MAGIC_BOOT	0x50425441	/* "ATBP" boot parameters */
#define ATOLL_MAGIC_CHANNEL	0x48435441	/* "ATCH" control channel */
#define ATOLL_MAGIC_CONSOLE	0x4e435441	/* "ATCN" console ring */
#define ATOLL_MAGIC_CREATE	0x52435441	/* "ATCR" create request */
#define ATOLL_MAGIC_INFO	0x4e495441	/* "ATIN" enclave info query */
#define ATOLL_MAGIC_CONSREAD	0x44525441	/* "ATRD" console read */
#define ATOLL_MAGIC_PING	0x47505441	/* "ATPG" ping */
#define ATOLL_MAGIC_DESTROY	0x53445441	/* "ATDS" destroy */

struct atoll_header {
	__u32 magic;
	__u32 version;
	__u32 size;		/* sizeof the whole struct */
	__u32 reserved;
};

struct atoll_mem_range {
	__u64 start;		/* physical */
	__u64 size;
};

/* ---- Boot (host module -> LWK) ---------------------------------------- */

/* Boot kinds: %rsi at kernel_entry64. */
#define ATOLL_BOOT_KIND_PVH	1
#define ATOLL_BOOT_KIND_COKERNEL 2

/*
 * Layout of the enclave's first memory block: the shared area (boot
 * parameters, control channel, console ring) then the LWK image.
 */
#define ATOLL_BOOT_PARAMS_OFFSET 0x0
#define ATOLL_CHANNEL_OFFSET	0x1000
#define ATOLL_CHANNEL_SIZE	0x2000
#define ATOLL_CONSOLE_OFFSET	0x10000
#define ATOLL_CONSOLE_SIZE	0x40000
#define ATOLL_SHARED_SIZE	0x200000
#define ATOLL_IMAGE_OFFSET	ATOLL_SHARED_SIZE

/* Vectors: the host sends ATOLL_LWK_VECTOR to the LWK's first CPU; the LWK
 * sends ATOLL_HOST_VECTOR (Linux's platform IPI) to host_apic_id. */
#define ATOLL_LWK_VECTOR	0xf2
#define ATOLL_HOST_VECTOR	0xf7

struct atoll_boot_params {
	struct atoll_header hdr;
	__u32 enclave_id;
	__u32 cpu_count;
	__u32 mem_count;
	__u32 host_apic_id;
	__u32 x2apic;		/* nonzero: the CPUs run their APIC in x2APIC mode */
	__u32 pad0;
	__u64 tsc_khz;		/* measured by Linux; the LWK must not touch the PIT */
	__u64 lapic_phys;
	__u64 trampoline_phys;	/* page below 1 MiB lent for starting CPUs */
	__u64 boot_cr3;		/* page tables below 4 GiB for the trampoline */
	__u64 shared_phys;	/* the shared area: never given to the allocator */
	__u64 shared_size;
	__u64 channel_phys;
	__u64 console_phys;
	__u64 console_size;
	__u64 image_phys;
	__u64 image_size;
	__u32 apic_ids[ATOLL_MAX_CPUS];	/* [0] is the boot CPU */
	struct atoll_mem_range mem[ATOLL_MAX_MEM_RANGES];
	char cmdline[ATOLL_CMDLINE_LEN];
};

/*
 * The SMP trampoline starts with a 2-byte jump, then these slots at offset
 * ATOLL_TRAMPOLINE_SLOTS. It enters long mode with cr3, loads rsp, rdi and
 * rsi from the slots and jumps to entry.
 */
#define ATOLL_TRAMPOLINE_SLOTS	8
struct atoll_trampoline_slots {
	__u64 cr3;
	__u64 stack;
	__u64 entry;
	__u64 arg0;		/* %rdi */
	__u64 arg1;		/* %rsi */
};

/* ---- Console ring (LWK writes, host reads; survives an LWK panic) ----- */

struct atoll_console {
	struct atoll_header hdr;
	__u64 capacity;		/* bytes of data after this header */
	__u64 head;		/* bytes ever written; next at data[head % capacity] */
	/* __u8 data[capacity] follows */
};

/* ---- Control channel --------------------------------------------------- */

enum atoll_msg_type {
	ATOLL_MSG_BOOTED = 1,	/* LWK: arg0 = CPUs online, arg1 = boot ns */
	ATOLL_MSG_PING = 2,	/* host: arg0 = cookie */
	ATOLL_MSG_PONG = 3,	/* LWK: arg0 = cookie */
	ATOLL_MSG_SHUTDOWN = 4,	/* host: stop every core */
	ATOLL_MSG_STOPPED = 5,	/* LWK: every core has stopped */
	ATOLL_MSG_PANIC = 6,	/* LWK: arg0 = CPU; the text is on the console */
};

/* What the LWK says of itself in the channel header. */
enum atoll_lwk_state {
	ATOLL_LWK_BOOTING = 0,
	ATOLL_LWK_RUNNING = 1,
	ATOLL_LWK_CRASHED = 2,
	ATOLL_LWK_STOPPED = 3,
};

struct atoll_msg {
	__u32 type;
	__u32 seq;
	__u64 arg[3];
};

/* Single-consumer ring; head and tail are free-running counters. */
struct atoll_ring {
	__u32 head;		/* next slot the producer writes */
	__u32 pad0[15];
	__u32 tail;		/* next slot the consumer reads */
	__u32 pad1[15];
	struct atoll_msg slot[ATOLL_RING_SLOTS];
};

struct atoll_channel {
	struct atoll_header hdr;
	__u32 lwk_state;	/* enum atoll_lwk_state */
	__u32 online_cpus;
	__u32 panic_cpu;
	__u32 pad0[9];
	struct atoll_ring to_lwk;
	struct atoll_ring to_host;
};

/* ---- ioctls on /dev/atoll ---------------------------------------------- */

enum atoll_enclave_state {
	ATOLL_ENCLAVE_BOOTING = 1,
	ATOLL_ENCLAVE_RUNNING = 2,
	ATOLL_ENCLAVE_CRASHED = 3,
	ATOLL_ENCLAVE_STOPPED = 4,
};

/* Phases of create, for the Table 5 benchmark. */
#define ATOLL_PHASE_CPUS	0
#define ATOLL_PHASE_MEMORY	1
#define ATOLL_PHASE_LOAD	2
#define ATOLL_PHASE_BOOT	3
#define ATOLL_PHASES		4

struct atoll_create {
	struct atoll_header hdr;
	/* in */
	char name[ATOLL_NAME_LEN];
	__u64 cpus[ATOLL_HOST_CPU_WORDS];	/* Linux CPU numbers; empty: pick cpu_count */
	__u32 cpu_count;
	__u32 boot_timeout_ms;
	__u64 mem_bytes;
	__u64 image_ptr;	/* user address of the flat image (file bytes) */
	__u64 image_size;
	__u64 image_mem_size;	/* with bss: zeroed past image_size */
	__u64 entry_offset;	/* kernel_entry64, from the image start */
	__u64 trampoline_offset;
	__u64 trampoline_size;
	char cmdline[ATOLL_CMDLINE_LEN];
	/* out */
	__u32 id;
	__u32 mem_count;
	__u64 taken_cpus[ATOLL_HOST_CPU_WORDS];
	struct atoll_mem_range mem[ATOLL_MAX_MEM_RANGES];
	__u64 phase_ns[ATOLL_PHASES];
	char error[ATOLL_ERROR_LEN];
};

struct atoll_enclave_info {
	struct atoll_header hdr;
	__u32 index;		/* in: the index-th enclave (0, 1, ...) */
	__u32 id;		/* out */
	__u32 state;		/* out: enum atoll_enclave_state */
	__u32 cpu_count;
	__u32 mem_count;
	__u32 pad0;
	char name[ATOLL_NAME_LEN];
	__u64 cpus[ATOLL_HOST_CPU_WORDS];
	struct atoll_mem_range mem[ATOLL_MAX_MEM_RANGES];
	__u64 uptime_ns;
	__u64 phase_ns[ATOLL_PHASES];
};

struct atoll_console_read {
	struct atoll_header hdr;
	__u32 id;
	__u32 pad0;
	__u64 offset;		/* in: stream position; out: position of the first byte copied */
	__u64 buf_ptr;
	__u64 buf_len;
	__u64 copied;		/* out */
	__u64 head;		/* out: bytes the LWK has written in all */
};

struct atoll_ping {
	struct atoll_header hdr;
	__u32 id;
	__u32 pad0;
	__u64 rtt_ns;		/* out */
};

/* Phases of destroy. */
#define ATOLL_DPHASE_STOP	0
#define ATOLL_DPHASE_CPUS	1
#define ATOLL_DPHASE_MEMORY	2
#define ATOLL_DPHASES		3

struct atoll_destroy {
	struct atoll_header hdr;
	__u32 id;
	__u32 force;		/* nonzero: do not wait for a hung or crashed LWK */
	__u64 phase_ns[ATOLL_DPHASES];
	__u64 pad0;
	char error[ATOLL_ERROR_LEN];
};

#define ATOLL_IOC_MAGIC		0xA7
#define ATOLL_IOC_CREATE	_IOWR(ATOLL_IOC_MAGIC, 1, struct atoll_create)
#define ATOLL_IOC_INFO		_IOWR(ATOLL_IOC_MAGIC, 2, struct atoll_enclave_info)
#define ATOLL_IOC_CONSOLE	_IOWR(ATOLL_IOC_MAGIC, 3, struct atoll_console_read)
#define ATOLL_IOC_PING		_IOWR(ATOLL_IOC_MAGIC, 4, struct atoll_ping)
#define ATOLL_IOC_DESTROY	_IOWR(ATOLL_IOC_MAGIC, 5, struct atoll_destroy)

#endif /* ATOLL_ABI_H */
