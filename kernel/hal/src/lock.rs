//! Kernel locks: a lock algorithm from `lwk_logic::locks` plus interrupt
//! masking, so a lock taken in an interrupt handler can never deadlock against
//! the code it interrupted. `lock_api` turns this into a guard-based Mutex.

use core::sync::atomic::{AtomicBool, Ordering};
use lwk_logic::locks::{RawLock, RawPmtLock};

use super::cpu;

pub struct IrqPmtLock {
    raw: RawPmtLock,
    irqs_were_enabled: AtomicBool,
}

// SAFETY: `raw` provides mutual exclusion; lock() returns only once it is held
// and unlock() is called only by the holder, as lock_api requires.
unsafe impl lock_api::RawMutex for IrqPmtLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self =
        IrqPmtLock { raw: RawPmtLock::new(), irqs_were_enabled: AtomicBool::new(false) };
    type GuardMarker = lock_api::GuardNoSend;

    fn lock(&self) {
        let was = cpu::save_and_disable_interrupts();
        self.raw.lock();
        self.irqs_were_enabled.store(was, Ordering::Relaxed);
    }

    fn try_lock(&self) -> bool {
        let was = cpu::save_and_disable_interrupts();
        if self.raw.try_lock() {
            self.irqs_were_enabled.store(was, Ordering::Relaxed);
            true
        } else {
            cpu::restore_interrupts(was);
            false
        }
    }

    unsafe fn unlock(&self) {
        let was = self.irqs_were_enabled.load(Ordering::Relaxed);
        self.raw.unlock();
        cpu::restore_interrupts(was);
    }

    fn is_locked(&self) -> bool {
        self.raw.is_locked()
    }
}

/// The kernel's spinlock: pmtlock (compact-static) with interrupts masked
/// while it is held.
pub type SpinLock<T> = lock_api::Mutex<IrqPmtLock, T>;
pub type SpinLockGuard<'a, T> = lock_api::MutexGuard<'a, IrqPmtLock, T>;
