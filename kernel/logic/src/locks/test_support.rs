//! Shared harnesses for the lock tests, run with real OS threads.

use super::raw::RawLock;
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
