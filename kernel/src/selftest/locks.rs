//! Locks under contention from every core.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use lwk_logic::locks::{RawLock, RawTicketLock};

use super::helpers::{online_cpus, TestResult};
use crate::sync::SpinLock;
use crate::{ensure, sched};

const ROUNDS: u64 = 20_000;

/// Runs `increment` ROUNDS times on every online core at once, then checks
/// that `read()` counted every one of them.
fn hammer_every_core(
    name: &str,
    increment: impl Fn() + Clone + Send + 'static,
    read: impl Fn() -> u64,
) -> TestResult {
    let handles: Vec<_> = online_cpus()
        .map(|c| {
            let increment = increment.clone();
            sched::spawn(c, name, move || (0..ROUNDS).for_each(|_| increment()))
        })
        .collect();
    let n = handles.len() as u64;
    handles.into_iter().for_each(|h| h.join());
    let got = read();
    ensure!(got == n * ROUNDS, "lost updates: {} of {}", got, n * ROUNDS);
    Ok(())
}

pub fn pmtlock_contention() -> TestResult {
    let counter = Arc::new(SpinLock::new(0u64));
    let c = counter.clone();
    hammer_every_core("pmt-hammer", move || *c.lock() += 1, || *counter.lock())
}

pub fn ticket_contention() -> TestResult {
    // A non-atomic read-modify-write under the lock: any overlap loses updates.
    let shared = Arc::new((RawTicketLock::new(), AtomicU64::new(0)));
    let s = shared.clone();
    let increment = move || {
        let (lock, value) = &*s;
        lock.lock();
        let v = value.load(Ordering::Relaxed);
        value.store(v + 1, Ordering::Relaxed);
        lock.unlock();
    };
    hammer_every_core("ticket-hammer", increment, || shared.1.load(Ordering::Relaxed))
}
