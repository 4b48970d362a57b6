//! A process's part in vfork's lending of memory, as the process keeps it
//! (vfork.rs lends and ends the loan). Generic over the process type,
//! which holds it.

use alloc::sync::Weak;
use alloc::vec::Vec;
use core::sync::atomic::AtomicBool;

use crate::sync::SpinLock;

/// A process's part in lending: whose memory it runs on, who runs on its.
pub struct Lending<P> {
    /// The process whose memory it runs on while `borrowing`.
    pub(super) lender: SpinLock<Weak<P>>,
    pub(super) borrowing: AtomicBool,
    /// Processes running on its memory now.
    pub(super) borrowers: SpinLock<Vec<Weak<P>>>,
}

impl<P> Lending<P> {
    pub fn new() -> Self {
        Lending {
            lender: SpinLock::new(Weak::new()),
            borrowing: AtomicBool::new(false),
            borrowers: SpinLock::new(Vec::new()),
        }
    }
}
