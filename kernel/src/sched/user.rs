//! What the scheduler knows of a program's threads: the part a thread of a
//! user program adds, switched in and out with it, entered by its system calls,
//! and the hooks for cores leaving and joining. The program layer supplies both
//! at start; the scheduler never names it. Here a thread gets its user part's
//! type, so thread.rs need not know this trait.

use core::any::Any;
use hal::TrapFrame;
use spin::Once;

use super::thread::ThreadOf;

/// A kernel thread, with the part a program adds when it runs one.
pub type Thread = ThreadOf<dyn UserPart>;

/// What a user thread adds to a kernel thread.
pub trait UserPart: Any + Send + Sync {
    /// Its thread stops running on this core.
    fn switch_out(&self);
    /// Its thread runs on this core next; false when it must run on the
    /// kernel's own page tables (it has left its address space).
    fn switch_in(&self) -> bool;
    /// The core it should move to when its own leaves, if any may take it.
    fn new_home(&self) -> Option<usize>;
    /// Its thread (running, interrupts off) made the system call in
    /// `frame`; true if every register must be restored from the frame.
    fn system_call(&self, thread: &Thread, frame: &mut TrapFrame) -> bool;
}

/// What the owner of user threads does when cores come and go.
pub struct CpuHooks {
    /// Core `cpu` is leaving: its user threads need new homes.
    pub leaving: fn(usize),
    /// Core `cpu` has joined (or stayed after a refused leave).
    pub joined: fn(usize),
}

static HOOKS: Once<CpuHooks> = Once::new();

/// Registers the hooks, once at start.
pub fn register(hooks: CpuHooks) {
    HOOKS.call_once(|| hooks);
}

pub(super) fn cpu_leaving(cpu: usize) {
    if let Some(h) = HOOKS.get() {
        (h.leaving)(cpu);
    }
}

pub fn cpu_joined(cpu: usize) {
    if let Some(h) = HOOKS.get() {
        (h.joined)(cpu);
    }
}

/// Switches the user parts of `prev` and `next`: kernel threads (idle
/// included) and threads on their way out run on the kernel's own tables,
/// since a program's may be freed meanwhile (once its last thread is gone,
/// wherever that was), and a core still holding them would lose the
/// kernel's mappings with them (a triple fault).
pub(super) fn switch(prev: Option<&dyn UserPart>, next: Option<&dyn UserPart>) {
    if let Some(u) = prev {
        u.switch_out();
    }
    if next.is_some_and(|u| u.switch_in()) {
        return;
    }
    hal::paging::switch_to_kernel();
}
