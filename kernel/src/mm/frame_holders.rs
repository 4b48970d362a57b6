//! Read-only private pages that a fork shares between parent and child
//! instead of copying them (a static program's code and constants: most of
//! what a small one maps): how many address spaces hold each such 4 KiB
//! frame. A frame not listed has one holder. Every frame an address space
//! frees goes through `let_go` (from `pins::free`), so a shared frame is
//! freed by its last holder only; a holder that would write, zero or
//! export one gets a frame of its own first (`AddressSpace::own_pages`).

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};
use lwk_logic::runs;
use lwk_logic::user_pages::PAGE_SIZE;

use crate::sync::SpinLock;

/// Frame -> its holders (two or more).
static HOLDERS: SpinLock<BTreeMap<u64, u32>> = SpinLock::new(BTreeMap::new());
/// How many frames HOLDERS lists, read without its lock: most programs
/// never fork, and their frees need not look.
static LISTED: AtomicUsize = AtomicUsize::new(0);

/// Each of `frames` has one holder more.
pub fn hold(frames: &[u64]) {
    if frames.is_empty() {
        return;
    }
    let mut holders = HOLDERS.lock();
    for &f in frames {
        *holders.entry(f).or_insert(1) += 1;
    }
    LISTED.store(holders.len(), Ordering::Release);
}

/// True if some frame has more than one holder.
pub fn any() -> bool {
    LISTED.load(Ordering::Acquire) != 0
}

/// Keeps the (address, frame) pairs whose frame another address space
/// may hold too.
pub fn keep_shared(pages: &mut Vec<(u64, u64)>) {
    if !any() {
        pages.clear();
        return;
    }
    let holders = HOLDERS.lock();
    pages.retain(|(_, f)| holders.contains_key(f));
}

/// One holder lets go of [phys, phys + bytes): `free` gets each run of
/// frames that it held alone.
pub fn let_go(phys: u64, bytes: u64, mut free: impl FnMut(u64, u64)) {
    // Frames become listed only while their one holder maps them (a fork
    // under its lock), never while it frees them.
    if !any() {
        return free(phys, bytes);
    }
    let end = phys + bytes;
    let listed: Vec<u64> = {
        let mut holders = HOLDERS.lock();
        let listed: Vec<u64> = holders.range(phys..end).map(|(&f, _)| f).collect();
        for f in &listed {
            let n = holders.get_mut(f).expect("listed a moment ago");
            *n -= 1;
            if *n == 1 {
                holders.remove(f);
            }
        }
        LISTED.store(holders.len(), Ordering::Release);
        listed
    };
    runs::between(phys, end, PAGE_SIZE, listed, free);
}
