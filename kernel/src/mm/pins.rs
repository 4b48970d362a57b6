//! Frames a segment exported through XEMEM holds (xemem.rs): other kernels
//! may map them, so each pin holds them (`Frames`) until the host says
//! nobody maps them any more, whatever their owner does meanwhile. A fork
//! copies a pinned page rather than share it, and its owner never swaps
//! it for a frame of its own (`AddressSpace::own_pages`).

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use hal::frames::Frames;

use crate::sync::SpinLock;

struct Pin {
    id: u64,
    runs: Vec<Frames>,
}

static PINS: SpinLock<Vec<Pin>> = SpinLock::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(1);

/// Pins `runs` (holds on the segment's frames); its id for `unpin`.
pub fn pin(runs: Vec<Frames>) -> u64 {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    PINS.lock().push(Pin { id, runs });
    id
}

/// True if a pin holds the frame at `phys`.
pub fn is_pinned(phys: u64) -> bool {
    let held = |f: &Frames| (f.phys()..f.phys() + f.bytes()).contains(&phys);
    PINS.lock().iter().any(|p| p.runs.iter().any(held))
}

/// Ends pin `id`: frames nobody else holds are freed.
pub fn unpin(id: u64) {
    let pin = {
        let mut pins = PINS.lock();
        let Some(i) = pins.iter().position(|p| p.id == id) else { return };
        pins.swap_remove(i)
    };
    drop(pin.runs);
}
