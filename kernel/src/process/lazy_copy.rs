//! The memory of a vfork child (CLONE_VM | CLONE_VFORK: vfork,
//! posix_spawn, system). On Linux it runs on its parent's memory until it
//! execs or ends. Here it has an address space of its own with the parent's
//! layout and no private pages, and copies a parent page the first time it
//! touches it (a fault, a kernel copy, or Linux performing one of its
//! calls): it sees the parent's memory as it is then, and its own writes
//! stay its own, except those to the stack frames of the parent's thread
//! that waits for it, which reach the parent if it ends without exec
//! (`give_back`). Spawning costs the same whatever the parent's size (a full
//! copy made a large program's system() slow, and failed once the enclave
//! could not hold a second copy).

use core::sync::atomic::Ordering;
use lwk_logic::errno::Errno;
use lwk_logic::user_pages::PAGE_SIZE;

use super::{with_both_vms, Process};

/// Gives `child` a copy of its parent's page at `va` if it is a vfork
/// child that has none there yet; true if it has a page there now, ENOMEM.
pub fn fill(child: &Process, va: u64) -> Result<bool, Errno> {
    if !child.lazy_memory.load(Ordering::Acquire) {
        return Ok(false);
    }
    let Some(parent) = child.family.parent() else { return Ok(false) };
    let page = va & !(PAGE_SIZE - 1);
    with_both_vms(child, &parent, |mine, theirs| mine.fill_from(theirs, page))
}

/// `fill` for every page of [va, va + len) (before a kernel copy, which
/// holds the child's lock and so cannot take the parent's); ENOMEM.
pub fn fill_range(child: &Process, va: u64, len: u64) -> Result<(), Errno> {
    if !child.lazy_memory.load(Ordering::Acquire) || len == 0 {
        return Ok(());
    }
    let end = va.saturating_add(len);
    let mut page = va & !(PAGE_SIZE - 1);
    while page < end {
        fill(child, page)?;
        page += PAGE_SIZE;
    }
    Ok(())
}

/// How much of the stack above the vforking thread's stack pointer a
/// vfork child's writes reach the parent in (glibc's posix_spawn reports a
/// failed exec there; a vfork child may set its caller's variables).
pub const GIVE_BACK: u64 = 16 << 10;

/// A vfork child that ends without exec (or fork, after which it is an
/// ordinary process): the bytes it changed in the waiting thread's stack
/// frames reach the parent (`GIVE_BACK`).
pub fn give_back(child: &Process) {
    // Not after exec, nor for a child that never ran (a failed fork).
    if !child.lazy_memory.load(Ordering::Acquire) || !child.family.ran.load(Ordering::Acquire) {
        return;
    }
    let Some(parent) = child.family.parent() else { return };
    with_both_vms(child, &parent, |mine, theirs| mine.give_back_to(theirs));
}

/// Before a vfork child forks: it copies every page it has not yet, and is
/// an ordinary process from then on; ENOMEM (it stays as it was).
pub fn fill_all(child: &Process) -> Result<(), Errno> {
    if !child.lazy_memory.load(Ordering::Acquire) {
        return Ok(());
    }
    let ranges = child.vm.lock().inherited_ranges();
    for (start, end) in ranges {
        fill_range(child, start, end - start)?;
    }
    child.vm.lock().stop_inheriting();
    child.lazy_memory.store(false, Ordering::Release);
    Ok(())
}
