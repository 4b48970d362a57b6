//! One system call in progress: what its handler is given.

use alloc::sync::Arc;
use hal::TrapFrame;

use crate::process::vfork::Mem;
use crate::process::{Process, UserThread};
use crate::sched::Thread;

/// One system call in progress.
pub struct Call<'a> {
    pub thread: &'a Thread,
    pub user: &'a UserThread,
    pub process: &'a Arc<Process>,
    pub frame: &'a mut TrapFrame,
    pub args: [u64; 6],
    /// The handler replaced every register (rt_sigreturn).
    pub replaced_registers: bool,
}

impl Call<'_> {
    /// The process whose memory the caller runs on (a vfork child's
    /// lender's, until it execs or ends).
    pub fn mem(&self) -> Mem<'_> {
        self.process.mem()
    }
}
