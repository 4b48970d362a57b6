//! Synchronization: the pmtlock-based SpinLock (from the hardware layer, as
//! it masks interrupts), wait queues and condition variables whose
//! cross-core wake-ups kick the target core with an IPI.

// Only the self-tests and benchmarks wait on condition variables so far.
#[cfg(feature = "testing")]
mod condvar;
mod queue;
mod waitqueue;

#[cfg(feature = "testing")]
pub use condvar::CondVar;
pub use hal::SpinLock;
pub use queue::Queue;
pub use waitqueue::WaitQueue;
