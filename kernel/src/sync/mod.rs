//! Synchronization: the pmtlock-based SpinLock (from the hardware layer, as
//! it masks interrupts), wait queues and condition variables whose
//! cross-core wake-ups kick the target core with an IPI.

// Fork/join, sleeping and condition variables are kernel services that only
// the self-tests and benchmarks use so far; the production image drops them.
#![cfg_attr(not(feature = "testing"), allow(dead_code, unused_imports))]

mod condvar;
mod queue;
mod waitqueue;

pub use condvar::CondVar;
pub use hal::{SpinLock, SpinLockGuard};
pub use queue::Queue;
pub use waitqueue::WaitQueue;
