//! A vfork child's memory (CLONE_VM | CLONE_VFORK: vfork, posix_spawn,
//! system()): as on Linux, the child runs on its parent's address space,
//! the same page tables and frames, no copy, while the parent's vforking
//! thread waits (`family::fork`), until the child execs (it then gets a
//! space of its own) or ends. Meanwhile everything the child does to
//! memory (system calls, faults, the kernel's copies, its delegated calls'
//! hold on unmapped frames) acts on the lender's (`Process::mem`), and the
//! lender's shootdowns reach the cores the child ran on and the child's
//! mirror on Linux. The lender's memory cannot go while lent: the waiting
//! thread keeps its process from ending, and another of its threads' execve
//! waits for it, until the borrow is over.

use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::ops::Deref;
use core::sync::atomic::{AtomicU64, Ordering};

use super::types::Process;
use crate::mm::uaccess::{Memory, Owner};
use crate::mm::vm::AddressSpace;
use crate::sync::SpinLock;

/// The process whose memory a process runs on: itself, or its lender.
pub enum Mem<'a> {
    Own(&'a Process),
    Lent(Arc<Process>),
}

impl Deref for Mem<'_> {
    type Target = Process;

    fn deref(&self) -> &Process {
        match self {
            Mem::Own(p) => p,
            Mem::Lent(p) => p,
        }
    }
}

impl Mem<'_> {
    pub fn is_lent(&self) -> bool {
        matches!(self, Mem::Lent(_))
    }
}

impl Owner for Process {
    type Now<'a> = Mem<'a>;

    fn memory_now(&self) -> Mem<'_> {
        self.mem()
    }
}

impl Memory for Process {
    fn space(&self) -> &SpinLock<AddressSpace> {
        &self.vm
    }

    fn stack_grew(&self, vm: &AddressSpace) {
        self.note_stack(vm)
    }
}

impl Process {
    /// The process whose memory this one runs on now (a vfork child's
    /// lender until it execs or ends; else itself).
    pub fn mem(&self) -> Mem<'_> {
        if !self.lending.borrowing.load(Ordering::Acquire) {
            return Mem::Own(self);
        }
        match self.lending.lender.lock().upgrade() {
            Some(lender) => Mem::Lent(lender),
            None => Mem::Own(self),
        }
    }
}

/// `child` (not started, not adopted yet) runs on `parent`'s memory, or
/// on the memory `parent` itself borrows.
pub fn lend(parent: &Arc<Process>, child: &Arc<Process>) {
    let owner = match parent.mem() {
        Mem::Own(_) => parent.clone(),
        Mem::Lent(lender) => lender,
    };
    owner.lending.borrowers.lock().push(Arc::downgrade(child));
    *child.lending.lender.lock() = Arc::downgrade(&owner);
    child.root.set(owner.tables());
    child.lending.borrowing.store(true, Ordering::Release);
}

/// `child` no longer runs on its lender's memory: it has a new image
/// (its root is set already), or has ended. Its mirror on Linux drops
/// what it mapped of the lender's.
pub fn end(child: &Process) {
    if !child.lending.borrowing.swap(false, Ordering::AcqRel) {
        return;
    }
    if let Some(lender) = child.lending.lender.lock().upgrade() {
        let mut borrowers = lender.lending.borrowers.lock();
        borrowers.retain(|b| !core::ptr::eq(b.as_ptr(), child));
    }
    child.note_unmapped();
}

/// The processes running on `owner`'s memory now.
pub fn borrowers(owner: &Process) -> Vec<Arc<Process>> {
    owner.lending.borrowers.lock().iter().filter_map(Weak::upgrade).collect()
}

/// Every core that ran `owner` or a process on its memory (`ran_on`).
pub fn cores<R>(owner: &Process, f: impl FnOnce(&[&AtomicU64]) -> R) -> R {
    let borrowers = borrowers(owner);
    let mut all: Vec<&AtomicU64> = Vec::with_capacity(1 + borrowers.len());
    all.push(&owner.ran_on);
    all.extend(borrowers.iter().map(|b| &b.ran_on));
    f(&all)
}

/// `child` is freed (its server on Linux let go, mirror included): the
/// delegated calls it left unfinished on its lender's memory no longer
/// hold frames its lender unmapped.
pub fn freed(child: &Process) {
    if let Some(lender) = child.lending.lender.lock().upgrade() {
        lender.calls.forget_caller(child.pid);
    }
}
