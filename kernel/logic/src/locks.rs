//! Spinlock algorithms used by the kernel and benchmarked against each other.
//!
//! Both locks here are *raw*: they guard no data, they only order critical
//! sections. The kernel wraps them in its own guard types.
//!
//! * [`RawTicketLock`] — the classic FIFO ticket lock: fair, but if the waiter
//!   whose turn is next has been preempted (lock-waiter preemption, common for
//!   virtual CPUs), every waiter behind it stalls until it runs again.
//! * [`RawPmtLock`] — Ouyang & Lange's preemptable ticket lock, which keeps FIFO
//!   order while everyone is responsive but lets a waiter that has waited
//!   "long enough" take a free lock out of order.

mod pmt;
mod ticket;

pub use pmt::{default_tau, set_default_tau, RawPmtLock};
pub use ticket::RawTicketLock;

/// A lock that protects no data by itself.
///
/// `unlock` must only be called by the holder of a successful `lock` or
/// `try_lock`; the algorithms do not check ownership.
pub trait RawLock: Sync {
    /// Blocks (spinning) until the lock is held by the caller.
    fn lock(&self);
    /// Takes the lock if that is possible without waiting behind others.
    fn try_lock(&self) -> bool;
    /// Releases the lock held by the caller.
    fn unlock(&self);
    /// Whether the lock is held or has waiters queued (a racy snapshot).
    fn is_locked(&self) -> bool;
}

#[cfg(test)]
pub(crate) mod test_support {
    //! Shared harnesses for the lock tests, run with real OS threads.

    use super::RawLock;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
    use std::sync::{Barrier, Mutex};
    use std::time::{Duration, Instant};

    /// Threads to use for contention tests: enough to contend, but not so
    /// many that a FIFO lock spends the test waiting on preempted waiters
    /// (the very problem pmtlock addresses) on a small CI machine.
    pub(crate) fn contention_threads() -> usize {
        std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 4)
    }

    /// Runs `threads × iters` critical sections and checks that none overlap
    /// and no increment is lost. The counter is a relaxed load followed by a
    /// relaxed store: without mutual exclusion updates get lost, yet no
    /// `unsafe` is needed to detect it.
    pub(crate) fn hammer<L: RawLock>(
        lock: &L,
        threads: usize,
        iters: u64,
        acquire: impl Fn(&L) + Sync,
    ) {
        let counter = AtomicU64::new(0);
        let inside = AtomicBool::new(false);
        // Start together, or a fast thread may finish before the next one
        // is even spawned and nothing gets tested.
        let start = Barrier::new(threads);
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    start.wait();
                    for _ in 0..iters {
                        acquire(lock);
                        assert!(!inside.swap(true, Relaxed), "two holders at once");
                        let v = counter.load(Relaxed);
                        counter.store(v + 1, Relaxed);
                        inside.store(false, Relaxed);
                        lock.unlock();
                    }
                });
            }
        });
        assert_eq!(counter.load(Relaxed), threads as u64 * iters);
        assert!(!lock.is_locked());
    }

    /// Queues `n` threads behind a held lock, one at a time (waiting until
    /// each has taken its ticket, observed through `tickets_taken`), then
    /// releases and returns the order in which they got the lock.
    pub(crate) fn arrival_order<L: RawLock>(
        lock: &L,
        n: usize,
        acquire: impl Fn(&L) + Sync,
        tickets_taken: impl Fn(&L) -> usize,
    ) -> Vec<usize> {
        let order = Mutex::new(Vec::new());
        acquire(lock);
        std::thread::scope(|s| {
            for i in 0..n {
                let (order, acquire) = (&order, &acquire);
                s.spawn(move || {
                    acquire(lock);
                    order.lock().unwrap().push(i);
                    lock.unlock();
                });
                wait_until(|| tickets_taken(lock) == i + 2);
            }
            lock.unlock();
        });
        order.into_inner().unwrap()
    }

    /// Spins (with sleeps) until `cond` holds; fails the test after 10 s.
    pub(crate) fn wait_until(cond: impl Fn() -> bool) {
        let start = Instant::now();
        while !cond() {
            assert!(start.elapsed() < Duration::from_secs(10), "timed out waiting");
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}
