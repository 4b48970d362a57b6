//! The memory of a vfork child (CLONE_VM | CLONE_VFORK: vfork,
//! posix_spawn, system). On Linux it runs on its parent's memory until it
//! execs or ends. Here it has an address space of its own with the parent's
//! layout and no private pages, and copies a parent page the first time it
//! touches it (a fault, a kernel copy, or Linux performing one of its
//! calls): it sees the parent's memory as it is then, its own writes stay
//! its own, and spawning costs the same whatever the parent's size (a full
//! copy made a large program's system() slow, and failed once the enclave
//! could not hold a second copy).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use super::Process;

const PAGE_SIZE: u64 = 4096;

/// Gives `child` a copy of its parent's page at `va` if it is a vfork
/// child that has none there yet; true if it has a page there now.
pub fn fill(child: &Process, va: u64) -> bool {
    if !child.lazy_memory.load(Ordering::Acquire) {
        return false;
    }
    let Some(parent) = child.family.parent() else { return false };
    let page = va & !(PAGE_SIZE - 1);
    // Locked in address order, as process_vm_readv locks two processes,
    // and unlocked in the reverse (each guard restores the interrupt flag).
    let parent_first = Arc::as_ptr(&parent) < (child as *const Process);
    let (first, second) = if parent_first { (&*parent, child) } else { (child, &*parent) };
    let mut a = first.vm.lock();
    let mut b = second.vm.lock();
    let (from, to) = if parent_first { (&*a, &mut *b) } else { (&*b, &mut *a) };
    let filled = to.fill_from(from, page);
    drop(b);
    drop(a);
    filled
}

/// `fill` for every page of [va, va + len) (before a kernel copy, which
/// holds the child's lock and so cannot take the parent's).
pub fn fill_range(child: &Process, va: u64, len: u64) {
    if !child.lazy_memory.load(Ordering::Acquire) || len == 0 {
        return;
    }
    let end = va.saturating_add(len);
    let mut page = va & !(PAGE_SIZE - 1);
    while page < end {
        fill(child, page);
        page += PAGE_SIZE;
    }
}

/// Before a vfork child forks, or changes its memory's layout: it copies
/// every page it has not yet, and is an ordinary process from then on.
pub fn fill_all(child: &Process) {
    if !child.lazy_memory.load(Ordering::Acquire) {
        return;
    }
    for (start, end) in child.vm.lock().reserved_ranges() {
        fill_range(child, start, end - start);
    }
    child.lazy_memory.store(false, Ordering::Release);
}
