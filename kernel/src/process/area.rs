//! The program area shared with the host (struct atoll_proc): launch
//! parameters in, page-table root, state and exit status out, and the
//! delegated-call slots.

use atoll_abi::{Proc, Region, Slot, MAX_REGIONS, PROC_OFFSET, PROC_SIZE};
use core::mem::{offset_of, size_of};
use core::sync::atomic::{AtomicU32, Ordering};
use spin::Once;

use hal::shared::SharedRegion;

static AREA: Once<SharedRegion> = Once::new();

/// Attaches to the area in the enclave's shared memory.
pub fn init(shared_phys: u64) {
    AREA.call_once(|| SharedRegion::in_enclave_area(shared_phys + PROC_OFFSET, PROC_SIZE as usize));
}

fn area() -> &'static SharedRegion {
    AREA.get().expect("program area not set up (not an enclave)")
}

pub fn state() -> u32 {
    area().atomic_u32(offset_of!(Proc, state)).load(Ordering::Acquire)
}

pub fn set_state(state: u32) {
    area().atomic_u32(offset_of!(Proc, state)).store(state, Ordering::Release);
}

/// What the host asks for at create: regions, brk start, core count.
pub struct CreateRequest {
    pub regions: alloc::vec::Vec<Region>,
    pub brk_start: u64,
    pub cpu_count: u32,
}

pub fn create_request() -> CreateRequest {
    let a = area();
    let n = (a.read::<u32>(offset_of!(Proc, region_count)) as usize).min(MAX_REGIONS);
    let regions = (0..n)
        .map(|i| a.read::<Region>(offset_of!(Proc, region) + i * size_of::<Region>()))
        .collect();
    CreateRequest {
        regions,
        brk_start: a.read(offset_of!(Proc, brk_start)),
        cpu_count: a.read(offset_of!(Proc, cpu_count)),
    }
}

pub fn set_created(pid: u32, cr3: u64) {
    let a = area();
    a.write(offset_of!(Proc, pid), pid);
    a.write(offset_of!(Proc, cr3), cr3);
}

/// (entry, stack pointer, Linux's CLOCK_REALTIME) for START.
pub fn start_request() -> (u64, u64, u64) {
    let a = area();
    (
        a.read(offset_of!(Proc, entry)),
        a.read(offset_of!(Proc, stack_pointer)),
        a.read(offset_of!(Proc, realtime_ns)),
    )
}

pub fn set_exited(status: u32) {
    area().write(offset_of!(Proc, wait_status), status);
    set_state(atoll_abi::PROC_EXITED);
}

/// The host's mirror of the address space must drop what it cached.
pub fn bump_map_generation() {
    area().atomic_u32(offset_of!(Proc, map_generation)).fetch_add(1, Ordering::AcqRel);
}

fn slot_offset(i: usize) -> usize {
    offset_of!(Proc, slot) + i * size_of::<Slot>()
}

pub fn slot_state(i: usize) -> &'static AtomicU32 {
    area().atomic_u32(slot_offset(i) + offset_of!(Slot, state))
}

/// Fills slot `i` with a request (its state is set by the caller).
pub fn fill_slot(i: usize, slot: Slot) {
    area().write(slot_offset(i), slot);
}

pub fn slot_ret(i: usize) -> i64 {
    area().read(slot_offset(i) + offset_of!(Slot, ret))
}
