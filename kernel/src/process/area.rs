//! The program areas shared with the host (struct atoll_proc, one per
//! program): launch parameters in, page-table root, state, exit status and
//! the figures `atoll status` shows out, and the delegated-call slots.

use atoll_abi::{
    FileName, Proc, Region, Slot, FAULT_ANSWERED, FAULT_ASKED, FAULT_STATE_MASK, MAX_PROGRAMS,
    MAX_REGIONS, PROC_AREA_SIZE, PROC_CREATING, PROC_FREE, PROC_OFFSET, SLOT_IDLE,
};
use core::mem::{offset_of, size_of};
use core::sync::atomic::{AtomicU32, Ordering};
use spin::Once;

use hal::shared::SharedRegion;

static AREAS: Once<[SharedRegion; MAX_PROGRAMS]> = Once::new();

/// Attaches to the areas in the enclave's shared memory.
pub fn init(shared_phys: u64) {
    AREAS.call_once(|| {
        core::array::from_fn(|i| {
            let phys = shared_phys + PROC_OFFSET + i as u64 * PROC_AREA_SIZE;
            SharedRegion::in_enclave_area(phys, PROC_AREA_SIZE as usize)
                .unwrap_or_else(|e| hal::fatal!("program area {i}: {e:?}"))
        })
    });
}

/// One program's area, by index (messages name areas by index).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Area(usize);

/// What the host asks for at create: regions, brk start, cores (a set,
/// or else a count).
pub struct CreateRequest {
    pub regions: alloc::vec::Vec<Region>,
    pub brk_start: u64,
    pub cpu_count: u32,
    pub cpu_mask: u64,
    /// The program's and its loader's files (REGION_PROGRAM, _LOADER).
    pub files: [FileName; 2],
    /// At CPL 0 (the host allowed it: `atoll run --hrt`).
    pub kernel_mode: bool,
}

impl Area {
    /// The area the host named, if it is one.
    pub fn from_index(i: u64) -> Option<Area> {
        (i < MAX_PROGRAMS as u64).then_some(Area(i as usize))
    }

    /// Claims a free area for a program the LWK makes itself (a forked
    /// child); the host claims areas the same way, so each has one owner.
    pub fn claim() -> Option<Area> {
        (0..MAX_PROGRAMS).map(Area).find(|a| {
            a.state_word()
                .compare_exchange(PROC_FREE, PROC_CREATING, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })
    }

    pub fn index(self) -> usize {
        self.0
    }

    fn region(self) -> &'static SharedRegion {
        &AREAS.get().expect("program areas not set up (not an enclave)")[self.0]
    }

    fn state_word(self) -> &'static AtomicU32 {
        self.region().atomic_u32(offset_of!(Proc, state))
    }

    pub fn state(self) -> u32 {
        self.state_word().load(Ordering::Acquire)
    }

    pub fn set_state(self, state: u32) {
        self.state_word().store(state, Ordering::Release);
    }

    pub fn create_request(self) -> CreateRequest {
        let a = self.region();
        let n = (a.read::<u32>(offset_of!(Proc, region_count)) as usize).min(MAX_REGIONS);
        let regions = (0..n)
            .map(|i| a.read::<Region>(offset_of!(Proc, region) + i * size_of::<Region>()))
            .collect();
        CreateRequest {
            regions,
            brk_start: a.read(offset_of!(Proc, brk_start)),
            cpu_count: a.read(offset_of!(Proc, cpu_count)),
            cpu_mask: a.read(offset_of!(Proc, cpus)),
            files: a.read(offset_of!(Proc, file)),
            kernel_mode: a.read::<u32>(offset_of!(Proc, kernel_mode)) == 1,
        }
    }

    pub fn set_created(self, pid: u32, cr3: u64, cpus: u64) {
        let a = self.region();
        a.write(offset_of!(Proc, pid), pid);
        a.write(offset_of!(Proc, cr3), cr3);
        a.write(offset_of!(Proc, cpus), cpus);
    }

    /// When the LWK took the create request (`atoll run --stats`).
    pub fn set_created_tsc(self, tsc: u64) {
        self.region().write(offset_of!(Proc, created_tsc), tsc);
    }

    /// Shows the program's mode to the host (`atoll status`); a forked
    /// child's comes from its parent.
    pub fn set_kernel_mode(self, on: bool) {
        self.region().write(offset_of!(Proc, kernel_mode), on as u32);
    }

    /// The Linux pid of the `atoll run` serving the program (0: none yet).
    pub fn host_pid(self) -> u32 {
        self.region().read(offset_of!(Proc, host_pid))
    }

    /// A forked child's area: no server on Linux holds it yet (the host
    /// names its own when one adopts it).
    pub fn clear_host_pid(self) {
        self.region().write(offset_of!(Proc, host_pid), 0u32);
    }

    /// Every slot idle (a new occupant's).
    pub fn clear_slots(self) {
        (0..atoll_abi::MAX_SLOTS)
            .for_each(|i| self.slot_state(i).store(SLOT_IDLE, Ordering::Release));
    }

    /// Its cores, when the enclave's resizing changed them.
    pub fn set_cpus(self, cpus: u64) {
        self.region().write(offset_of!(Proc, cpus), cpus);
    }

    /// `atoll status`'s count of threads alive.
    pub fn set_threads(self, threads: u32) {
        self.region().write(offset_of!(Proc, threads), threads);
    }

    /// The figures `atoll status` shows: threads alive, memory mapped.
    pub fn set_usage(self, threads: u32, mem_bytes: u64) {
        let a = self.region();
        a.write(offset_of!(Proc, threads), threads);
        a.write(offset_of!(Proc, mem_bytes), mem_bytes);
    }

    /// The program's name (as `atoll status` shows it; prctl PR_SET_NAME).
    pub fn comm(self) -> [u8; atoll_abi::COMM_LEN] {
        self.region().read(offset_of!(Proc, comm))
    }

    /// The host name `atoll run` gave (uname's nodename), NUL padded.
    pub fn nodename(self) -> [u8; atoll_abi::NODENAME_LEN] {
        self.region().read(offset_of!(Proc, nodename))
    }

    pub fn set_nodename(self, name: [u8; atoll_abi::NODENAME_LEN]) {
        self.region().write(offset_of!(Proc, nodename), name);
    }

    pub fn set_comm(self, comm: [u8; atoll_abi::COMM_LEN]) {
        self.region().write(offset_of!(Proc, comm), comm);
    }

    /// (entry, stack pointer, Linux's CLOCK_REALTIME) for START.
    pub fn start_request(self) -> (u64, u64, u64) {
        let a = self.region();
        (
            a.read(offset_of!(Proc, entry)),
            a.read(offset_of!(Proc, stack_pointer)),
            a.read(offset_of!(Proc, realtime_ns)),
        )
    }

    pub fn set_exited(self, status: u32) {
        self.region().write(offset_of!(Proc, wait_status), status);
        self.set_state(atoll_abi::PROC_EXITED);
    }

    /// The host's mirror of the address space must drop what it cached.
    pub fn bump_map_generation(self) {
        self.region().atomic_u32(offset_of!(Proc, map_generation)).fetch_add(1, Ordering::AcqRel);
    }

    fn slot_offset(i: usize) -> usize {
        offset_of!(Proc, slot) + i * size_of::<Slot>()
    }

    pub fn slot_state(self, i: usize) -> &'static AtomicU32 {
        self.region().atomic_u32(Self::slot_offset(i) + offset_of!(Slot, state))
    }

    /// Whether slot `i`'s caller polls its state (the host then sends no
    /// DONE interrupt): set while it spins, cleared before it sleeps.
    pub fn slot_spinning(self, i: usize) -> &'static AtomicU32 {
        self.region().atomic_u32(Self::slot_offset(i) + offset_of!(Slot, spinning))
    }

    /// Whether a worker of the program's `atoll run` polls the slots now
    /// (a posted call then needs no CALL_POSTED message).
    pub fn server_polling(self) -> bool {
        self.region().atomic_u32(offset_of!(Proc, polling)).load(Ordering::SeqCst) != 0
    }

    /// Rings slot `i`'s bit in the posted bitmap, after its REQUEST: a
    /// worker claims only slots whose bit it cleared.
    pub fn mark_posted(self, i: usize) {
        let word = offset_of!(Proc, posted) + i / 64 * size_of::<u64>();
        self.region().atomic_u64(word).fetch_or(1 << (i % 64), Ordering::SeqCst);
    }

    /// Fills slot `i` with a request (its state is set by the caller).
    pub fn fill_slot(self, i: usize, slot: Slot) {
        self.region().write(Self::slot_offset(i), slot);
    }

    /// Slot `i`'s TSC stamps: (posted, taken, answered).
    pub fn slot_times(self, i: usize) -> (u64, u64, u64) {
        let at = |field| self.region().read(Self::slot_offset(i) + field);
        (
            at(offset_of!(Slot, posted_tsc)),
            at(offset_of!(Slot, taken_tsc)),
            at(offset_of!(Slot, answered_tsc)),
        )
    }

    pub fn slot_ret(self, i: usize) -> i64 {
        self.region().read(Self::slot_offset(i) + offset_of!(Slot, ret))
    }

    /// The number of the host's last PAGE_WANTED question in slot `i`
    /// (the state bits clear): a new call in the slot keeps it, so that a
    /// late answer to an earlier call's question cannot pass for one to
    /// the next.
    pub fn fault_number(self, i: usize) -> u32 {
        let at = Self::slot_offset(i) + offset_of!(Slot, fault_state);
        self.region().atomic_u32(at).load(Ordering::Acquire) & !FAULT_STATE_MASK
    }

    /// The question the host asked in slot `i` (PAGE_WANTED): its number,
    /// the page, and whether its worker writes there; None unless one waits.
    pub fn fault_asked(self, i: usize) -> Option<(u32, u64, bool)> {
        let at = Self::slot_offset(i);
        let state = self.region().atomic_u32(at + offset_of!(Slot, fault_state));
        let question = state.load(Ordering::Acquire);
        if question & FAULT_STATE_MASK != FAULT_ASKED {
            return None;
        }
        let va: u64 = self.region().read(at + offset_of!(Slot, fault_va));
        let write: u32 = self.region().read(at + offset_of!(Slot, fault_write));
        Some((question, va, write != 0))
    }

    /// Answers `question` in slot `i` (the host walks the tables again),
    /// unless the host asked another meanwhile (which has its own message).
    pub fn fault_answered(self, i: usize, question: u32) {
        let at = Self::slot_offset(i) + offset_of!(Slot, fault_state);
        let answer = (question & !FAULT_STATE_MASK) | FAULT_ANSWERED;
        let state = self.region().atomic_u32(at);
        let _ = state.compare_exchange(question, answer, Ordering::AcqRel, Ordering::Acquire);
    }
}
