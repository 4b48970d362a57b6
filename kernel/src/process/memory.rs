//! A process's memory as its threads use it (its own, or its lender's:
//! `vfork`): the main stack grown on demand, faults that need no signal,
//! translations shot down on every core that may hold them, and two
//! processes' address spaces locked together.

use core::sync::atomic::Ordering;

use super::types::Process;
use super::vfork;
use crate::mm::vm;

/// Runs `f` on the address spaces of two processes, `a`'s first: locked
/// in address order, as every path that holds two locks them, and
/// unlocked in the reverse (each guard restores the interrupt flag it
/// found, so the last taken goes first).
pub fn with_both_vms<R>(
    a: &Process,
    b: &Process,
    f: impl FnOnce(&mut vm::AddressSpace, &mut vm::AddressSpace) -> R,
) -> R {
    let a_first = (a as *const Process) < (b as *const Process);
    let (first, second) = if a_first { (a, b) } else { (b, a) };
    let mut one = first.vm.lock();
    let mut two = second.vm.lock();
    let r = if a_first { f(&mut one, &mut two) } else { f(&mut two, &mut one) };
    drop(two);
    drop(one);
    r
}

impl Process {
    /// Gives the main stack memory at `va` (and up to what it has) if it
    /// has none there yet; false if `va` is not in that part, or memory
    /// ran out (a fault there is then a SIGSEGV, as on Linux). A vfork
    /// child's is its lender's stack.
    pub fn grow_stack(&self, va: u64) -> bool {
        let m = self.mem();
        let [bottom, low] = [0, 1].map(|i| m.stack_to_grow[i].load(Ordering::Acquire));
        if !(bottom..low).contains(&va) {
            return false;
        }
        let grown = {
            let mut vm = m.vm.lock();
            let grown = vm.grow_to(va).unwrap_or(false);
            m.note_stack(&vm);
            grown
        };
        if grown {
            // `atoll status` shows what the program and the enclave hold.
            m.report_usage();
            crate::status::report_memory();
        }
        grown
    }

    /// `grow_stack` for the lowest page of [va, va + len) in the main
    /// stack's part without memory, if any.
    pub fn grow_stack_over(&self, va: u64, len: u64) {
        let m = self.mem();
        let [bottom, low] = [0, 1].map(|i| m.stack_to_grow[i].load(Ordering::Acquire));
        if va < low && va.saturating_add(len) > bottom {
            m.grow_stack(va.max(bottom));
        }
    }

    /// A fault at `va` (a write if `write`, an instruction fetch if
    /// `fetch`) that needs no signal: the main stack got memory there now,
    /// or the page allows the access by the time this looks (another
    /// thread grew the stack or widened its access meanwhile).
    pub fn resolve_fault(&self, va: u64, write: bool, fetch: bool) -> bool {
        let m = self.mem();
        m.grow_stack(va)
            || m.vm
                .lock()
                .translate(va)
                .is_some_and(|t| (t.writable || !write) && (t.executable || !fetch))
    }

    /// Every core drops the translations taken away so far, and the
    /// host's mirror drops its mappings before its next call (called on
    /// the memory's owner: `mem()`).
    pub fn shoot_down(&self) {
        let upto = self.vm.lock().removals();
        // The mirror first: a fork that sees the count caught up shares
        // read-only pages, which no stale mapping may write.
        self.flush_translations();
        self.flushed_removals.fetch_max(upto, Ordering::AcqRel);
    }

    /// Every core that ran a thread on its memory (its own, and vfork
    /// children's on it) drops its translations, and so do their mirrors.
    pub fn flush_translations(&self) {
        vfork::cores(self, crate::tlb::shootdown);
        self.note_unmapped();
        for b in vfork::borrowers(self) {
            b.note_unmapped();
        }
    }
}
