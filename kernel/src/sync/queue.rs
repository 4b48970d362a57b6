//! A queue a thread blocks on until something is in it: the way a message
//! handler (which runs in the interrupt and must not sleep) hands work to
//! a kernel thread.

use alloc::collections::VecDeque;

use super::waitqueue::WaitQueue;
use hal::SpinLock;

pub struct Queue<T> {
    items: SpinLock<VecDeque<T>>,
    ready: WaitQueue,
}

impl<T> Queue<T> {
    pub const fn new() -> Self {
        Queue { items: SpinLock::new(VecDeque::new()), ready: WaitQueue::new() }
    }

    /// Adds `item` at the back and wakes a waiting thread; any context.
    pub fn push(&self, item: T) {
        self.items.lock().push_back(item);
        self.ready.wake_one(true);
    }

    /// The front item, blocking until there is one.
    pub fn pop(&self) -> T {
        loop {
            self.ready.wait_until(|| !self.items.lock().is_empty());
            if let Some(item) = self.items.lock().pop_front() {
                return item;
            }
        }
    }
}
