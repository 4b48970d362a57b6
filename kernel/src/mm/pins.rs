//! Frames a segment exported through XEMEM holds (xemem.rs): other kernels
//! may map them, so they are not freed while pinned, whatever their owner
//! does. Every frame the address spaces free goes through `free`: a frame
//! another address space still holds stays (frame_holders.rs); a pinned
//! piece waits on its pin and is freed when the pin goes (the host says
//! nobody maps it any more), unless another pin still holds it.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use lwk_logic::user_pages::PAGE_SIZE;

use crate::sync::SpinLock;
use hal::mem;

struct Pin {
    id: u64,
    /// [start, end) physical ranges.
    ranges: Vec<(u64, u64)>,
    /// Pieces their owner freed meanwhile.
    orphans: Vec<(u64, u64)>,
}

static PINS: SpinLock<Vec<Pin>> = SpinLock::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(1);

/// Pins `runs` ((physical address, bytes) each); its id for `unpin`.
pub fn pin(runs: impl IntoIterator<Item = (u64, u64)>) -> u64 {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    let ranges = runs.into_iter().map(|(phys, len)| (phys, phys + len)).collect();
    PINS.lock().push(Pin { id, ranges, orphans: Vec::new() });
    id
}

/// True if a pin holds the frame at `phys`.
pub fn is_pinned(phys: u64) -> bool {
    PINS.lock().iter().any(|p| p.ranges.iter().any(|&(s, e)| (s..e).contains(&phys)))
}

/// Frees `bytes` at `phys`, except the pieces another address space or a
/// pin holds.
pub fn free(phys: u64, bytes: u64) {
    super::frame_holders::let_go(phys, bytes, free_unpinned);
}

/// Frees `bytes` at `phys` that no other address space holds, except the
/// pieces a pin holds.
fn free_unpinned(phys: u64, bytes: u64) {
    let mut pieces = Vec::new();
    {
        let mut pins = PINS.lock();
        if pins.is_empty() {
            drop(pins);
            mem::free_frames(phys, bytes / PAGE_SIZE);
            return;
        }
        pieces.push((phys, phys + bytes));
        for pin in pins.iter_mut() {
            for &(s, e) in &pin.ranges {
                pieces = cut_out(pieces, s, e, &mut pin.orphans);
            }
        }
    }
    for (a, b) in pieces {
        mem::free_frames(a, (b - a) / PAGE_SIZE);
    }
}

/// `pieces` without [s, e): what falls in it goes to `held`.
fn cut_out(pieces: Vec<(u64, u64)>, s: u64, e: u64, held: &mut Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    let mut kept = Vec::with_capacity(pieces.len() + 1);
    for (a, b) in pieces {
        let (lo, hi) = (a.max(s), b.min(e));
        if lo >= hi {
            kept.push((a, b));
            continue;
        }
        held.push((lo, hi));
        kept.extend([(a, lo), (hi, b)].into_iter().filter(|&(x, y)| x < y));
    }
    kept
}

/// Ends pin `id`: what its owner freed meanwhile is freed now.
pub fn unpin(id: u64) {
    let pin = {
        let mut pins = PINS.lock();
        let Some(i) = pins.iter().position(|p| p.id == id) else { return };
        pins.swap_remove(i)
    };
    for (a, b) in pin.orphans {
        free_unpinned(a, b - a);
    }
}
