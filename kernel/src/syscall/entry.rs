//! A program's thread as the scheduler sees it (`sched::user::UserPart`):
//! switched with its CPU state and address space, given a new home when
//! its core leaves, and entered by its system calls.

use hal::TrapFrame;

use crate::process::{cpus, UserThread};
use crate::sched::user::UserPart;
use crate::sched::Thread;

impl UserPart for UserThread {
    fn switch_out(&self) {
        self.leave_cpu();
    }

    fn switch_in(&self) -> bool {
        self.enter_cpu()
    }

    fn new_home(&self) -> Option<usize> {
        cpus::home_for(self)
    }

    #[inline]
    fn system_call(&self, thread: &Thread, frame: &mut TrapFrame) -> bool {
        super::handle(thread, self, frame)
    }
}
