//! Condition variables (Nautilus/Nemo style). Signalling puts the waiter on its
//! core's run queue; with `kick` the signaller also sends that core an IPI so
//! its scheduler switches to the waiter at once instead of at its next yield.

use super::waitqueue::WaitQueue;
use hal::SpinLockGuard;

pub struct CondVar {
    queue: WaitQueue,
    kick: bool,
}

impl CondVar {
    pub const fn new(kick: bool) -> Self {
        CondVar { queue: WaitQueue::new(), kick }
    }

    /// Releases the lock, sleeps until signalled, re-takes the lock.
    pub fn wait<'a, T>(&self, guard: SpinLockGuard<'a, T>) -> SpinLockGuard<'a, T> {
        let mutex = SpinLockGuard::mutex(&guard);
        self.queue.sleep_releasing(guard);
        mutex.lock()
    }

    pub fn signal(&self) -> bool {
        self.queue.wake_one(self.kick)
    }

    pub fn broadcast(&self) -> usize {
        self.queue.wake_all(self.kick)
    }
}
