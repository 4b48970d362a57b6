//! The Rust side of `abi/atoll_abi.h`: every struct that crosses a boundary
//! between the host module, the LWK and the CLI. `tests/layout.rs` compiles
//! the C header and fails when the two sides disagree on any size or offset.

#![no_std]

mod bytes;
mod noise_bytes;
mod noise_work;
pub mod syscalls;
mod xemem_bytes;
pub use noise_bytes::{NOISE_DETOUR_BYTES, NOISE_RESULT_BYTES, NOISE_RUN_BYTES};
pub use noise_work::{noise_units_for, noise_units_within, noise_work};
pub use xemem_bytes::{
    XEMEM_EVENT_BYTES, XEMEM_IO_BYTES, XEMEM_REPLY_BYTES, XEMEM_REQ_BYTES, XEMEM_RUN_BYTES,
};

pub const ABI_VERSION: u32 = 22;

pub const MAX_CPUS: usize = 64;
pub const HOST_CPU_WORDS: usize = 4;
pub const MAX_MEM_RANGES: usize = 16;
pub const NAME_LEN: usize = 32;
pub const CMDLINE_LEN: usize = 512;
pub const ERROR_LEN: usize = 256;

pub const MAGIC_BOOT: u32 = 0x5042_5441;
pub const MAGIC_STATUS: u32 = 0x5053_5441;
pub const MAGIC_KMSG: u32 = 0x474d_5441;
pub const MAGIC_CONSOLE: u32 = 0x4e43_5441;
pub const MAGIC_CREATE: u32 = 0x5243_5441;
pub const MAGIC_INFO: u32 = 0x4e49_5441;
pub const MAGIC_KCHECK: u32 = 0x4b43_5441;
pub const MAGIC_KBENCH: u32 = 0x424b_5441;
pub const MAGIC_MSG: u32 = 0x474d_5541;
pub const MAGIC_MCAST: u32 = 0x434d_5441;
pub const MAGIC_CONSREAD: u32 = 0x4452_5441;
pub const MAGIC_PING: u32 = 0x4750_5441;
pub const MAGIC_DESTROY: u32 = 0x5344_5441;
pub const MAGIC_PROC: u32 = 0x5250_5441;
pub const MAGIC_RUN: u32 = 0x4e52_5441;
pub const MAGIC_START: u32 = 0x5453_5441;
pub const MAGIC_CALL: u32 = 0x4c43_5441;
pub const MAGIC_KILL: u32 = 0x4c4b_5441;
pub const MAGIC_PROGRAMS: u32 = 0x5350_5441;
pub const MAGIC_ADOPT: u32 = 0x4441_5441;
pub const MAGIC_XEMEM: u32 = 0x4d58_5441;
pub const MAGIC_XLIST: u32 = 0x4c58_5441;
pub const MAGIC_RESIZE: u32 = 0x5a52_5441;
pub const MAGIC_NOISE: u32 = 0x5a4e_5441;
pub const MAGIC_CHOWN: u32 = 0x4f43_5441;
/// An owner gid meaning "no group": the owner alone may use the enclave.
pub const NO_GROUP: u32 = 0xffff_ffff;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub magic: u32,
    pub version: u32,
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
    pub start: u64,
    pub size: u64,
}

// ---- Boot (host module -> LWK) ----

pub const BOOT_KIND_PVH: u64 = 1;
pub const BOOT_KIND_COKERNEL: u64 = 2;

pub const BOOT_PARAMS_OFFSET: u64 = 0x0;
pub const STATUS_OFFSET: u64 = 0x1000;
pub const STATUS_SIZE: u64 = 0x1000;
pub const BENCH_LINE_OFFSET: u64 = 0x2000;
pub const CONSOLE_OFFSET: u64 = 0x10000;
pub const CONSOLE_SIZE: u64 = 0x40000;
pub const KMSG_TO_LWK_OFFSET: u64 = 0x5_0000;
pub const KMSG_TO_HOST_OFFSET: u64 = 0x9_1000;
pub const KMSG_AREA_SIZE: u64 = 0x4_1000;
pub const PROC_OFFSET: u64 = 0x10_0000;
pub const PROC_AREA_SIZE: u64 = 0x5000;
pub const MAX_PROGRAMS: usize = 128;
pub const PROC_SIZE: u64 = PROC_AREA_SIZE * MAX_PROGRAMS as u64;
pub const SHARED_SIZE: u64 = 0x40_0000;
pub const IMAGE_OFFSET: u64 = SHARED_SIZE;

pub const LWK_VECTOR: u8 = 0xf2;
pub const HOST_VECTOR: u8 = 0xf7;
pub const DONE_VECTOR: u8 = 0xf4;
pub const BENCH_VECTOR: u8 = 0xf6;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct BootParams {
    pub hdr: Header,
    pub enclave_id: u32,
    pub cpu_count: u32,
    pub mem_count: u32,
    pub host_apic_id: u32,
    pub x2apic: u32,
    pub pad0: u32,
    pub tsc_khz: u64,
    pub lapic_phys: u64,
    pub trampoline_phys: u64,
    pub boot_cr3: u64,
    pub shared_phys: u64,
    pub shared_size: u64,
    pub status_phys: u64,
    pub console_phys: u64,
    pub console_size: u64,
    pub image_phys: u64,
    pub image_size: u64,
    pub apic_ids: [u32; MAX_CPUS],
    pub mem: [MemRange; MAX_MEM_RANGES],
    pub cmdline: [u8; CMDLINE_LEN],
}

pub const TRAMPOLINE_SLOTS: usize = 8;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TrampolineSlots {
    pub cr3: u64,
    pub stack: u64,
    pub entry: u64,
    pub arg0: u64,
    pub arg1: u64,
}

// ---- Console ring ----

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Console {
    pub hdr: Header,
    pub capacity: u64,
    pub head: u64,
}

// ---- Status page ----

pub const LWK_BOOTING: u32 = 0;
pub const LWK_RUNNING: u32 = 1;
pub const LWK_CRASHED: u32 = 2;
pub const LWK_STOPPED: u32 = 3;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Status {
    pub hdr: Header,
    pub lwk_state: u32,
    pub online_cpus: u32,
    pub panic_cpu: u32,
    pub pad0: u32,
    pub free_bytes: u64,
    pub total_bytes: u64,
}

// ---- Inter-kernel messages (the design is described in atoll_abi.h) ----

pub const KMSG_SLOT_SIZE: usize = 64;
pub const KMSG_HEAD_DATA: usize = 48;
pub const KMSG_SLOT_DATA: usize = 56;
pub const KMSG_MAX_LEN: usize = 65536;
pub const KMSG_MAX_TYPES: usize = 64;
pub const KMSG_MAX_READERS: usize = 32;
pub const KMSG_RING_SLOTS: u32 = 4096;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmsgHead {
    pub kind: u16, // `type` in C
    pub slots: u16,
    pub len: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KmsgSlot {
    pub stamp: u32,
    pub readers: u32,
    pub data: [u8; KMSG_SLOT_SIZE - 8],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct KmsgRing {
    pub hdr: Header,
    pub slots: u32,
    pub receivers: u32,
    pub pad0: [u32; 10],
    pub head: u32,
    pub pad1: [u32; 15],
    pub tail: u32,
    pub pad2: [u32; 15],
    pub polling: u32,
    pub pad3: [u32; 15],
}

/// Bytes of a ring with this many slots.
pub const fn kmsg_ring_bytes(slots: u32) -> usize {
    core::mem::size_of::<KmsgRing>() + slots as usize * core::mem::size_of::<KmsgSlot>()
}

pub const KMSG_BOOTED: u16 = 1;
pub const KMSG_PING: u16 = 2;
pub const KMSG_PONG: u16 = 3;
pub const KMSG_SHUTDOWN: u16 = 4;
pub const KMSG_STOPPED: u16 = 5;
pub const KMSG_PANIC: u16 = 6;
pub const KMSG_PROC_CREATE: u16 = 7;
pub const KMSG_PROC_CREATED: u16 = 8;
pub const KMSG_PROC_START: u16 = 9;
pub const KMSG_PROC_KILL: u16 = 10;
pub const KMSG_PROC_EXIT: u16 = 11;
pub const KMSG_PROC_RELEASE: u16 = 12;
pub const KMSG_PROC_FREED: u16 = 13;
pub const KMSG_CALL_POSTED: u16 = 14;
pub const KMSG_CALL_CANCEL: u16 = 38;
pub const KMSG_PROC_EXEC: u16 = 39;
pub const KMSG_PROC_EXECED: u16 = 40;
pub const KMSG_PAGE_WANTED: u16 = 59;
pub const KMSG_PAGE_READY: u16 = 60;
pub const CANCEL_SIGNAL: i32 = 64;
pub const KMSG_CHECK: u16 = 15;
pub const KMSG_CHECK_START: u16 = 16;
pub const KMSG_CHECK_DONE: u16 = 17;
pub const KMSG_CHECK_END: u16 = 18;
pub const KMSG_CHECK_REPORT: u16 = 19;
pub const KMSG_PEER_ADD: u16 = 20;
pub const KMSG_PEER_ADDED: u16 = 21;
pub const KMSG_PEER_REMOVE: u16 = 22;
pub const KMSG_PEER_REMOVED: u16 = 23;
pub const KMSG_PEER_PING: u16 = 24;
pub const KMSG_PEER_PONG: u16 = 25;
pub const KMSG_PEER_TRUST: u16 = 57;
pub const KMSG_PEER_TRUSTED: u16 = 58;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmsgPeer {
    pub peer_id: u32,
    pub notify_apic_id: u32,
    pub block_phys: u64,
    pub block_size: u64,
    pub out_offset: u64,
    pub in_offset: u64,
    pub slots: u32,
    pub programs_talk: u32,
    pub line_offset: u64,
}

pub const KMSG_GROUP_JOIN: u16 = 33;
pub const KMSG_GROUP_JOINED: u16 = 34;
pub const KMSG_GROUP_LEAVE: u16 = 35;
pub const KMSG_GROUP_LEFT: u16 = 36;
pub const MCAST_MAX: usize = 8;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmsgGroup {
    pub group: u32,
    pub index: u32,
    pub count: u32,
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
    pub mcast_ns: u64,
    pub unicast_ns: u64,
    pub received: [u64; MCAST_MAX],
    pub bad: [u64; MCAST_MAX],
    pub error: [u8; ERROR_LEN],
}

pub const SYS_MSG_SEND: u64 = 1000;
pub const SYS_MSG_RECV: u64 = 1001;
pub const MSG_MAX: usize = 4096;
pub const MSG_PORTS: usize = 256;
pub const MSG_QUEUE: usize = 64;
pub const MSG_USER_BYTES: usize = 4 << 20;
pub const KERNEL_LINUX: u32 = 0;
pub const KMSG_USER: u16 = 32;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UserMsg {
    pub dest_port: u16,
    pub src_port: u16,
    pub len: u32,
    pub area: u32,
    pub pad0: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsgFrom {
    pub kernel: u32,
    pub port: u32,
}

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

/// XEMEM: segments shared between programs on the node (atoll_abi.h).
pub const SYS_XEMEM: u64 = 1002;
pub const XEMEM_NAME_LEN: usize = 64;
pub const XEMEM_MAKE: u32 = 1;
pub const XEMEM_REMOVE: u32 = 2;
pub const XEMEM_GET: u32 = 3;
pub const XEMEM_RELEASE: u32 = 4;
pub const XEMEM_ATTACH: u32 = 5;
pub const XEMEM_DETACH: u32 = 6;
pub const XEMEM_LOOKUP: u32 = 7;
pub const XEMEM_ENDED: u32 = 8;
pub const XEMEM_SIGNAL: u32 = 9;
pub const XEMEM_WAIT: u32 = 10;
pub const XEMEM_CANCEL: u32 = 11;
pub const XEMEM_KEEP: u32 = 12;
pub const XEMEM_RDONLY: u32 = 1;
pub const XEMEM_RDWR: u32 = 2;
pub const KMSG_XEMEM_REQ: u16 = 41;
pub const KMSG_XEMEM_REPLY: u16 = 42;
pub const KMSG_XEMEM_REVOKE: u16 = 43;
pub const KMSG_XEMEM_REVOKED: u16 = 44;
pub const KMSG_XEMEM_UNPIN: u16 = 45;
pub const KMSG_XEMEM_EVENT: u16 = 46;
pub const KMSG_XEMEM_HOME: u16 = 61;
pub const XEMEM_REPLY_RUNS: usize = 4000;
pub const XEMEM_ELSEWHERE: i64 = 1;
pub const XEMEM_HASH_SEED: u64 = 0xcbf2_9ce4_8422_2325;
pub const XEMEM_HASH_PRIME: u64 = 0x100_0000_01b3;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct XememIo {
    pub hdr: Header,
    pub op: u32,
    pub mode: u32,
    pub segid: i64,
    pub apid: i64,
    pub vaddr: u64,
    pub size: u64,
    pub offset: u64,
    pub flags: u32,
    pub timeout_ms: i32,
    pub name: [u8; XEMEM_NAME_LEN],
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct XememReq {
    pub id: u64,
    pub area: u32,
    pub pid: u32,
    pub pin: u64,
    pub runs_hash: u64,
    pub root: u64,
    pub attachment: u64,
    pub io: XememIo,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XememRun {
    pub phys: u64,
    pub len: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct XememEvent {
    pub id: u64,
    pub segid: i64,
    pub cancel: u64,
    pub op: u32,
    pub kernel: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct XememReply {
    pub id: u64,
    pub result: i64,
    pub value: i64,
    pub writable: u32,
    pub last: u32,
    pub count: u32,
    pub pad0: u32,
}

pub const XEMEM_LIST_SEGS: usize = 64;
pub const XEMEM_LIST_ATTS: usize = 128;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct XememSegInfo {
    pub segid: i64,
    pub size: u64,
    pub kernel: u32,
    pub pid: u32,
    pub uid: u32,
    pub mode: u32,
    pub grants: u32,
    pub attachments: u32,
    pub flags: u32,
    pub pad0: u32,
    pub name: [u8; XEMEM_NAME_LEN],
}

pub const XEMEM_SEG_KEPT: u32 = 0x1;
pub const XEMEM_SEG_OWNER_ENDED: u32 = 0x2;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct XememAttInfo {
    pub id: u64,
    pub segid: i64,
    pub offset: u64,
    pub size: u64,
    pub kernel: u32,
    pub pid: u32,
    pub writable: u32,
    pub revoked: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct XememList {
    pub hdr: Header,
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

pub const BENCH_LINE: u64 = 1;
pub const BENCH_IPI: u64 = 2;
pub const BENCH_KMSG_IPI: u64 = 3;
pub const BENCH_KMSG_POLL: u64 = 4;
pub const BENCH_SLOT_POLL: u64 = 5;
pub const BENCH_MODES: usize = 5;
/// Modes timed together, taking turns round by round (atoll_abi.h).
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
pub const KMSG_BENCH_RESPOND: u16 = 26;
pub const KMSG_BENCH_READY: u16 = 27;
pub const KMSG_BENCH_DONE: u16 = 28;
pub const KMSG_BENCH_RUN: u16 = 29;
pub const KMSG_BENCH_RESULT: u16 = 30;
pub const KMSG_BENCH_ECHO: u16 = 31;
pub const KMSG_BENCH_SINK: u16 = 37;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BenchFigure {
    pub median_ns: u64,
    pub min_ns: u64,
    pub p90_ns: u64,
    pub error: i64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct KmsgBenchReq {
    pub hdr: Header,
    pub id: u32,
    pub from_id: u32,
    pub rounds: u32,
    pub stream_size: u32,
    pub mode: [BenchFigure; BENCH_MODES],
    pub stream_ns: u64,
    pub memcpy_ns: u64,
    pub error: [u8; ERROR_LEN],
}

pub const CHECK_TO_LWK: u32 = 1;
pub const CHECK_FROM_LWK: u32 = 2;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmsgCheck {
    pub sender: u32,
    pub seq: u32,
    pub sum: u32,
    pub pad0: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KmsgCheckStart {
    pub count: u32,
    pub min_len: u32,
    pub max_len: u32,
    pub pad0: u32,
}

/// FNV-1a, 32 bit: the checksum of a check message's pattern bytes.
pub fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| (h ^ b as u32).wrapping_mul(0x0100_0193))
}

/// Bytes before a check message's pattern.
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

// ---- Programs (the protocol is described in atoll_abi.h) ----

pub const USER_START: u64 = 0x10_0000;
pub const USER_END: u64 = 0x4000_0000_0000;
pub const PIE_BASE: u64 = 0x4000_0000;
pub const MMAP_BASE: u64 = 0x1000_0000_0000;
pub const STACK_TOP: u64 = 0x3fff_ffe0_0000;
pub const STACK_SIZE: u64 = 0x80_0000;
pub const VDSO_BASE: u64 = 0xfff_fff0_0000;
pub const VDSO_PAGES: u64 = 4;

/// The vDSO's data page (atoll_abi.h).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VdsoData {
    pub ns_mult: u64,
    pub realtime_offset_ns: i64,
}
pub const MAX_REGIONS: usize = 16;
pub const MAX_SLOTS: usize = 128;
/// Words of a bitmap with a bit per slot.
pub const SLOT_WORDS: usize = MAX_SLOTS / 64;
pub const COMM_LEN: usize = 16;
/// Linux's host name (65 bytes with its NUL), NUL padded to 72.
pub const NODENAME_LEN: usize = 72;

pub const PROT_READ: u32 = 1;
pub const PROT_WRITE: u32 = 2;
pub const PROT_EXEC: u32 = 4;

pub const PROC_FREE: u32 = 0;
pub const PROC_CREATING: u32 = 1;
pub const PROC_LOADED: u32 = 2;
pub const PROC_RUNNING: u32 = 3;
pub const PROC_EXITED: u32 = 4;

pub const SLOT_IDLE: u32 = 0;
pub const SLOT_REQUEST: u32 = 1;
pub const SLOT_CLAIMED: u32 = 2;
pub const SLOT_DONE: u32 = 3;
pub const FAULT_IDLE: u32 = 0;
pub const FAULT_ASKED: u32 = 1;
pub const FAULT_ANSWERED: u32 = 2;
pub const FAULT_STATE_MASK: u32 = 0xff;

pub const CALL_SYSCALL: u32 = 1;
pub const CALL_UNSUPPORTED: u32 = 2;
pub const CALL_FORK: u32 = 3;
pub const CALL_EXEC: u32 = 4;
/// A descriptor `atoll run` keeps for writing a shared file mapping back;
/// the call's nr is one of KEPT_* (atoll_abi.h).
pub const CALL_KEPT_FILE: u32 = 5;
pub const KEPT_KEEP: u64 = 1;
pub const KEPT_WRITE: u64 = 2;
pub const KEPT_DROP: u64 = 3;
/// The name of the file behind a program's descriptor, for
/// /proc/<pid>/maps: its struct stat and path (atoll_abi.h).
pub const CALL_FILE_NAME: u32 = 6;
pub const STAT_SIZE: u64 = 144;
/// open() of a file whose contents the LWK made (atoll_abi.h).
pub const CALL_TEXT_FILE: u32 = 7;
pub const TEXT_OPEN: u64 = 0;
pub const TEXT_MAY_READ: u64 = 1;
pub const MAX_TEXT_FILE: u64 = 16 << 20;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub size: u64,
    pub prot: u32,
    /// REGION_* (atoll_abi.h).
    pub flags: u32,
    /// REGION_PROGRAM, REGION_LOADER: the file offset at `start`.
    pub offset: u64,
}

/// Region.flags: memory comes on first touch, from the touched page up to
/// the region's end (the main stack below its first contents); at most one
/// such region, writable, not executable.
pub const REGION_ON_DEMAND: u32 = 1;
/// Region.flags, for /proc/<pid>/maps: the main stack, or the program's or
/// its loader's segments.
pub const REGION_STACK: u32 = 2;
pub const REGION_PROGRAM: u32 = 4;
pub const REGION_LOADER: u32 = 8;

pub const FILE_PATH_LEN: usize = 512;

/// A file as /proc/<pid>/maps names it (no file: all zero).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileName {
    pub dev: u64,
    pub ino: u64,
    /// Its full path, NUL terminated, cut to fit.
    pub path: [u8; FILE_PATH_LEN],
}

impl Default for FileName {
    fn default() -> Self {
        FileName { dev: 0, ino: 0, path: [0; FILE_PATH_LEN] }
    }
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Slot {
    pub state: u32,
    pub cpu: u32,
    pub kind: u32,
    pub tid: u32,
    pub nr: u64,
    pub args: [u64; 6],
    pub ret: i64,
    pub fault_va: u64,
    pub fault_state: u32,
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
    pub state: u32,
    pub pid: u32,
    pub region_count: u32,
    pub cpu_count: u32,
    pub brk_start: u64,
    pub entry: u64,
    pub stack_pointer: u64,
    pub cr3: u64,
    pub wait_status: u32,
    pub host_pid: u32,
    pub map_generation: u32,
    pub threads: u32,
    /// Host: 1 while a worker polls the slots, so the LWK posts without CALL_POSTED.
    pub polling: u32,
    /// Host: how long a worker polls before it sleeps, now (`atoll status`).
    pub poll_window_us: u32,
    /// Host: delegated calls taken in the last whole second.
    pub calls_per_s: u32,
    pub pad0: u32,
    /// LWK: a bit per slot it posted a call in, set after the slot's
    /// REQUEST; a worker clears the bit, then claims the slot. A polling
    /// worker reads these words instead of every slot's state.
    pub posted: [u64; SLOT_WORDS],
    pub realtime_ns: u64,
    pub cpus: u64,
    pub mem_bytes: u64,
    pub comm: [u8; COMM_LEN],
    pub nodename: [u8; NODENAME_LEN],
    /// The program's and its loader's (REGION_PROGRAM, REGION_LOADER).
    pub file: [FileName; 2],
    pub region: [Region; MAX_REGIONS],
    pub slot: [Slot; MAX_SLOTS],
}

// ---- ioctls on /dev/atoll ----

pub const ENCLAVE_BOOTING: u32 = 1;
pub const ENCLAVE_RUNNING: u32 = 2;
pub const ENCLAVE_CRASHED: u32 = 3;
pub const ENCLAVE_STOPPED: u32 = 4;

pub const PHASES: usize = 4;
pub const DPHASES: usize = 3;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Create {
    pub hdr: Header,
    pub name: [u8; NAME_LEN],
    pub cpus: [u64; HOST_CPU_WORDS],
    pub cpu_count: u32,
    pub boot_timeout_ms: u32,
    pub mem_bytes: u64,
    pub image_ptr: u64,
    pub image_size: u64,
    pub image_mem_size: u64,
    pub entry_offset: u64,
    pub trampoline_offset: u64,
    pub trampoline_size: u64,
    pub cmdline: [u8; CMDLINE_LEN],
    pub owner_uid: u32,
    pub owner_gid: u32,
    /// The nice of its programs' servers on Linux (`atoll run`); 0 leaves theirs.
    pub serve_nice: i32,
    pub pad0: u32,
    pub id: u32,
    pub mem_count: u32,
    pub taken_cpus: [u64; HOST_CPU_WORDS],
    pub mem: [MemRange; MAX_MEM_RANGES],
    pub phase_ns: [u64; PHASES],
    pub error: [u8; ERROR_LEN],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct EnclaveInfo {
    pub hdr: Header,
    pub index: u32,
    pub id: u32,
    pub state: u32,
    pub cpu_count: u32,
    pub mem_count: u32,
    pub serve_nice: i32,
    pub name: [u8; NAME_LEN],
    pub cpus: [u64; HOST_CPU_WORDS],
    pub mem: [MemRange; MAX_MEM_RANGES],
    pub uptime_ns: u64,
    pub phase_ns: [u64; PHASES],
    pub lwk_free_bytes: u64,
    pub lwk_total_bytes: u64,
    pub programs: u32,
    pub resizes: u32,
    pub resize: [ResizeEvent; RESIZE_HISTORY],
    pub lwk_cpus: u64,
    pub owner_uid: u32,
    pub owner_gid: u32,
    /// The caller may use it; if not, only id, state, name and owner are filled.
    pub yours: u32,
    pub pad1: u32,
}

/// ATOLL_IOC_CHOWN: who may use an enclave (root only).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Chown {
    pub hdr: Header,
    pub id: u32,
    pub uid: u32,
    pub gid: u32,
    pub pad0: u32,
    pub error: [u8; ERROR_LEN],
}

pub const RESIZE_ADD_MEM: u32 = 1;
pub const RESIZE_REMOVE_MEM: u32 = 2;
pub const RESIZE_ADD_CPUS: u32 = 3;
pub const RESIZE_REMOVE_CPUS: u32 = 4;
pub const RESIZE_HISTORY: usize = 16;
pub const KMSG_MEM_ADD: u16 = 47;
pub const KMSG_MEM_ADDED: u16 = 48;
pub const KMSG_MEM_REMOVE: u16 = 49;
pub const KMSG_MEM_REMOVED: u16 = 50;
pub const KMSG_CPU_ADD: u16 = 51;
pub const KMSG_CPU_ADDED: u16 = 52;
pub const KMSG_CPU_REMOVE: u16 = 53;
pub const KMSG_CPU_REMOVED: u16 = 54;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Resize {
    pub hdr: Header,
    pub id: u32,
    pub op: u32,
    pub bytes: u64,
    pub cpus: [u64; HOST_CPU_WORDS],
    pub cpu_count: u32,
    pub pad0: u32,
    pub linux_ns: u64,
    pub lwk_ns: u64,
    pub error: [u8; ERROR_LEN],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResizeEvent {
    pub at_ns: u64,
    pub op: u32,
    pub result: i32,
    pub amount: u64,
    pub linux_ns: u64,
    pub lwk_ns: u64,
}

pub const NOISE_SELFISH: u32 = 1;
pub const NOISE_FWQ: u32 = 2;
pub const NOISE_FTQ: u32 = 3;
pub const NOISE_MAX_LISTED: usize = 2000;
pub const KMSG_NOISE_RUN: u16 = 55;
pub const KMSG_NOISE_DONE: u16 = 56;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct NoiseRun {
    pub cookie: u64,
    pub cpu: u32,
    pub probe: u32,
    pub duration_ns: u64,
    pub threshold_ns: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoiseDetour {
    pub at_ns: u64,
    pub len_ns: u64,
    pub irqs: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoiseResult {
    pub cookie: u64,
    pub error: i32,
    pub cpu: u32,
    pub duration_ns: u64,
    pub loops: u64,
    pub detours: u64,
    pub total_ns: u64,
    pub max_ns: u64,
    pub irqs: u64,
    pub kernel_detours: u64,
    pub kernel_ns: u64,
    pub kernel_max_ns: u64,
    pub listed: u32,
    pub pad0: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct NoiseReq {
    pub hdr: Header,
    pub id: u32,
    pub cpu: u32,
    pub probe: u32,
    pub pad0: u32,
    pub duration_ns: u64,
    pub threshold_ns: u64,
    pub detours_ptr: u64,
    pub result: NoiseResult,
    pub error: [u8; ERROR_LEN],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ConsoleRead {
    pub hdr: Header,
    pub id: u32,
    pub pad0: u32,
    pub offset: u64,
    pub buf_ptr: u64,
    pub buf_len: u64,
    pub copied: u64,
    pub head: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Ping {
    pub hdr: Header,
    pub id: u32,
    pub from_id: u32,
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
    pub directions: u32,
    pub pad1: u32,
    pub to_messages: u64,
    pub to_bad: u64,
    pub to_bytes: u64,
    pub to_ns: u64,
    pub from_messages: u64,
    pub from_bad: u64,
    pub from_bytes: u64,
    pub from_ns: u64,
    pub from_waits: u64,
    pub from_senders: u32,
    pub pad0: u32,
    pub error: [u8; ERROR_LEN],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Destroy {
    pub hdr: Header,
    pub id: u32,
    pub force: u32,
    pub phase_ns: [u64; DPHASES],
    pub pad0: u64,
    pub error: [u8; ERROR_LEN],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Run {
    pub hdr: Header,
    pub id: u32,
    pub cpu_count: u32,
    pub region_count: u32,
    pub pid: u32,
    pub brk_start: u64,
    pub cpus: u64,
    pub comm: [u8; COMM_LEN],
    pub region: [Region; MAX_REGIONS],
    /// The program's and its loader's, for /proc/<pid>/maps.
    pub file: [FileName; 2],
    pub error: [u8; ERROR_LEN],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Start {
    pub hdr: Header,
    pub entry: u64,
    pub stack_pointer: u64,
}

pub const EVENT_CALL: u32 = 1;
pub const EVENT_EXITED: u32 = 2;
pub const EVENT_CRASHED: u32 = 3;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Call {
    pub hdr: Header,
    pub done_slot: i32,
    pub event: u32,
    pub done_ret: i64,
    pub slot: u32,
    pub kind: u32,
    pub tid: u32,
    pub wait_status: u32,
    pub nr: u64,
    pub args: [u64; 6],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ProgramInfo {
    pub pid: u32,
    pub host_pid: u32,
    pub state: u32,
    pub threads: u32,
    pub cpus: u64,
    pub mem_bytes: u64,
    pub poll_window_us: u32,
    pub calls_per_s: u32,
    pub comm: [u8; COMM_LEN],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Programs {
    pub hdr: Header,
    pub id: u32,
    pub count: u32,
    pub program: [ProgramInfo; MAX_PROGRAMS],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Adopt {
    pub hdr: Header,
    pub id: u32,
    pub area: u32,
    pub pid: u32,
    pub pad0: u32,
    pub token: u64,
    pub error: [u8; ERROR_LEN],
}

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

pub const IOC_MAGIC: u32 = 0xA7;

/// Linux's `_IOWR(ATOLL_IOC_MAGIC, nr, T)`.
const fn iowr<T>(nr: u32) -> u32 {
    (3 << 30) | ((core::mem::size_of::<T>() as u32) << 16) | (IOC_MAGIC << 8) | nr
}

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
