//! A queue of blocked threads: a list of waiters, and the scheduler's
//! waiting on it (`sched::wait`).

use alloc::collections::VecDeque;
use hal::SpinLock;

use crate::sched::{wait, Thread, Waiters};

pub struct WaitQueue {
    waiters: Waiters<Thread>,
}

impl Default for WaitQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl WaitQueue {
    pub const fn new() -> Self {
        WaitQueue { waiters: SpinLock::new(VecDeque::new()) }
    }

    /// Blocks the current thread until `done()` holds. The condition is checked
    /// under the queue lock, so a wake-up between the check and the block is
    /// never lost.
    #[inline]
    pub fn wait_until(&self, done: impl FnMut() -> bool) {
        wait::until(&self.waiters, done)
    }

    /// As `wait_until`, giving up at `deadline` (TSC) if there is one;
    /// true if `done()` holds.
    #[inline]
    pub fn wait_until_deadline(&self, done: impl FnMut() -> bool, deadline: Option<u64>) -> bool {
        wait::until_deadline(&self.waiters, done, deadline)
    }

    /// Blocks the current thread, then releases `guard`; the caller re-takes
    /// its lock after waking (condition-variable style, the test image's CondVar).
    #[cfg(feature = "testing")]
    #[inline]
    pub fn sleep_releasing<T>(&self, guard: hal::SpinLockGuard<'_, T>) {
        wait::sleep_releasing(&self.waiters, guard)
    }

    /// Wakes one waiter; `kick` sends an IPI if it lives on another core.
    #[inline]
    pub fn wake_one(&self, kick: bool) -> bool {
        wait::wake_one(&self.waiters, kick)
    }

    #[inline]
    pub fn wake_all(&self, kick: bool) -> usize {
        wait::wake_all(&self.waiters, kick)
    }
}
