//! Locks under contention from every core.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};
use lwk_logic::locks::{RawLock, RawTicketLock};

use super::{online_cpus, TestResult};
use crate::sync::SpinLock;
use crate::{ensure, sched};

const ROUNDS: u64 = 20_000;

pub fn pmtlock_contention() -> TestResult {
    let counter = Arc::new(SpinLock::new(0u64));
    let handles: Vec<_> = online_cpus()
        .map(|c| {
            let counter = counter.clone();
            sched::spawn(c, "pmt-hammer", move || {
                for _ in 0..ROUNDS {
                    *counter.lock() += 1;
                }
            })
        })
        .collect();
    let n = handles.len() as u64;
    handles.into_iter().for_each(|h| h.join());
    let got = *counter.lock();
    ensure!(got == n * ROUNDS, "lost updates: {} of {}", got, n * ROUNDS);
    Ok(())
}

pub fn ticket_contention() -> TestResult {
    // A non-atomic read-modify-write under the lock: any overlap loses updates.
    let shared = Arc::new((RawTicketLock::new(), AtomicU64::new(0)));
    let handles: Vec<_> = online_cpus()
        .map(|c| {
            let shared = shared.clone();
            sched::spawn(c, "ticket-hammer", move || {
                let (lock, value) = &*shared;
                for _ in 0..ROUNDS {
                    lock.lock();
                    let v = value.load(Ordering::Relaxed);
                    value.store(v + 1, Ordering::Relaxed);
                    lock.unlock();
                }
            })
        })
        .collect();
    let n = handles.len() as u64;
    handles.into_iter().for_each(|h| h.join());
    let got = shared.1.load(Ordering::Relaxed);
    ensure!(got == n * ROUNDS, "lost updates: {} of {}", got, n * ROUNDS);
    Ok(())
}
