//! A queue of blocked threads.

use alloc::collections::VecDeque;
use alloc::sync::Arc;

use crate::sched::{self, timer, Thread};
use hal::SpinLock;

pub struct WaitQueue {
    waiters: SpinLock<VecDeque<Arc<Thread>>>,
}

impl WaitQueue {
    pub const fn new() -> Self {
        WaitQueue { waiters: SpinLock::new(VecDeque::new()) }
    }

    /// Blocks the current thread until `done()` holds. The condition is checked
    /// under the queue lock, so a wake-up between the check and the block is
    /// never lost.
    pub fn wait_until(&self, mut done: impl FnMut() -> bool) {
        loop {
            let mut q = self.waiters.lock();
            if done() {
                return;
            }
            let me = sched::current();
            me.mark_blocked();
            q.push_back(me);
            drop(q);
            sched::schedule();
        }
    }

    /// As `wait_until`, giving up at `deadline` (TSC) if there is one;
    /// true if `done()` holds. Whatever woke the thread (the queue, the
    /// timer, the program's end), it leaves the queue before looking again.
    pub fn wait_until_deadline(
        &self,
        mut done: impl FnMut() -> bool,
        deadline: Option<u64>,
    ) -> bool {
        loop {
            let mut q = self.waiters.lock();
            if done() {
                return true;
            }
            if deadline.is_some_and(|d| hal::cpu::rdtsc() >= d) {
                return false;
            }
            let me = sched::current();
            me.mark_blocked();
            q.push_back(me.clone());
            drop(q);
            timer::block_until(deadline);
            self.waiters.lock().retain(|t| !Arc::ptr_eq(t, &me));
        }
    }

    /// Blocks the current thread, then releases `guard`; the caller re-takes
    /// its lock after waking (condition-variable style, the test image's CondVar).
    #[cfg(feature = "testing")]
    pub fn sleep_releasing<T>(&self, guard: hal::SpinLockGuard<'_, T>) {
        let mut q = self.waiters.lock();
        let me = sched::current();
        me.mark_blocked();
        q.push_back(me);
        drop(q);
        drop(guard);
        sched::schedule();
    }

    /// Wakes one waiter; `kick` sends an IPI if it lives on another core.
    pub fn wake_one(&self, kick: bool) -> bool {
        let t = self.waiters.lock().pop_front();
        match t {
            Some(t) => {
                sched::wake(&t, kick);
                true
            }
            None => false,
        }
    }

    pub fn wake_all(&self, kick: bool) -> usize {
        let all: VecDeque<_> = core::mem::take(&mut *self.waiters.lock());
        let n = all.len();
        for t in all {
            sched::wake(&t, kick);
        }
        n
    }
}
