//! Synchronization: the pmtlock-based SpinLock, wait queues and condition
//! variables whose cross-core wake-ups kick the target core with an IPI.

mod condvar;
mod waitqueue;

pub use condvar::CondVar;
pub use waitqueue::WaitQueue;

/// The kernel's spinlock: pmtlock (compact-static) with interrupts masked
/// while held.
pub type SpinLock<T> = lock_api::Mutex<crate::arch::lock::IrqPmtLock, T>;
pub type SpinLockGuard<'a, T> = lock_api::MutexGuard<'a, crate::arch::lock::IrqPmtLock, T>;
