//! An execve in progress, as the process keeps it (exec.rs carries it
//! out; the launcher swaps the new image in).

use core::sync::atomic::{AtomicBool, Ordering};

use crate::mm::vm::AddressSpace;
use crate::sync::SpinLock;

pub struct ExecState {
    /// A thread waits for `atoll run` to load a new image.
    pub(super) pending: AtomicBool,
    /// The new image replaced the old: no way back.
    pub(super) swapped: AtomicBool,
    /// The host's START for the new image is still to come (the launcher
    /// must not start a new thread for it).
    pub(super) start_expected: AtomicBool,
    /// The image left behind, freed by the exec'ing thread once it is off it.
    pub(super) old: SpinLock<Option<AddressSpace>>,
}

impl ExecState {
    pub const fn new() -> Self {
        ExecState {
            pending: AtomicBool::new(false),
            swapped: AtomicBool::new(false),
            start_expected: AtomicBool::new(false),
            old: SpinLock::new(None),
        }
    }

    pub fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// Launcher, at START: true (once) if the START is an execve's.
    pub fn take_start(&self) -> bool {
        self.start_expected.swap(false, Ordering::AcqRel)
    }
}
