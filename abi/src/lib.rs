//! Atoll's ABI: every struct, constant and table that crosses a boundary
//! between the host module, the LWK and the CLI, written once, here.
//!
//! This crate is the source; the C side, `abi/atoll_abi_gen.h`, is
//! generated from it by cbindgen (`make abi-header`, `abi/cbindgen.toml`)
//! and included by the hand-written `abi/atoll_abi.h`; `make lint` fails
//! when the checked-in header is stale. In C every constant is `ATOLL_`
//! and its Rust name, every struct `struct atoll_` and its Rust name in
//! snake case (`BootParams` is `struct atoll_boot_params`); the doc
//! comments here are the header's comments. `tests/layout.rs` compiles
//! the generated header and fails when C and Rust disagree on any size,
//! offset or constant: a check of the generator.
//!
//! Every shared struct starts with a [`Header`] (magic, version, size).
//! Fields are fixed-width and padding is explicit. Change a layout only
//! together with [`ABI_VERSION`].

#![no_std]

/// cbindgen:ignore
mod bytes;
/// cbindgen:ignore
pub mod noise_bytes;
/// cbindgen:ignore
mod noise_work;
/// cbindgen:ignore
pub mod syscalls;
/// cbindgen:ignore
pub mod xemem_bytes;
pub use noise_work::{noise_units_for, noise_units_within, noise_work};

/// A byte of text in a fixed-size field, NUL padded: `char` in C (the
/// generator maps it), a byte in Rust.
pub type CChar = u8;

pub const ABI_VERSION: u32 = 24;

/// CPUs in one enclave.
pub const MAX_CPUS: usize = 64;
/// Host CPU bitmaps: 256 CPUs.
pub const HOST_CPU_WORDS: usize = 4;
pub const MAX_MEM_RANGES: usize = 16;
pub const NAME_LEN: usize = 32;
pub const CMDLINE_LEN: usize = 512;
pub const ERROR_LEN: usize = 256;

// One magic per struct ("AT" + two letters, little-endian).
/// "ATBP" boot parameters.
pub const MAGIC_BOOT: u32 = 0x5042_5441;
/// "ATSP" status page.
pub const MAGIC_STATUS: u32 = 0x5053_5441;
/// "ATMG" message ring.
pub const MAGIC_KMSG: u32 = 0x474d_5441;
/// "ATCN" console ring.
pub const MAGIC_CONSOLE: u32 = 0x4e43_5441;
/// "ATCR" create request.
pub const MAGIC_CREATE: u32 = 0x5243_5441;
/// "ATIN" enclave info query.
pub const MAGIC_INFO: u32 = 0x4e49_5441;
/// "ATCK" message check.
pub const MAGIC_KCHECK: u32 = 0x4b43_5441;
/// "ATKB" message benchmark.
pub const MAGIC_KBENCH: u32 = 0x424b_5441;
/// "AUMG" program message.
pub const MAGIC_MSG: u32 = 0x474d_5541;
/// "ATMC" multicast check.
pub const MAGIC_MCAST: u32 = 0x434d_5441;
/// "ATRD" console read.
pub const MAGIC_CONSREAD: u32 = 0x4452_5441;
/// "ATPG" ping.
pub const MAGIC_PING: u32 = 0x4750_5441;
/// "ATDS" destroy.
pub const MAGIC_DESTROY: u32 = 0x5344_5441;
/// "ATPR" program area.
pub const MAGIC_PROC: u32 = 0x5250_5441;
/// "ATRN" run request.
pub const MAGIC_RUN: u32 = 0x4e52_5441;
/// "ATST" start request.
pub const MAGIC_START: u32 = 0x5453_5441;
/// "ATCL" delegated-call exchange.
pub const MAGIC_CALL: u32 = 0x4c43_5441;
/// "ATKL" kill request.
pub const MAGIC_KILL: u32 = 0x4c4b_5441;
/// "ATPS" program list.
pub const MAGIC_PROGRAMS: u32 = 0x5350_5441;
/// "ATAD" adopt a forked program.
pub const MAGIC_ADOPT: u32 = 0x4441_5441;
/// "ATXM" shared-memory segment request.
pub const MAGIC_XEMEM: u32 = 0x4d58_5441;
/// "ATXL" list of segments.
pub const MAGIC_XLIST: u32 = 0x4c58_5441;
/// "ATRZ" resize request.
pub const MAGIC_RESIZE: u32 = 0x5a52_5441;
/// "ATNZ" noise probe.
pub const MAGIC_NOISE: u32 = 0x5a4e_5441;
/// "ATCO" change an enclave's owner.
pub const MAGIC_CHOWN: u32 = 0x4f43_5441;
/// An owner gid meaning "no group": the owner alone may use the enclave.
pub const NO_GROUP: u32 = 0xffff_ffff_u32;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub magic: u32,
    pub version: u32,
    /// sizeof the whole struct.
    pub size: u32,
    pub reserved: u32,
}

impl Header {
    pub const fn new(magic: u32, size: usize) -> Self {
        Header { magic, version: ABI_VERSION, size: size as u32, reserved: 0 }
    }

    /// True when this header announces a `T` of this ABI version.
    pub fn is_valid<T>(&self, magic: u32) -> bool {
        self.magic == magic
            && self.version == ABI_VERSION
            && self.size as usize == core::mem::size_of::<T>()
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemRange {
    /// Physical.
    pub start: u64,
    pub size: u64,
}

// ---- Boot (host module -> LWK) ----

/// Boot kinds: %rsi at kernel_entry64.
pub const BOOT_KIND_PVH: u64 = 1;
pub const BOOT_KIND_COKERNEL: u64 = 2;

/// The LWK's direct map: all physical memory it owns is mapped at phys +
/// KERNEL_OFFSET, leaving the lower half to programs. The host's boot page
/// tables map the enclave's memory there, and the stack and entry it gives
/// the boot CPU are such addresses.
pub const KERNEL_OFFSET: u64 = 0xffff_8000_0000_0000_u64;

/// Layout of the enclave's first memory block: the shared area (boot
/// parameters, status page, console ring, message rings, program area) then
/// the LWK image.
pub const BOOT_PARAMS_OFFSET: u64 = 0x0;
pub const STATUS_OFFSET: u64 = 0x1000;
pub const STATUS_SIZE: u64 = 0x1000;
/// One cache line Linux and the LWK bounce (benchmarks).
pub const BENCH_LINE_OFFSET: u64 = 0x2000;
pub const CONSOLE_OFFSET: u64 = 0x10000;
pub const CONSOLE_SIZE: u64 = 0x40000;
/// A [`KmsgRing`], host -> LWK.
pub const KMSG_TO_LWK_OFFSET: u64 = 0x5_0000;
/// LWK -> host.
pub const KMSG_TO_HOST_OFFSET: u64 = 0x9_1000;
/// Room for each of the two rings.
pub const KMSG_AREA_SIZE: u64 = 0x4_1000;
/// [`Proc`]`[MAX_PROGRAMS]`.
pub const PROC_OFFSET: u64 = 0x10_0000;
/// Each program's area.
pub const PROC_AREA_SIZE: u64 = 0x5000;
/// Programs alive at once per enclave.
pub const MAX_PROGRAMS: usize = 128;
pub const PROC_SIZE: u64 = PROC_AREA_SIZE * MAX_PROGRAMS as u64;
pub const SHARED_SIZE: u64 = 0x40_0000;
pub const IMAGE_OFFSET: u64 = SHARED_SIZE;

// ---- Interrupt vectors ----

/// Interrupt vectors: every fixed vector an LWK CPU takes, and the one the
/// LWK sends Linux, in one table (VECTORS), no two alike. The host sends
/// LWK_VECTOR, DONE_VECTOR and BENCH_VECTOR to LWK CPUs; the LWK sends the
/// others among its own CPUs, and HOST_VECTOR to Linux. The LWK's dynamic
/// vectors (kernel/hal/src/irq.rs) lie below all of them.
///
/// The local APIC's timer.
pub const TIMER_VECTOR: u8 = 0xf0;
/// LWK -> LWK: look at your run queue now.
pub const RESCHED_VECTOR: u8 = 0xf1;
/// Host or another enclave's LWK -> the LWK CPU that hears messages
/// (apic_ids[0], notify_apic_id): a message waits in a ring.
pub const LWK_VECTOR: u8 = 0xf2;
/// LWK -> LWK: stop this CPU for good (shutdown).
pub const STOP_VECTOR: u8 = 0xf3;
/// The host sends DONE_VECTOR to the LWK CPU named in a delegated-call
/// slot once the call's result is in the slot.
pub const DONE_VECTOR: u8 = 0xf4;
/// LWK -> LWK: flush your TLB (shootdown).
pub const SHOOTDOWN_VECTOR: u8 = 0xf5;
/// Benchmarks (test image): a bare IPI to time against a message round trip.
pub const BENCH_VECTOR: u8 = 0xf6;
/// LWK -> Linux (host_apic_id): Linux's platform IPI vector
/// (X86_PLATFORM_IPI_VECTOR), whose callback the module installs; the
/// module fails to build if the two differ.
pub const HOST_VECTOR: u8 = 0xf7;
/// The local APIC's error interrupt.
pub const ERROR_VECTOR: u8 = 0xfe;
/// The local APIC's spurious interrupt.
pub const SPURIOUS_VECTOR: u8 = 0xff;

/// Every vector above.
/// cbindgen:ignore
pub const VECTORS: [u8; 10] = [
    TIMER_VECTOR,
    RESCHED_VECTOR,
    LWK_VECTOR,
    STOP_VECTOR,
    DONE_VECTOR,
    SHOOTDOWN_VECTOR,
    BENCH_VECTOR,
    HOST_VECTOR,
    ERROR_VECTOR,
    SPURIOUS_VECTOR,
];

/// cbindgen:ignore
const _: () = {
    let mut i = 0;
    while i < VECTORS.len() {
        let mut j = i + 1;
        while j < VECTORS.len() {
            assert!(VECTORS[i] != VECTORS[j], "two interrupt vectors are the same");
            j += 1;
        }
        i += 1;
    }
};

#[repr(C)]
#[derive(Clone, Copy)]
pub struct BootParams {
    pub hdr: Header,
    pub enclave_id: u32,
    pub cpu_count: u32,
    pub mem_count: u32,
    pub host_apic_id: u32,
    /// Nonzero: the CPUs run their APIC in x2APIC mode.
    pub x2apic: u32,
    pub pad0: u32,
    /// Measured by Linux; the LWK must not touch the PIT.
    pub tsc_khz: u64,
    pub lapic_phys: u64,
    /// Page below 1 MiB lent for starting CPUs.
    pub trampoline_phys: u64,
    /// Page tables below 4 GiB for the trampoline.
    pub boot_cr3: u64,
    /// The shared area: never given to the allocator.
    pub shared_phys: u64,
    pub shared_size: u64,
    pub status_phys: u64,
    pub console_phys: u64,
    pub console_size: u64,
    pub image_phys: u64,
    pub image_size: u64,
    /// [0] is the boot CPU.
    pub apic_ids: [u32; MAX_CPUS],
    pub mem: [MemRange; MAX_MEM_RANGES],
    pub cmdline: [CChar; CMDLINE_LEN],
}

/// The SMP trampoline starts with a 2-byte jump, then a [`TrampolineSlots`]
/// at offset TRAMPOLINE_SLOTS. It enters long mode with cr3, loads rsp, rdi
/// and rsi from the slots and jumps to entry.
pub const TRAMPOLINE_SLOTS: usize = 8;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TrampolineSlots {
    pub cr3: u64,
    pub stack: u64,
    pub entry: u64,
    /// %rdi.
    pub arg0: u64,
    /// %rsi.
    pub arg1: u64,
}

// ---- Console ring ----

/// The console ring (LWK writes, host reads; survives an LWK panic).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Console {
    pub hdr: Header,
    /// Bytes of data after this header.
    pub capacity: u64,
    /// Bytes ever written; next at data[head % capacity]. The data follow.
    pub head: u64,
}

// ---- Status page ----

/// What the LWK says of itself in the status page (Status.lwk_state).
pub const LWK_BOOTING: u32 = 0;
pub const LWK_RUNNING: u32 = 1;
pub const LWK_CRASHED: u32 = 2;
pub const LWK_STOPPED: u32 = 3;

/// The status page (LWK writes, host reads).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Status {
    pub hdr: Header,
    /// LWK_BOOTING, _RUNNING, _CRASHED or _STOPPED.
    pub lwk_state: u32,
    pub online_cpus: u32,
    pub panic_cpu: u32,
    pub pad0: u32,
    /// LWK memory not in use, updated as it changes.
    pub free_bytes: u64,
    /// LWK memory it manages (kernel image and shared area excluded).
    pub total_bytes: u64,
}

// ---- Inter-kernel messages (kmsg) ----

/// Inter-kernel messages (kmsg): one transport for every protocol between
/// kernels (Popcorn's design): a ring per direction and receiver set, of
/// 64-byte slots. A sender claims the slots of one message by moving head
/// forward with compare-and-swap (never past tail + slots: a full ring is
/// refused, nothing is overwritten), writes every further slot, then the
/// first slot, whose stamp it sets last (release). A slot's stamp is its
/// ticket + 1, so an old slot never looks ready. Then it interrupts each
/// receiver that is not polling. A message's first slot holds a
/// [`KmsgHead`] and 48 payload bytes; each further slot 56 payload bytes
/// (up to 64 KiB in all). Each receiver keeps its own next ticket and
/// watches that slot's stamp (never head, which stays in the senders'
/// cache); it copies a message out and decrements the first slot's readers;
/// the receiver that takes it to zero moves tail past it (and past later
/// messages already read by all). Senders keep their own copy of tail and
/// read the shared one only when that copy says the ring is full. A
/// receiver never trusts what it reads: lengths, slot counts and stamps are
/// checked, and a ring that breaks the rules is abandoned.
pub const KMSG_SLOT_SIZE: usize = 64;
/// Payload bytes in a message's first slot.
pub const KMSG_HEAD_DATA: usize = 48;
/// Payload bytes in each further slot.
pub const KMSG_SLOT_DATA: usize = 56;
/// Largest payload.
pub const KMSG_MAX_LEN: usize = 65536;
/// Message types are 1 .. KMSG_MAX_TYPES - 1.
pub const KMSG_MAX_TYPES: usize = 64;
/// Receivers of one multicast ring.
pub const KMSG_MAX_READERS: usize = 32;
/// Each ring: three of the largest messages fit.
pub const KMSG_RING_SLOTS: u32 = 4096;

/// cbindgen:field-names=[type, slots, len]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmsgHead {
    /// `type` in C.
    pub kind: u16,
    /// Slots the message takes, this one included.
    pub slots: u16,
    /// Payload bytes.
    pub len: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KmsgSlot {
    /// Ticket + 1; set last in a message's first slot.
    pub stamp: u32,
    /// First slot: receivers yet to read the message.
    pub readers: u32,
    /// First slot: head, then payload.
    pub data: [u8; KMSG_SLOT_DATA],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KmsgRing {
    pub hdr: Header,
    /// Power of two; set by whoever made the ring.
    pub slots: u32,
    /// 1: unicast.
    pub receivers: u32,
    pub pad0: [u32; 10],
    /// Senders: next ticket to claim.
    pub head: u32,
    pub pad1: [u32; 15],
    /// Receivers: tickets below it are free again.
    pub tail: u32,
    pub pad2: [u32; 15],
    /// Bit r: receiver r polls; senders skip its interrupt. The ring's
    /// [`KmsgSlot`]s follow.
    pub polling: u32,
    pub pad3: [u32; 15],
}

/// Bytes of a ring with this many slots (ATOLL_KMSG_RING_BYTES in C).
pub const fn kmsg_ring_bytes(slots: u32) -> usize {
    core::mem::size_of::<KmsgRing>() + slots as usize * core::mem::size_of::<KmsgSlot>()
}

// Message types, grouped by the protocol that owns them (each protocol's
// file registers its handlers; the transport knows none of them).

/// Enclave life cycle: host lifecycle.c, LWK kernel/src/lifecycle.rs.
/// LWK: u64 CPUs online.
pub const KMSG_BOOTED: u16 = 1;
/// u64 cookie, echoed in PONG.
pub const KMSG_PING: u16 = 2;
pub const KMSG_PONG: u16 = 3;
/// Host: stop every core.
pub const KMSG_SHUTDOWN: u16 = 4;
/// LWK: every core has stopped.
pub const KMSG_STOPPED: u16 = 5;
/// LWK: u64 CPU; the text is on the console.
pub const KMSG_PANIC: u16 = 6;
/// Programs ([`Proc`]): host program.c, LWK process/launch.rs. The first
/// word of each is the program's area index.
/// Host: build the address space the area describes.
pub const KMSG_PROC_CREATE: u16 = 7;
/// LWK: area, s64 0 or -errno, u64 pid.
pub const KMSG_PROC_CREATED: u16 = 8;
/// Host: area; start the main thread (entry, stack_pointer).
pub const KMSG_PROC_START: u16 = 9;
/// Host: area, u64 signal; end the program with it.
pub const KMSG_PROC_KILL: u16 = 10;
/// LWK: area, u64 wait status, u64 pid; memory still held.
pub const KMSG_PROC_EXIT: u16 = 11;
/// Host: area; Linux maps none of its memory now: free it.
pub const KMSG_PROC_RELEASE: u16 = 12;
/// LWK: area, u64 pid; the area is PROC_FREE again.
pub const KMSG_PROC_FREED: u16 = 13;
/// Delegated calls: host program.c, LWK process/delegate.rs.
/// LWK: area, u64 slot; a thread's call waits in it.
pub const KMSG_CALL_POSTED: u16 = 14;
/// LWK: area, u64 slot; a signal came for the thread waiting in the slot:
/// the host interrupts the worker performing the call with CANCEL_SIGNAL
/// (its handler has no SA_RESTART, so a blocking call returns EINTR). Sent
/// again while the call is not done.
pub const KMSG_CALL_CANCEL: u16 = 38;
pub const CANCEL_SIGNAL: i32 = 64;
/// Host: area; build the address space the area's regions describe and put
/// it in place of the program's (an execve in progress).
pub const KMSG_PROC_EXEC: u16 = 39;
/// LWK: area, s64 0 or -errno, u64 new cr3.
pub const KMSG_PROC_EXECED: u16 = 40;
/// Host: area, u64 slot; the worker performing the slot's call touched a
/// page the LWK gives memory only when touched (the main stack's) at the
/// slot's fault_va: the LWK gives it if it would to its own thread, then
/// sets fault_state FAULT_ANSWERED and sends PAGE_READY (area, u64 slot).
pub const KMSG_PAGE_WANTED: u16 = 59;
pub const KMSG_PAGE_READY: u16 = 60;
/// Transport checks: host atoll_test/kmsg_check.c, LWK
/// kernel/src/selftest/kmsg.rs. A [`KmsgCheck`], then pattern bytes.
pub const KMSG_CHECK: u16 = 15;
/// Host: a [`KmsgCheckStart`]; every LWK CPU sends.
pub const KMSG_CHECK_START: u16 = 16;
/// LWK: u64 sender, u64 messages sent, u64 waits for room.
pub const KMSG_CHECK_DONE: u16 = 17;
/// Host: u64 messages it sent the LWK.
pub const KMSG_CHECK_END: u16 = 18;
/// LWK: u64 received, u64 bad (of the host's).
pub const KMSG_CHECK_REPORT: u16 = 19;

/// Rings between two enclaves: the host lends each pair of running
/// enclaves one block of its memory holding two rings (one each way, at
/// out_offset and in_offset from each side's view) and tells both. Each LWK
/// maps the block and from then on sends to the other directly: a message,
/// then LWK_VECTOR to the other's notify_apic_id. Before the host takes the
/// block back it sends PEER_REMOVE and waits for PEER_REMOVED: the LWK has
/// stopped using it and unmapped it on every CPU.
///
/// Programs in the two enclaves may message each other (KMSG_USER) only
/// while both enclaves have the same owner user and group: programs_talk
/// says so at PEER_ADD, and PEER_TRUST says it anew after an owner changes
/// (the host waits for PEER_TRUSTED). Both LWKs hold to it, the sender and
/// the receiver.
///
/// Host: a [`KmsgPeer`].
pub const KMSG_PEER_ADD: u16 = 20;
/// LWK: u64 peer id, s64 0 or -errno.
pub const KMSG_PEER_ADDED: u16 = 21;
/// Host: u64 peer id.
pub const KMSG_PEER_REMOVE: u16 = 22;
/// LWK: u64 peer id; the block is no longer mapped.
pub const KMSG_PEER_REMOVED: u16 = 23;
/// Host: u64 peer id, u64 cookie: ping the peer.
pub const KMSG_PEER_PING: u16 = 24;
/// LWK: u64 cookie, s64 round trip in ns or -errno.
pub const KMSG_PEER_PONG: u16 = 25;
/// Host: u64 peer id, u64 programs_talk (1 or 0), u64 cookie.
pub const KMSG_PEER_TRUST: u16 = 57;
/// LWK: u64 cookie; it holds to the new answer now.
pub const KMSG_PEER_TRUSTED: u16 = 58;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmsgPeer {
    /// The other enclave's id.
    pub peer_id: u32,
    /// The other enclave's CPU that hears messages.
    pub notify_apic_id: u32,
    /// Page aligned, in Linux's memory.
    pub block_phys: u64,
    pub block_size: u64,
    /// Our ring to the peer.
    pub out_offset: u64,
    /// The peer's ring to us.
    pub in_offset: u64,
    /// In each ring.
    pub slots: u32,
    /// 1: programs may message each other (same owner).
    pub programs_talk: u32,
    /// One cache line both bounce (benchmarks).
    pub line_offset: u64,
}

/// Multicast: a ring several LWKs receive from (up to KMSG_MAX_READERS),
/// in a block of Linux's memory each maps; the sender writes each message
/// once with a reader count and interrupts every receiver that does not
/// poll. Joining and leaving work as PEER_ADD/PEER_REMOVE do.
///
/// Host: a [`KmsgGroup`].
pub const KMSG_GROUP_JOIN: u16 = 33;
/// LWK: u64 group, s64 0 or -errno.
pub const KMSG_GROUP_JOINED: u16 = 34;
/// Host: u64 group.
pub const KMSG_GROUP_LEAVE: u16 = 35;
/// LWK: u64 group; the block is no longer mapped.
pub const KMSG_GROUP_LEFT: u16 = 36;
/// IOC_KMSG_MCAST (test image): count check messages of len bytes to the n
/// enclaves in ids, once as multicast and once as unicasts to each; each
/// phase's time runs until every LWK has reported.
pub const MCAST_MAX: usize = 8;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmsgGroup {
    /// Its number, from the host.
    pub group: u32,
    /// This receiver's, 0 .. count - 1.
    pub index: u32,
    /// Receivers.
    pub count: u32,
    /// Of the ring at the block's start.
    pub slots: u32,
    pub block_phys: u64,
    pub block_size: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct KmsgMcastReq {
    pub hdr: Header,
    pub ids: [u32; MCAST_MAX],
    pub n: u32,
    pub count: u32,
    pub len: u32,
    pub pad0: u32,
    /// Out.
    pub mcast_ns: u64,
    /// Out.
    pub unicast_ns: u64,
    /// Out: intact and in order, per LWK, both phases.
    pub received: [u64; MCAST_MAX],
    pub bad: [u64; MCAST_MAX],
    pub error: [CChar; ERROR_LEN],
}

/// Messages between programs: a program in an enclave, a process on Linux
/// or a program in another enclave sends up to MSG_MAX bytes to a (kernel,
/// port); kernel 0 is Linux, any other the enclave with that id. In an
/// enclave the two calls are system calls of the LWK; on Linux they are
/// ioctls of /dev/atoll (abi/atoll_msg.h wraps both). Between kernels a
/// message travels as one KMSG_USER message, straight from LWK to LWK
/// between enclaves. A port keeps MSG_QUEUE messages; past that the
/// sender's call fails with EAGAIN on Linux, and messages from other
/// kernels are dropped and counted.
///
/// Who hears whom: each Linux user has ports of their own. A process on
/// Linux receives on its user's ports, and sends to kernel 0 into them; a
/// program in an enclave sends to the ports of the user who runs it (its
/// atoll run's). Ports in an enclave are its programs', whose users all may
/// use that enclave. Programs in two enclaves hear each other only while
/// the enclaves have the same owner (PEER_ADD's programs_talk). Queued
/// messages to one Linux user take at most MSG_USER_BYTES.
///
/// (kernel, port, from port, buf, len) -> 0.
pub const SYS_MSG_SEND: u64 = 1000;
/// (port, buf, len, struct atoll_msg_from *, timeout ms) -> bytes.
pub const SYS_MSG_RECV: u64 = 1001;
pub const MSG_MAX: usize = 4096;
pub const MSG_PORTS: usize = 256;
pub const MSG_QUEUE: usize = 64;
pub const MSG_USER_BYTES: usize = 4 << 20;
pub const KERNEL_LINUX: u32 = 0;
/// A [`UserMsg`], then the bytes.
pub const KMSG_USER: u16 = 32;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserMsg {
    pub dest_port: u16,
    pub src_port: u16,
    /// Bytes after this struct.
    pub len: u32,
    /// The sending program's (to Linux: whose user's ports).
    pub area: u32,
    pub pad0: u32,
}

/// Who sent a received message.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsgFrom {
    pub kernel: u32,
    pub port: u32,
}

/// IOC_MSG_SEND: buf_ptr/len to (kernel, port) from src_port.
/// IOC_MSG_RECV: waits up to timeout_ms (-1: for ever) for a message on
/// port; len in: room at buf_ptr, out: the message's bytes (at most the
/// room); kernel and src_port out: who sent it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MsgIo {
    pub hdr: Header,
    pub kernel: u32,
    pub port: u16,
    pub src_port: u16,
    pub buf_ptr: u64,
    pub len: u32,
    pub timeout_ms: i32,
}

/// XEMEM: memory segments shared between programs anywhere on the node, in
/// any enclave or on Linux (XPMEM's model; xemem/xpmem.h wraps it). A
/// program makes a segment of its own memory (segid, optionally named);
/// another gets it (apid, if the segment's mode lets its user) and attaches
/// it, mapping the very frames. In an enclave the calls are the LWK's
/// system call SYS_XEMEM; on Linux, IOC_XEMEM of /dev/atoll. The host
/// module keeps every segment; an LWK asks it with XEMEM_REQ and gets
/// XEMEM_REPLY (an attach's frames in runs, over several replies). Removing
/// a segment (or its owner ending) revokes every attachment first: the host
/// zaps Linux's, and sends XEMEM_REVOKE to each LWK; only then are the
/// frames let go (XEMEM_UNPIN to the owner's LWK).
///
/// Signalled segments: every segment has an event count. SIGNAL adds one
/// and wakes a waiter; WAIT takes one, blocking until there is one (an
/// LWK's WAIT is answered when it is taken, by an XEMEM_REPLY from the
/// message interrupt). Removing the segment ends every wait with EIDRM. A
/// SIGNAL with request id 0 gets no answer (the LWK sends those once a
/// first signal to the segment succeeded, so a simulation never waits on
/// Linux). The event lives in its owner's kernel: the host's for a segment
/// made on Linux, the LWK's for one made in an enclave (the host opens and
/// closes it there with XEMEM_HOME). A program's first SIGNAL or WAIT goes
/// to the host, which checks the segment's mode; for an event in an LWK it
/// answers XEMEM_ELSEWHERE with that enclave's id, and the program's kernel
/// then sends its SIGNAL, WAIT and CANCEL there (XEMEM_HOME, answered by
/// XEMEM_REPLY), from one enclave's CPU to the other's without Linux; the
/// host forwards Linux's own the same way.
///
/// (struct atoll_xemem_io *) -> 0 or -errno.
pub const SYS_XEMEM: u64 = 1002;

/// Where a kernel-mode program (`atoll run --hrt`) calls for its system
/// calls instead of SYSCALL: CALL it with the number and arguments in
/// SYSCALL's registers; the result comes in rax, and rcx and r11 are
/// clobbered, as by SYSCALL. EPERM in ring 3 (ENOSYS on Linux).
pub const SYS_HRT_DIRECT_CALL: u64 = 1003;
/// The hybrid-runtime API's calls into the LWK (libatoll-hrt, docs/hrt.md):
/// (op, up to five arguments) -> a value or -errno. A ring-3 program makes
/// them by SYSCALL with this number and the op in rdi; a kernel-mode one
/// CALLs the address HRT_OP_ENTRY gives with the op and arguments in C's
/// registers (rdi, rsi, rdx, rcx, r8, r9), the result in rax.
pub const SYS_HRT: u64 = 1004;
/// () -> 0: nothing, what a call costs.
pub const HRT_OP_NULL: u64 = 0;
/// () -> the address of the direct entry; EPERM in ring 3.
pub const HRT_OP_ENTRY: u64 = 1;
/// () -> how many CPUs the program has (the API numbers them from 0).
pub const HRT_OP_CPUS: u64 = 2;
/// () -> the number of the CPU the calling thread runs on.
pub const HRT_OP_THIS_CPU: u64 = 3;
/// (cpu or HRT_ANY_CPU, rip, rsp, fs base, u32 *done) -> tid: a thread
/// bound to that CPU, entered at rip with rsp and rdi = rsp; at its end
/// `*done` becomes 0 and its waiters wake (as CLONE_CHILD_CLEARTID).
pub const HRT_OP_THREAD: u64 = 4;
/// () -> never returns: ends the calling thread.
pub const HRT_OP_EXIT: u64 = 5;
/// (u32 *word, expected) -> 0 once woken, EAGAIN if `*word` differs,
/// EINTR for a signal: sleeps as FUTEX_WAIT does.
pub const HRT_OP_WAIT: u64 = 6;
/// (u32 *word, how many, HRT_WAKE_*) -> how many woke: each woken thread's
/// CPU is kicked with an IPI.
pub const HRT_OP_WAKE: u64 = 7;
/// (1 to hold, 0 to release) -> 1 if it was held before, else 0: the
/// calling thread is not preempted while held (ring 3's interrupt-off
/// region), for at most HRT_HOLD_MAX_US at a time.
pub const HRT_OP_HOLD: u64 = 8;
pub const HRT_ANY_CPU: u64 = 0xFFFF_FFFF_FFFF_FFFF;
/// HRT_OP_WAKE: the woken thread runs next on its CPU, ahead of the
/// threads queued there and in place of the one running (a handler thread).
pub const HRT_WAKE_FIRST: u64 = 1;
pub const HRT_HOLD_MAX_US: u64 = 10_000;
pub const XEMEM_NAME_LEN: usize = 64;
/// vaddr, size, mode, name ("": none) -> segid.
pub const XEMEM_MAKE: u32 = 1;
/// segid.
pub const XEMEM_REMOVE: u32 = 2;
/// segid, flags -> apid.
pub const XEMEM_GET: u32 = 3;
/// apid.
pub const XEMEM_RELEASE: u32 = 4;
/// apid, offset, size, vaddr (0: anywhere) -> vaddr.
pub const XEMEM_ATTACH: u32 = 5;
/// vaddr.
pub const XEMEM_DETACH: u32 = 6;
/// name -> segid.
pub const XEMEM_LOOKUP: u32 = 7;
/// LWK only: the program's memory is gone; drop what it held.
pub const XEMEM_ENDED: u32 = 8;
/// segid: one event for its waiters.
pub const XEMEM_SIGNAL: u32 = 9;
/// segid, timeout_ms: takes an event, or ETIMEDOUT, EIDRM.
pub const XEMEM_WAIT: u32 = 10;
/// LWK only: ends the WAIT whose request id is attachment.
pub const XEMEM_CANCEL: u32 = 11;
/// segid: the owner asks that it outlive the owner.
pub const XEMEM_KEEP: u32 = 12;
/// GET's flags, as XPMEM's.
pub const XEMEM_RDONLY: u32 = 1;
pub const XEMEM_RDWR: u32 = 2;
/// LWK: a [`XememReq`].
pub const KMSG_XEMEM_REQ: u16 = 41;
/// Host: a [`XememReply`], then its runs.
pub const KMSG_XEMEM_REPLY: u16 = 42;
/// Host: u64 area, u64 attachment: unmap it.
pub const KMSG_XEMEM_REVOKE: u16 = 43;
/// LWK: u64 attachment; no CPU can reach it now.
pub const KMSG_XEMEM_REVOKED: u16 = 44;
/// Host: u64 pin; nobody else maps its frames now.
pub const KMSG_XEMEM_UNPIN: u16 = 45;
/// LWK: a [`XememReq`], SIGNAL, WAIT or CANCEL.
pub const KMSG_XEMEM_EVENT: u16 = 46;
/// To an event's LWK: a [`XememEvent`].
pub const KMSG_XEMEM_HOME: u16 = 61;
/// Runs in one reply.
pub const XEMEM_REPLY_RUNS: usize = 4000;
/// A reply's result: the event is in enclave `value`.
pub const XEMEM_ELSEWHERE: i64 = 1;
/// FNV-1a over each run's phys then len (8 bytes each, little-endian): a
/// MAKE's runs as the LWK pinned them must hash as the host finds them
/// ([`xemem_hash`]).
pub const XEMEM_HASH_SEED: u64 = 0xcbf2_9ce4_8422_2325_u64;
pub const XEMEM_HASH_PRIME: u64 = 0x100_0000_01b3_u64;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct XememIo {
    pub hdr: Header,
    pub op: u32,
    /// MAKE: who may get it, as a file's mode (0600).
    pub mode: u32,
    pub segid: i64,
    pub apid: i64,
    pub vaddr: u64,
    pub size: u64,
    pub offset: u64,
    /// GET: XEMEM_RDONLY or XEMEM_RDWR.
    pub flags: u32,
    /// WAIT: -1 waits for ever.
    pub timeout_ms: i32,
    pub name: [CChar; XEMEM_NAME_LEN],
}

/// A program's request, with the LWK's pin over a MAKE's frames.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct XememReq {
    /// The LWK's, echoed by every reply.
    pub id: u64,
    /// The program asking.
    pub area: u32,
    pub pid: u32,
    /// MAKE: the frames' pin in the LWK.
    pub pin: u64,
    /// MAKE: xemem_hash of the range's runs.
    pub runs_hash: u64,
    /// MAKE: the program's page-table root, to walk.
    pub root: u64,
    /// DETACH: the id ATTACH gave.
    pub attachment: u64,
    pub io: XememIo,
}

/// Physically contiguous bytes of a segment, in order.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XememRun {
    pub phys: u64,
    pub len: u64,
}

/// XEMEM_HOME: SIGNAL, WAIT or CANCEL for an event that lives in the
/// receiving LWK, from the host or another LWK, answered by XEMEM_REPLY to
/// the sender with the segid as its value (id 0: no answer; a WAIT always
/// has one). From the host also MAKE (the event of a segment made here
/// opens here), REMOVE (it closes: waits get EIDRM) and GET (enclave
/// `kernel`'s programs may use it: the host told one of them where it is;
/// another LWK's requests wait for that).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XememEvent {
    /// The sender's, echoed by the reply.
    pub id: u64,
    pub segid: i64,
    /// CANCEL: the id of the WAIT it ends.
    pub cancel: u64,
    pub op: u32,
    /// GET: the enclave let in.
    pub kernel: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct XememReply {
    pub id: u64,
    /// 0 or -errno.
    pub result: i64,
    /// segid, apid, or an attach's attachment id.
    pub value: i64,
    /// ATTACH: map the runs writable.
    pub writable: u32,
    /// ATTACH sends its runs in several replies; 1 ends.
    pub last: u32,
    /// Runs after this struct.
    pub count: u32,
    pub pad0: u32,
}

/// IOC_XEMEM_LIST: the node's segments and attachments (the first that fit).
pub const XEMEM_LIST_SEGS: usize = 64;
pub const XEMEM_LIST_ATTS: usize = 128;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct XememSegInfo {
    pub segid: i64,
    pub size: u64,
    /// The owner's: 0 Linux, else the enclave's id.
    pub kernel: u32,
    /// The owner: its pid there.
    pub pid: u32,
    pub uid: u32,
    pub mode: u32,
    /// Apids handed out and not released.
    pub grants: u32,
    /// Not revoked.
    pub attachments: u32,
    /// XEMEM_SEG_KEPT, XEMEM_SEG_OWNER_ENDED.
    pub flags: u32,
    pub pad0: u32,
    pub name: [CChar; XEMEM_NAME_LEN],
}

/// Outlives its owner (KEEP).
pub const XEMEM_SEG_KEPT: u32 = 0x1;
/// And its owner has ended.
pub const XEMEM_SEG_OWNER_ENDED: u32 = 0x2;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct XememAttInfo {
    pub id: u64,
    pub segid: i64,
    pub offset: u64,
    pub size: u64,
    /// Where it is mapped: 0 Linux, else the enclave's id.
    pub kernel: u32,
    pub pid: u32,
    pub writable: u32,
    /// Its segment went; its pages fault.
    pub revoked: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct XememList {
    pub hdr: Header,
    /// Out: how many exist.
    pub segments: u32,
    pub attachments: u32,
    pub seg: [XememSegInfo; XEMEM_LIST_SEGS],
    pub att: [XememAttInfo; XEMEM_LIST_ATTS],
}

/// atoll_xemem_hash: FNV-1a over each run's phys, then len, little-endian.
pub fn xemem_hash(runs: impl IntoIterator<Item = XememRun>) -> u64 {
    let mut h = XEMEM_HASH_SEED;
    for r in runs {
        for b in r.phys.to_le_bytes().into_iter().chain(r.len.to_le_bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(XEMEM_HASH_PRIME);
        }
    }
    h
}

/// Message benchmarks (test image; host atoll_test/kmsg_bench.c, LWK
/// kernel/src/selftest/kmsg_bench.rs): one side times `rounds` round trips
/// of each mode, the other answers. Linux times its own round trips with an
/// LWK; for two LWKs, Linux asks one (BENCH_RUN) and it reports
/// BENCH_RESULT.
///
/// A cache line bounced between the two CPUs.
pub const BENCH_LINE: u64 = 1;
/// A bare IPI and one back.
pub const BENCH_IPI: u64 = 2;
/// A 64-byte message each way, with interrupts.
pub const BENCH_KMSG_IPI: u64 = 3;
/// A 64-byte message each way, both sides polling.
pub const BENCH_KMSG_POLL: u64 = 4;
/// A one-slot message each way, both sides polling (Popcorn's 64-byte
/// message: one slot, its head and 48 payload bytes in one cache line).
pub const BENCH_SLOT_POLL: u64 = 5;
pub const BENCH_MODES: usize = 5;
/// Modes timed together, taking turns round by round: the bare IPI and the
/// message with interrupts (the LWK answers both from its interrupts), so
/// that the host's drifts, which move IPI delivery under TCG, hit both
/// alike. Every other mode is timed alone; groups go in mode order.
pub const BENCH_TAKE_TURNS: u64 = (1 << BENCH_IPI) | (1 << BENCH_KMSG_IPI);

/// The message benchmark's modes, group by group as they are timed
/// (BENCH_TAKE_TURNS together, where the first of them comes, every other
/// mode alone), each as (modes, how many).
pub fn bench_groups() -> impl Iterator<Item = ([u64; BENCH_MODES], usize)> {
    let together = |m: u64| BENCH_TAKE_TURNS & (1 << m) != 0;
    (1..=BENCH_MODES as u64).filter_map(move |mode| {
        let mut group = ([0; BENCH_MODES], 0);
        let members =
            (1..=BENCH_MODES as u64)
                .filter(|&m| if together(mode) { together(m) } else { m == mode });
        for m in members {
            group.0[group.1] = m;
            group.1 += 1;
        }
        // A group comes once, at its first mode.
        (group.0[0] == mode).then_some(group)
    })
}
/// u64 mode, rounds, partner APIC id, reply vector.
pub const KMSG_BENCH_RESPOND: u16 = 26;
/// u64 mode: the responder is in place.
pub const KMSG_BENCH_READY: u16 = 27;
/// The polling responder may stop.
pub const KMSG_BENCH_DONE: u16 = 28;
/// Host: u64 peer id, rounds: time every mode with it.
pub const KMSG_BENCH_RUN: u16 = 29;
/// LWK: u64 mode, median ns, min ns, 90th percentile ns, s64 error.
pub const KMSG_BENCH_RESULT: u16 = 30;
/// 48 or 64 bytes, echoed by the receiver (the round trips): u64 round,
/// BENCH_REPLY set in the answer's.
pub const KMSG_BENCH_ECHO: u16 = 31;
/// Set in an echo's round on the answer: the round number comes back with it.
pub const BENCH_REPLY: u64 = 1_u64 << 63;
/// Any bytes, received and dropped (the stream).
pub const KMSG_BENCH_SINK: u16 = 37;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BenchFigure {
    pub median_ns: u64,
    pub min_ns: u64,
    pub p90_ns: u64,
    /// 0, or -errno: this mode could not be measured.
    pub error: i64,
}

/// IOC_KMSG_BENCH: round trips to enclave id from Linux or from enclave
/// from_id.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct KmsgBenchReq {
    pub hdr: Header,
    pub id: u32,
    /// 0: Linux times it.
    pub from_id: u32,
    pub rounds: u32,
    /// From Linux: also stream `rounds` messages of this size (0: no).
    pub stream_size: u32,
    /// `[BENCH_x - 1]`.
    pub mode: [BenchFigure; BENCH_MODES],
    /// Out: the stream, until the LWK had handled all of it.
    pub stream_ns: u64,
    /// Out: as many memcpy()s of that size on Linux's CPU.
    pub memcpy_ns: u64,
    pub error: [CChar; ERROR_LEN],
}

/// IOC_KMSG_CHECK: floods the rings of enclave id with check messages of
/// lengths cycling min_len .. max_len (the LWK's side is in the test
/// image): count from Linux to the LWK, then count from every LWK CPU at
/// once to Linux, which polls meanwhile (the LWK then sends no interrupts).
/// Directions: a bit each.
pub const CHECK_TO_LWK: u32 = 1;
pub const CHECK_FROM_LWK: u32 = 2;

/// A message whose every byte can be checked (the test image and
/// IOC_KMSG_CHECK flood with it): this header, then pattern byte i =
/// (i * 31 + (seq ^ sender)) & 0xff. A check message is at least
/// sizeof(struct atoll_kmsg_check) long.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmsgCheck {
    /// Stream: one per sending CPU; the host is stream 0.
    pub sender: u32,
    /// 0, 1, ... within the stream.
    pub seq: u32,
    /// FNV-1a (32 bit) of the pattern bytes.
    pub sum: u32,
    pub pad0: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmsgCheckStart {
    /// Messages each LWK CPU sends.
    pub count: u32,
    /// Lengths cycle min_len .. max_len.
    pub min_len: u32,
    pub max_len: u32,
    pub pad0: u32,
}

/// FNV-1a, 32 bit: the checksum of a check message's pattern bytes.
pub fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// Bytes before a check message's pattern.
/// cbindgen:ignore
pub const KMSG_CHECK_HEAD: usize = core::mem::size_of::<KmsgCheck>();

/// Fills `buf` (at least `KMSG_CHECK_HEAD` bytes) as check message `seq` of `sender`.
pub fn kmsg_check_fill(buf: &mut [u8], sender: u32, seq: u32) {
    let (head, pattern) = buf.split_at_mut(KMSG_CHECK_HEAD);
    for (i, b) in pattern.iter_mut().enumerate() {
        *b = (i as u32).wrapping_mul(31).wrapping_add(seq ^ sender) as u8;
    }
    let words = [sender, seq, fnv1a(pattern), 0];
    for (chunk, w) in head.chunks_mut(4).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
}

/// (sender, seq) of a check message whose checksum and pattern are right.
pub fn kmsg_check_verify(buf: &[u8]) -> Option<(u32, u32)> {
    let word = |i: usize| u32::from_le_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
    if buf.len() < KMSG_CHECK_HEAD {
        return None;
    }
    let (sender, seq, pattern) = (word(0), word(4), &buf[KMSG_CHECK_HEAD..]);
    let expected = |i: usize| (i as u32).wrapping_mul(31).wrapping_add(seq ^ sender) as u8;
    let intact = pattern.iter().enumerate().all(|(i, &b)| b == expected(i));
    (intact && fnv1a(pattern) == word(8)).then_some((sender, seq))
}

// ---- Programs ----

/// Programs (up to MAX_PROGRAMS at once per enclave). `atoll run` opens
/// /dev/atoll; the open file is bound to one program, which has one
/// [`Proc`] of the enclave's (its area; messages name it by index). Both
/// sides claim a free area by a compare-and-swap of its state from
/// PROC_FREE to PROC_CREATING.
///
/// 1. IOC_RUN: the host claims an area, copies the regions into it and
///    sends KMSG_PROC_CREATE. The LWK maps every region, populated and
///    zeroed (large pages where aligned), writes cr3 and pid, sets state
///    PROC_LOADED and answers KMSG_PROC_CREATED.
/// 2. mmap(USER_START, USER_END - USER_START, RW, MAP_SHARED |
///    MAP_FIXED_NOREPLACE, fd, 0) mirrors the program's address space in
///    the caller: a fault at an address is resolved through the LWK's page
///    tables (cr3) to the same physical page. While LOADED the mirror may
///    write read-only pages (to load the ELF); after START it honours the
///    LWK's protections.
/// 3. The caller writes the ELF segments and the initial stack (argv, envp,
///    auxv) through the mirror, then IOC_START (entry, stack pointer):
///    KMSG_PROC_START, state PROC_RUNNING.
/// 4. Delegated calls: an LWK thread owns slot[i]. It fills nr, args, kind,
///    cpu, tid, sets state SLOT_REQUEST, increments doorbell and sends
///    HOST_VECTOR. A host worker in IOC_CALL claims it (SLOT_REQUEST ->
///    SLOT_CLAIMED), performs it, and its next IOC_CALL stores ret, sets
///    SLOT_DONE and sends DONE_VECTOR to apic_ids[cpu]. The LWK thread
///    takes ret and sets the slot SLOT_IDLE. Before a worker is handed a
///    call, the host drops every mirror mapping if map_generation changed
///    (the LWK bumps it after it unmaps memory or takes protection away).
/// 5. The last thread ends: state PROC_EXITED, wait_status,
///    KMSG_PROC_EXIT. The memory stays until the file is released (every
///    mirror mapping gone): KMSG_PROC_RELEASE; the LWK ends any thread
///    left, frees everything, sets state PROC_FREE and sends
///    KMSG_PROC_FREED.
///
/// Lowest program address.
pub const USER_START: u64 = 0x10_0000_u64;
/// 64 TiB: end of the mirror.
pub const USER_END: u64 = 0x4000_0000_0000_u64;
/// Where a PIE program is loaded.
pub const PIE_BASE: u64 = 0x4000_0000_u64;
/// Anonymous mmaps grow up from here.
pub const MMAP_BASE: u64 = 0x1000_0000_0000_u64;
/// The main stack ends here.
pub const STACK_TOP: u64 = 0x3fff_ffe0_0000_u64;
/// 8 MiB, like RLIMIT_STACK.
pub const STACK_SIZE: u64 = 0x80_0000_u64;
/// The vDSO (kernel/vdso): the LWK maps a [`VdsoData`] page at VDSO_BASE
/// and the image right after it, in every program it builds; `atoll run`
/// passes the image's address as AT_SYSINFO_EHDR. 1 MiB below the mmap
/// base.
pub const VDSO_BASE: u64 = 0xfff_fff0_0000_u64;
/// The data page and the image's.
pub const VDSO_PAGES: u64 = 4;

/// The vDSO's data page: CLOCK_MONOTONIC is (TSC * ns_mult) >> 32 ns.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VdsoData {
    pub ns_mult: u64,
    /// CLOCK_REALTIME - CLOCK_MONOTONIC.
    pub realtime_offset_ns: i64,
}
pub const MAX_REGIONS: usize = 16;
/// Threads alive at once.
pub const MAX_SLOTS: usize = 128;
/// Words of a bitmap with a bit per slot.
pub const SLOT_WORDS: usize = MAX_SLOTS / 64;
/// A command name, NUL padded.
pub const COMM_LEN: usize = 16;
/// Linux's host name (65 bytes with its NUL), NUL padded to 72.
pub const NODENAME_LEN: usize = 72;

/// Region.prot.
pub const PROT_READ: u32 = 1;
pub const PROT_WRITE: u32 = 2;
pub const PROT_EXEC: u32 = 4;

/// Proc.state.
pub const PROC_FREE: u32 = 0;
pub const PROC_CREATING: u32 = 1;
pub const PROC_LOADED: u32 = 2;
pub const PROC_RUNNING: u32 = 3;
pub const PROC_EXITED: u32 = 4;

/// Slot.state.
pub const SLOT_IDLE: u32 = 0;
pub const SLOT_REQUEST: u32 = 1;
pub const SLOT_CLAIMED: u32 = 2;
pub const SLOT_DONE: u32 = 3;
/// Slot.fault_state: PAGE_WANTED's question and answer, in the slot: the
/// state in the low bits (FAULT_STATE_MASK), the question's number above,
/// which the answer keeps.
pub const FAULT_IDLE: u32 = 0;
pub const FAULT_ASKED: u32 = 1;
pub const FAULT_ANSWERED: u32 = 2;
pub const FAULT_STATE_MASK: u32 = 0xff;

/// Slot.kind: perform Linux system call nr(args).
pub const CALL_SYSCALL: u32 = 1;
/// Report: nr is not supported (ENOSYS); ret ignored.
pub const CALL_UNSUPPORTED: u32 = 2;
/// fork: the LWK made a child process in area args[0] with pid args[1]; the
/// module puts a random token in args[2]; the worker forks `atoll run`,
/// whose child adopts it with that token (IOC_ADOPT) and starts it; ret is
/// the child's Linux pid, or -errno (the LWK drops it).
pub const CALL_FORK: u32 = 3;
/// execve(args[0..3]): the worker reads the new program, has the LWK build
/// its image (IOC_EXEC), loads it through the mirror and gives its entry
/// and stack (IOC_START); ret 0, or -errno (before the image was replaced
/// the program goes on; after, it is killed).
pub const CALL_EXEC: u32 = 4;
/// A descriptor `atoll run` keeps for writing a shared file mapping back
/// (the LWK's write_back.rs) or a pipe's bytes into Linux's pipe
/// (pipe_move.rs); nr says what, args[0] is the descriptor. The program
/// cannot use, close or replace a kept descriptor. KEEP: a close-on-exec
/// duplicate of the program's args[0] (from 512 up); ret the kept
/// descriptor. WRITE: pwrite64(args[0], args[1], args[2], args[3]) from the
/// program's memory. DROP: closes it. PUSH: write(args[0], args[1],
/// args[2]), never waiting (O_NONBLOCK on the kept description only).
pub const CALL_KEPT_FILE: u32 = 5;
pub const KEPT_KEEP: u64 = 1;
pub const KEPT_WRITE: u64 = 2;
pub const KEPT_DROP: u64 = 3;
pub const KEPT_PUSH: u64 = 4;
/// The name of the file behind the program's descriptor args[0], for
/// /proc/<pid>/maps: the worker writes its struct stat (STAT_SIZE bytes) at
/// args[1] and its path, NUL terminated, right after, in args[2] bytes in
/// all; ret is the path's length (cut to fit), or -errno.
pub const CALL_FILE_NAME: u32 = 6;
pub const STAT_SIZE: u64 = 144;
/// open() of a file whose contents the LWK made (/proc/<pid>/maps). nr
/// TEXT_OPEN: the args[1] bytes at args[0] (at most MAX_TEXT_FILE), with
/// open's flags args[2] (O_CLOEXEC counts); ret is the new descriptor,
/// read-only, or -errno. nr TEXT_MAY_READ, asked before another program's
/// file is made: 0 if this `atoll run` may open the maps of the `atoll run`
/// serving LWK pid args[0], else -errno.
pub const CALL_TEXT_FILE: u32 = 7;
pub const TEXT_OPEN: u64 = 0;
pub const TEXT_MAY_READ: u64 = 1;
pub const MAX_TEXT_FILE: u64 = 16 << 20;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Region {
    /// Page aligned, within [USER_START, USER_END).
    pub start: u64,
    /// Page multiple.
    pub size: u64,
    /// PROT_*.
    pub prot: u32,
    /// REGION_*.
    pub flags: u32,
    /// REGION_PROGRAM, REGION_LOADER: the file offset at `start`.
    pub offset: u64,
}

/// Region.flags: memory comes on first touch, from the touched page up to
/// the region's end (the main stack below its first contents); at most one
/// such region, writable, not executable.
pub const REGION_ON_DEMAND: u32 = 1;
/// Region.flags, what a region maps, for /proc/<pid>/maps: the main stack,
/// or segments of the program's or its loader's file from Region.offset on.
pub const REGION_STACK: u32 = 2;
pub const REGION_PROGRAM: u32 = 4;
pub const REGION_LOADER: u32 = 8;

pub const FILE_PATH_LEN: usize = 512;

/// A file as /proc/<pid>/maps names it (no file: all zero).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileName {
    /// stat's st_dev.
    pub dev: u64,
    /// stat's st_ino.
    pub ino: u64,
    /// Its full path, NUL terminated, cut to fit.
    pub path: [CChar; FILE_PATH_LEN],
}

impl Default for FileName {
    fn default() -> Self {
        FileName { dev: 0, ino: 0, path: [0; FILE_PATH_LEN] }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Slot {
    /// SLOT_*.
    pub state: u32,
    /// LWK CPU index of the waiting thread.
    pub cpu: u32,
    /// CALL_*.
    pub kind: u32,
    pub tid: u32,
    pub nr: u64,
    pub args: [u64; 6],
    /// Value or -errno, as Linux returns it.
    pub ret: i64,
    /// Host: PAGE_WANTED's page.
    pub fault_va: u64,
    /// FAULT_* | question number << 8.
    pub fault_state: u32,
    /// Host: 1 if the worker writes there.
    pub fault_write: u32,
    /// LWK: 1 while the caller polls `state`, so the host sends no DONE interrupt.
    pub spinning: u32,
    pub pad1: u32,
    /// LWK: its TSC when it posted the call.
    pub posted_tsc: u64,
    /// Host: its TSC when a worker took the call.
    pub taken_tsc: u64,
    /// Host: its TSC when the worker answered.
    pub answered_tsc: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Proc {
    pub hdr: Header,
    /// PROC_*.
    pub state: u32,
    pub pid: u32,
    pub region_count: u32,
    /// Enclave CPUs the threads use, 1.. (0: all).
    pub cpu_count: u32,
    /// Page aligned, in no region: the heap grows up from here.
    pub brk_start: u64,
    /// START.
    pub entry: u64,
    /// START.
    pub stack_pointer: u64,
    /// LOADED: the LWK's page-table root (physical).
    pub cr3: u64,
    /// EXITED: as wait(2): code << 8, or the signal.
    pub wait_status: u32,
    /// Host: the Linux process serving it (`atoll run`).
    pub host_pid: u32,
    /// LWK: +1 after unmapping or reducing protection.
    pub map_generation: u32,
    /// LWK: threads alive.
    pub threads: u32,
    /// Host: 1 while a worker polls the slots, so the LWK posts without CALL_POSTED.
    pub polling: u32,
    /// Host: how long a worker polls before it sleeps, now (`atoll status`).
    pub poll_window_us: u32,
    /// Host: delegated calls taken in the last whole second.
    pub calls_per_s: u32,
    /// Host, at RUN: 1 to run the program at CPL 0 (`atoll run --hrt`, in
    /// an enclave created with `--hrt`); its forked children inherit it.
    pub kernel_mode: u32,
    /// LWK: a bit per slot it posted a call in, set after the slot's
    /// REQUEST; a worker clears the bit, then claims the slot. A polling
    /// worker reads these words instead of every slot's state.
    pub posted: [u64; SLOT_WORDS],
    /// START: Linux's CLOCK_REALTIME when it sent START.
    pub realtime_ns: u64,
    /// Host: the CPUs asked for (0: cpu_count); LWK: those it uses.
    pub cpus: u64,
    /// LWK: memory mapped for it (pages and reserved ranges).
    pub mem_bytes: u64,
    /// LWK: its TSC when it took the create request (`atoll run --stats`
    /// says it, for the start-to-main figure of `make bench-hrt`).
    pub created_tsc: u64,
    /// Host: the command's name.
    pub comm: [CChar; COMM_LEN],
    /// Host: uname's, from `atoll run`'s UTS namespace.
    pub nodename: [CChar; NODENAME_LEN],
    /// Host: the program's and its loader's (REGION_PROGRAM, REGION_LOADER).
    pub file: [FileName; 2],
    pub region: [Region; MAX_REGIONS],
    pub slot: [Slot; MAX_SLOTS],
}

// ---- ioctls on /dev/atoll ----

/// EnclaveInfo.state.
pub const ENCLAVE_BOOTING: u32 = 1;
pub const ENCLAVE_RUNNING: u32 = 2;
pub const ENCLAVE_CRASHED: u32 = 3;
pub const ENCLAVE_STOPPED: u32 = 4;

/// Phases of create, for the Table 5 benchmark.
pub const PHASE_CPUS: usize = 0;
pub const PHASE_MEMORY: usize = 1;
pub const PHASE_LOAD: usize = 2;
pub const PHASE_BOOT: usize = 3;
pub const PHASES: usize = 4;
/// Phases of destroy.
pub const DPHASE_STOP: usize = 0;
pub const DPHASE_CPUS: usize = 1;
pub const DPHASE_MEMORY: usize = 2;
pub const DPHASES: usize = 3;

/// Create.hrt, EnclaveInfo.hrt: who may run kernel-mode programs in an
/// enclave (`atoll run --hrt`). Code at CPL 0 reaches all memory, so each
/// is as trusted as root: no one; root (`atoll create --hrt`); root and the
/// enclave's owner user and group (`--hrt --hrt-users`).
pub const HRT_NONE: u32 = 0;
pub const HRT_ROOT: u32 = 1;
pub const HRT_OWNER: u32 = 2;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Create {
    pub hdr: Header,
    /// In.
    pub name: [CChar; NAME_LEN],
    /// Linux CPU numbers; empty: pick cpu_count.
    pub cpus: [u64; HOST_CPU_WORDS],
    pub cpu_count: u32,
    pub boot_timeout_ms: u32,
    pub mem_bytes: u64,
    /// User address of the flat image (file bytes).
    pub image_ptr: u64,
    pub image_size: u64,
    /// With bss: zeroed past image_size.
    pub image_mem_size: u64,
    /// kernel_entry64, from the image start.
    pub entry_offset: u64,
    pub trampoline_offset: u64,
    pub trampoline_size: u64,
    pub cmdline: [CChar; CMDLINE_LEN],
    /// Who may use it (IOC_CHOWN).
    pub owner_uid: u32,
    /// NO_GROUP: its owner alone.
    pub owner_gid: u32,
    /// The nice of its programs' servers on Linux (`atoll run`); 0 leaves theirs.
    pub serve_nice: i32,
    /// HRT_*: who may run kernel-mode programs in it.
    pub hrt: u32,
    /// Out.
    pub id: u32,
    pub mem_count: u32,
    pub taken_cpus: [u64; HOST_CPU_WORDS],
    pub mem: [MemRange; MAX_MEM_RANGES],
    pub phase_ns: [u64; PHASES],
    pub error: [CChar; ERROR_LEN],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct EnclaveInfo {
    pub hdr: Header,
    /// In: the index-th enclave (0, 1, ...).
    pub index: u32,
    /// Out.
    pub id: u32,
    /// Out: ENCLAVE_*.
    pub state: u32,
    pub cpu_count: u32,
    pub mem_count: u32,
    /// As Create's.
    pub serve_nice: i32,
    pub name: [CChar; NAME_LEN],
    pub cpus: [u64; HOST_CPU_WORDS],
    pub mem: [MemRange; MAX_MEM_RANGES],
    pub uptime_ns: u64,
    pub phase_ns: [u64; PHASES],
    /// From the channel header.
    pub lwk_free_bytes: u64,
    pub lwk_total_bytes: u64,
    /// Programs bound to it.
    pub programs: u32,
    /// Resizes so far; the last RESIZE_HISTORY are in resize[].
    pub resizes: u32,
    /// Oldest first.
    pub resize: [ResizeEvent; RESIZE_HISTORY],
    /// The LWK's CPU indices in use, a bit each.
    pub lwk_cpus: u64,
    pub owner_uid: u32,
    pub owner_gid: u32,
    /// The caller may use it; if not, only id, state, name and owner are filled.
    pub yours: u32,
    /// HRT_*.
    pub hrt: u32,
}

/// IOC_CHOWN (root only, as are create, destroy, resizing and noise
/// probes): who may use an enclave. Its owner user and the members of its
/// owner group may run programs in it, read its console and status, ping it
/// and message it; nobody else but root (CAP_SYS_ADMIN) may. uid and gid
/// are in the caller's user namespace; gid NO_GROUP: no group, the owner
/// alone.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Chown {
    pub hdr: Header,
    pub id: u32,
    pub uid: u32,
    pub gid: u32,
    pub pad0: u32,
    pub error: [CChar; ERROR_LEN],
}

/// Resizing a running enclave (atoll add / atoll remove). Memory: the host
/// offlines blocks as at create and sends MEM_ADD for each; the LWK maps it
/// and gives it to its frame allocator (its bitmap in the block's first
/// frames). MEM_REMOVE asks for a block back: the LWK gives it only if none
/// of its frames is in use (else -EBUSY, and it keeps it), unmaps it and
/// flushes every CPU's TLB before it answers; only then does Linux online
/// it. A missing or refused answer leaves the enclave and Linux as they
/// were.
///
/// CPUs: the host offlines a CPU as at create, picks the lowest free LWK CPU
/// index for it and lends Linux's trampoline page (with page tables below 4
/// GiB that map it and the enclave's memory); CPU_ADD has the LWK start the
/// CPU exactly as its boot CPU started the others. CPU_REMOVE asks the LWK
/// to move every thread away from one of its CPUs (their affinity follows)
/// and park it; only after CPU_REMOVED does the host INIT it and give it to
/// Linux. The LWK's boot CPU (index 0) hears the host's messages and is
/// never removed.
pub const RESIZE_ADD_MEM: u32 = 1;
pub const RESIZE_REMOVE_MEM: u32 = 2;
pub const RESIZE_ADD_CPUS: u32 = 3;
pub const RESIZE_REMOVE_CPUS: u32 = 4;
/// The last resizes atoll status shows.
pub const RESIZE_HISTORY: usize = 16;
/// Host: u64 phys, u64 bytes: a block to use.
pub const KMSG_MEM_ADD: u16 = 47;
/// LWK: u64 phys, s64 0 or -errno.
pub const KMSG_MEM_ADDED: u16 = 48;
/// Host: u64 phys, u64 bytes: give it back if unused.
pub const KMSG_MEM_REMOVE: u16 = 49;
/// LWK: u64 phys, s64 0 or -EBUSY; no CPU maps it now.
pub const KMSG_MEM_REMOVED: u16 = 50;
/// Host: u64 LWK index, APIC id, trampoline page, its CR3.
pub const KMSG_CPU_ADD: u16 = 51;
/// LWK: u64 index, s64 0 or -errno: it runs (or never will).
pub const KMSG_CPU_ADDED: u16 = 52;
/// Host: u64 LWK index: move its threads, park it.
pub const KMSG_CPU_REMOVE: u16 = 53;
/// LWK: u64 index, s64 0 or -errno: it is parked.
pub const KMSG_CPU_REMOVED: u16 = 54;

/// IOC_RESIZE.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Resize {
    pub hdr: Header,
    pub id: u32,
    /// RESIZE_*.
    pub op: u32,
    /// Memory to add or remove (whole blocks).
    pub bytes: u64,
    /// Linux CPUs; empty: cpu_count of them; out: done.
    pub cpus: [u64; HOST_CPU_WORDS],
    pub cpu_count: u32,
    pub pad0: u32,
    /// Out: Linux's part (offlining or onlining).
    pub linux_ns: u64,
    /// Out: the LWK's part (until its answers came).
    pub lwk_ns: u64,
    pub error: [CChar; ERROR_LEN],
}

/// One resize, as the enclave's history keeps it.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResizeEvent {
    /// Since the enclave was created.
    pub at_ns: u64,
    pub op: u32,
    /// 0 or -errno.
    pub result: i32,
    /// Bytes, or the Linux CPUs (a bit each, CPUs 0-63).
    pub amount: u64,
    pub linux_ns: u64,
    pub lwk_ns: u64,
}

/// OS noise probes (atoll noise). Selfish detour: the LWK spins on one of
/// its CPUs reading the TSC for duration_ns and records every gap longer
/// than threshold_ns (a detour) with the interrupts that CPU took during
/// it. A detour with none is not the LWK's doing: the hardware or the
/// hypervisor took the CPU. FWQ (fixed work quanta): a piece of work that
/// takes about threshold_ns undisturbed, repeated for duration_ns; each
/// listed entry is one quantum (len_ns: how long it took). FTQ (fixed time
/// quanta): quanta of threshold_ns; each entry's len_ns is the work units
/// done in it. The probe holds the CPU for its duration.
pub const NOISE_SELFISH: u32 = 1;
pub const NOISE_FWQ: u32 = 2;
pub const NOISE_FTQ: u32 = 3;
/// Detours listed one by one; all are counted.
pub const NOISE_MAX_LISTED: usize = 2000;
/// Host: a [`NoiseRun`].
pub const KMSG_NOISE_RUN: u16 = 55;
/// LWK: a [`NoiseResult`], its listed detours.
pub const KMSG_NOISE_DONE: u16 = 56;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct NoiseRun {
    pub cookie: u64,
    /// LWK CPU index.
    pub cpu: u32,
    /// NOISE_*.
    pub probe: u32,
    pub duration_ns: u64,
    pub threshold_ns: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoiseDetour {
    /// Since the probe began.
    pub at_ns: u64,
    pub len_ns: u64,
    /// Interrupts the CPU took meanwhile.
    pub irqs: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoiseResult {
    pub cookie: u64,
    /// 0 or -errno.
    pub error: i32,
    pub cpu: u32,
    pub duration_ns: u64,
    pub loops: u64,
    pub detours: u64,
    pub total_ns: u64,
    pub max_ns: u64,
    /// Interrupts the CPU took during the probe.
    pub irqs: u64,
    /// Detours during which it took one.
    pub kernel_detours: u64,
    pub kernel_ns: u64,
    pub kernel_max_ns: u64,
    /// Detours that follow, the first ones.
    pub listed: u32,
    pub pad0: u32,
}

/// IOC_NOISE: runs a probe on one of an enclave's CPUs and waits for it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct NoiseReq {
    pub hdr: Header,
    pub id: u32,
    /// LWK CPU index.
    pub cpu: u32,
    pub probe: u32,
    pub pad0: u32,
    pub duration_ns: u64,
    pub threshold_ns: u64,
    /// Room for NOISE_MAX_LISTED [`NoiseDetour`]s.
    pub detours_ptr: u64,
    /// Out.
    pub result: NoiseResult,
    pub error: [CChar; ERROR_LEN],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ConsoleRead {
    pub hdr: Header,
    pub id: u32,
    pub pad0: u32,
    /// In: stream position; out: position of the first byte copied.
    pub offset: u64,
    pub buf_ptr: u64,
    pub buf_len: u64,
    /// Out.
    pub copied: u64,
    /// Out: bytes the LWK has written in all.
    pub head: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Ping {
    pub hdr: Header,
    pub id: u32,
    /// 0: from Linux; else from that enclave's LWK, directly.
    pub from_id: u32,
    /// Out.
    pub rtt_ns: u64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct KmsgCheckReq {
    pub hdr: Header,
    pub id: u32,
    pub count: u32,
    pub min_len: u32,
    pub max_len: u32,
    /// CHECK_* bits.
    pub directions: u32,
    pub pad1: u32,
    /// Out: Linux -> LWK, as the LWK counted them.
    pub to_messages: u64,
    pub to_bad: u64,
    pub to_bytes: u64,
    pub to_ns: u64,
    /// Out: LWK -> Linux, as Linux counted them.
    pub from_messages: u64,
    /// Wrong checksum, length, sender or order.
    pub from_bad: u64,
    pub from_bytes: u64,
    pub from_ns: u64,
    /// Times an LWK sender found the ring full.
    pub from_waits: u64,
    pub from_senders: u32,
    pub pad0: u32,
    pub error: [CChar; ERROR_LEN],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Destroy {
    pub hdr: Header,
    pub id: u32,
    /// Nonzero: do not wait for a hung or crashed LWK.
    pub force: u32,
    pub phase_ns: [u64; DPHASES],
    pub pad0: u64,
    pub error: [CChar; ERROR_LEN],
}

/// IOC_RUN: create the program's address space in enclave id.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Run {
    pub hdr: Header,
    pub id: u32,
    /// 0: every enclave CPU.
    pub cpu_count: u32,
    pub region_count: u32,
    /// Out.
    pub pid: u32,
    /// 1: at CPL 0 (`atoll run --hrt`), if the enclave's HRT_* lets the caller.
    pub kernel_mode: u32,
    pub pad0: u32,
    pub brk_start: u64,
    /// Bit per LWK CPU the threads use; 0: cpu_count of them.
    pub cpus: u64,
    /// Out: the LWK's TSC when it took the request (Proc.created_tsc).
    pub created_tsc: u64,
    /// The command's name, for listings.
    pub comm: [CChar; COMM_LEN],
    pub region: [Region; MAX_REGIONS],
    /// The program's and its loader's, for /proc/<pid>/maps.
    pub file: [FileName; 2],
    pub error: [CChar; ERROR_LEN],
}

/// IOC_START: run the loaded program.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Start {
    pub hdr: Header,
    pub entry: u64,
    pub stack_pointer: u64,
}

/// Call.event: slot, kind, tid, nr, args: perform it.
pub const EVENT_CALL: u32 = 1;
/// wait_status.
pub const EVENT_EXITED: u32 = 2;
/// The LWK crashed; the program is gone.
pub const EVENT_CRASHED: u32 = 3;

/// IOC_CALL: finish one delegated call (done_slot >= 0; the module sets
/// done_slot to -1 once ret is delivered, so a retried ioctl after EINTR
/// does not deliver it twice), then wait for the next call or the
/// program's end.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Call {
    pub hdr: Header,
    /// In/out.
    pub done_slot: i32,
    /// Out.
    pub event: u32,
    /// In.
    pub done_ret: i64,
    /// Out.
    pub slot: u32,
    pub kind: u32,
    pub tid: u32,
    pub wait_status: u32,
    pub nr: u64,
    pub args: [u64; 6],
}

/// IOC_PROGRAMS: the programs in enclave id (areas not PROC_FREE).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ProgramInfo {
    /// In the LWK.
    pub pid: u32,
    /// `atoll run` on Linux.
    pub host_pid: u32,
    /// PROC_*.
    pub state: u32,
    pub threads: u32,
    /// Bit per LWK CPU.
    pub cpus: u64,
    pub mem_bytes: u64,
    /// Its server's polling window now.
    pub poll_window_us: u32,
    /// Delegated calls in the last whole second.
    pub calls_per_s: u32,
    /// 1: it runs at CPL 0.
    pub kernel_mode: u32,
    pub pad0: u32,
    pub comm: [CChar; COMM_LEN],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Programs {
    pub hdr: Header,
    /// In.
    pub id: u32,
    /// Out.
    pub count: u32,
    pub program: [ProgramInfo; MAX_PROGRAMS],
}

/// IOC_ADOPT: binds this file to the program the LWK forked into area
/// (state PROC_LOADED, pid as given); then the mirror and IOC_START (entry
/// and stack pointer ignored: the child goes on from the fork).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Adopt {
    pub hdr: Header,
    /// Enclave.
    pub id: u32,
    pub area: u32,
    pub pid: u32,
    pub pad0: u32,
    /// The one CALL_FORK handed the parent's worker (args[2]).
    pub token: u64,
    pub error: [CChar; ERROR_LEN],
}

/// IOC_KILL: end the program as if by this signal.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Kill {
    pub hdr: Header,
    pub signal: u32,
    pub pad0: u32,
}

/// Fresh, zeroed shared structs with their header filled in.
macro_rules! zeroed_with_header {
    ($($ty:ident => $magic:ident),* $(,)?) => {$(
        impl $ty {
            // No Default: new() fills in the header, which must not be zero.
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                // SAFETY: the struct is plain integers and byte arrays, for
                // which all-zero is a valid value.
                let mut v: Self = unsafe { core::mem::zeroed() };
                v.hdr = Header::new($magic, core::mem::size_of::<Self>());
                v
            }
        }
    )*};
}

zeroed_with_header!(
    BootParams => MAGIC_BOOT, Status => MAGIC_STATUS, KmsgRing => MAGIC_KMSG, Create => MAGIC_CREATE,
    EnclaveInfo => MAGIC_INFO, ConsoleRead => MAGIC_CONSREAD, Ping => MAGIC_PING,
    Destroy => MAGIC_DESTROY, Proc => MAGIC_PROC, Run => MAGIC_RUN, Start => MAGIC_START,
    Call => MAGIC_CALL, Kill => MAGIC_KILL, KmsgCheckReq => MAGIC_KCHECK,
    KmsgBenchReq => MAGIC_KBENCH, MsgIo => MAGIC_MSG, Programs => MAGIC_PROGRAMS, Adopt => MAGIC_ADOPT,
    KmsgMcastReq => MAGIC_MCAST, XememIo => MAGIC_XEMEM, XememList => MAGIC_XLIST,
    Resize => MAGIC_RESIZE, NoiseReq => MAGIC_NOISE, Chown => MAGIC_CHOWN,
);

/// The ioctls on /dev/atoll, but for KMSG_CHECK, KMSG_BENCH and
/// KMSG_MCAST: those are the test module's (atoll_test.ko), on
/// /dev/atoll-test; atoll.ko answers them with -ENOTTY.
pub const IOC_MAGIC: u32 = 0xA7;

/// Linux's `_IOWR(IOC_MAGIC, nr, T)`.
const fn iowr<T>(nr: u32) -> u32 {
    (3 << 30) | ((core::mem::size_of::<T>() as u32) << 16) | (IOC_MAGIC << 8) | nr
}

// The generator (scripts/abi-header.sh) writes each of these, one a line in
// this form, as `#define ATOLL_IOC_X _IOWR(ATOLL_IOC_MAGIC, nr, struct ...)`.
pub const IOC_CREATE: u32 = iowr::<Create>(1);
pub const IOC_INFO: u32 = iowr::<EnclaveInfo>(2);
pub const IOC_CONSOLE: u32 = iowr::<ConsoleRead>(3);
pub const IOC_PING: u32 = iowr::<Ping>(4);
pub const IOC_DESTROY: u32 = iowr::<Destroy>(5);
pub const IOC_RUN: u32 = iowr::<Run>(6);
pub const IOC_START: u32 = iowr::<Start>(7);
pub const IOC_CALL: u32 = iowr::<Call>(8);
pub const IOC_KILL: u32 = iowr::<Kill>(9);
pub const IOC_KMSG_CHECK: u32 = iowr::<KmsgCheckReq>(10);
pub const IOC_KMSG_BENCH: u32 = iowr::<KmsgBenchReq>(11);
pub const IOC_MSG_SEND: u32 = iowr::<MsgIo>(12);
pub const IOC_MSG_RECV: u32 = iowr::<MsgIo>(13);
pub const IOC_KMSG_MCAST: u32 = iowr::<KmsgMcastReq>(14);
pub const IOC_PROGRAMS: u32 = iowr::<Programs>(15);
pub const IOC_ADOPT: u32 = iowr::<Adopt>(16);
/// An execve's new image (regions, brk_start, comm of a [`Run`]).
pub const IOC_EXEC: u32 = iowr::<Run>(17);
pub const IOC_XEMEM: u32 = iowr::<XememIo>(18);
pub const IOC_XEMEM_LIST: u32 = iowr::<XememList>(19);
pub const IOC_RESIZE: u32 = iowr::<Resize>(20);
pub const IOC_NOISE: u32 = iowr::<NoiseReq>(21);
pub const IOC_CHOWN: u32 = iowr::<Chown>(22);

/// A NUL-padded fixed-size string field as text.
pub fn c_str(bytes: &[u8]) -> &str {
    let len = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    core::str::from_utf8(&bytes[..len]).unwrap_or("")
}

/// Copies `s` into a fixed-size field, NUL-padded; false if it does not fit
/// (one byte stays for the terminating NUL).
pub fn set_c_str(field: &mut [u8], s: &str) -> bool {
    if s.len() >= field.len() {
        return false;
    }
    field.fill(0);
    field[..s.len()].copy_from_slice(s.as_bytes());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_messages_verify_and_damage_shows() {
        let mut m = [0u8; 100];
        kmsg_check_fill(&mut m, 3, 77);
        assert_eq!(kmsg_check_verify(&m), Some((3, 77)));
        assert_eq!(kmsg_check_verify(&m[..KMSG_CHECK_HEAD]), None, "sum of the full pattern");
        for i in [0, 4, 8, 16, 99] {
            let mut bad = m;
            bad[i] ^= 1;
            assert_eq!(kmsg_check_verify(&bad), None, "byte {i} flipped");
        }
        assert_eq!(kmsg_check_verify(&m[..10]), None);
    }

    #[test]
    fn bench_modes_go_alone_or_take_turns() {
        let expected: [&[u64]; 4] =
            [&[BENCH_LINE], &[BENCH_IPI, BENCH_KMSG_IPI], &[BENCH_KMSG_POLL], &[BENCH_SLOT_POLL]];
        let mut count = 0;
        for ((modes, n), want) in bench_groups().zip(expected) {
            assert_eq!(&modes[..n], want);
            count += 1;
        }
        assert_eq!((count, bench_groups().count()), (4, 4));
    }
}
