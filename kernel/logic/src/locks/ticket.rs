//! The classic FIFO ticket lock.

use super::raw::RawLock;
use core::hint::spin_loop;
use core::sync::atomic::{AtomicU16, Ordering::*};

/// Ticket spinlock: waiters take increasing tickets from `tail` and enter
/// when `head` ("now serving") reaches theirs, so the lock is granted in
/// strict arrival order.
///
/// Fairness is also its weakness: if the next-in-line waiter is not running
/// (preempted vCPU, interrupt storm), the lock stays idle until it runs
/// again, even though other waiters are spinning on a free lock.
///
/// Counters are `u16` and wrap; at most 65535 waiters may queue at once.
pub struct RawTicketLock {
    /// Ticket currently allowed in.
    head: AtomicU16,
    /// Next ticket to hand out.
    tail: AtomicU16,
}

impl RawTicketLock {
    /// An unlocked lock.
    pub const fn new() -> Self {
        Self::with_counters(0, 0)
    }

    /// A lock whose counters start at arbitrary values (wrap-around tests).
    pub(crate) const fn with_counters(head: u16, tail: u16) -> Self {
        Self { head: AtomicU16::new(head), tail: AtomicU16::new(tail) }
    }
}

impl Default for RawTicketLock {
    fn default() -> Self {
        Self::new()
    }
}

impl RawLock for RawTicketLock {
    fn lock(&self) {
        let ticket = self.tail.fetch_add(1, Relaxed);
        while self.head.load(Acquire) != ticket {
            spin_loop();
        }
    }

    fn try_lock(&self) -> bool {
        // Free means nobody holds or waits: tail == head. Taking ticket
        // `head` in that state makes it our turn immediately.
        let head = self.head.load(Acquire);
        self.tail.compare_exchange(head, head.wrapping_add(1), Acquire, Relaxed).is_ok()
    }

    fn unlock(&self) {
        self.head.fetch_add(1, Release);
    }

    fn is_locked(&self) -> bool {
        self.head.load(Relaxed) != self.tail.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{arrival_order, contention_threads, hammer};
    use super::*;

    #[test]
    fn mutual_exclusion_under_contention() {
        let lock = RawTicketLock::new();
        hammer(&lock, contention_threads(), 100_000, |l| l.lock());
    }

    #[test]
    fn grants_in_arrival_order() {
        let lock = RawTicketLock::new();
        let taken =
            |l: &RawTicketLock| l.tail.load(Relaxed).wrapping_sub(l.head.load(Relaxed)) as usize;
        let order = arrival_order(&lock, 8, |l| l.lock(), taken);
        assert_eq!(order, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn try_lock_semantics() {
        let lock = RawTicketLock::new();
        assert!(!lock.is_locked());
        assert!(lock.try_lock());
        assert!(lock.is_locked());
        assert!(!lock.try_lock());
        lock.unlock();
        assert!(!lock.is_locked());
        lock.lock();
        assert!(!lock.try_lock());
        lock.unlock();
        assert!(lock.try_lock());
        lock.unlock();
    }

    #[test]
    fn counters_wrap_around() {
        let lock = RawTicketLock::with_counters(u16::MAX - 2, u16::MAX - 2);
        for _ in 0..6 {
            assert!(!lock.is_locked());
            lock.lock();
            assert!(lock.is_locked());
            assert!(!lock.try_lock());
            lock.unlock();
            assert!(lock.try_lock());
            lock.unlock();
        }
        assert_eq!(lock.head.load(Relaxed), 9);
        let lock = RawTicketLock::with_counters(u16::MAX - 100, u16::MAX - 100);
        hammer(&lock, contention_threads(), 20_000, |l| l.lock());
    }
}
