//! The status page in the shared area: what the LWK says of itself
//! (state, CPUs online, free memory, the CPU that crashed). The host reads
//! it at any time, even after a crash that left no message.

use atoll_abi::Status;
use core::mem::{offset_of, size_of};
use core::sync::atomic::Ordering;
use spin::Once;

use hal::shared::SharedRegion;

static REGION: Once<SharedRegion> = Once::new();

pub fn init(phys: u64) {
    match SharedRegion::in_enclave_area(phys, size_of::<Status>()) {
        Ok(r) => _ = REGION.call_once(|| r),
        // Without its status page the enclave still runs; `atoll status` shows less.
        Err(e) => hal::println!("status page: {e:?}"),
    }
}

fn region() -> Option<&'static SharedRegion> {
    REGION.get()
}

pub fn set_state(state: u32) {
    if let Some(r) = region() {
        r.atomic_u32(offset_of!(Status, lwk_state)).store(state, Ordering::Release);
    }
}

pub fn set_online(cpus: usize) {
    if let Some(r) = region() {
        r.atomic_u32(offset_of!(Status, online_cpus)).store(cpus as u32, Ordering::Release);
    }
}

pub fn set_panic_cpu(cpu: usize) {
    if let Some(r) = region() {
        r.atomic_u32(offset_of!(Status, panic_cpu)).store(cpu as u32, Ordering::Relaxed);
    }
}

/// Publishes how much LWK memory is free (the host shows it).
pub fn report_memory() {
    let Some(r) = region() else { return };
    let (free, total) = hal::mem::frame_counts();
    r.atomic_u64(offset_of!(Status, free_bytes)).store(free * 4096, Ordering::Relaxed);
    r.atomic_u64(offset_of!(Status, total_bytes)).store(total * 4096, Ordering::Relaxed);
}
