//! IPIs and cross-core wake-ups.

use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

use super::helpers::{online_cpus, wait_for, TestResult};
use crate::sync::{CondVar, SpinLock};
use crate::{ensure, sched};
use hal::irq as ipi;
use hal::percpu::{self, MAX_CPUS};

static HITS: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];

fn count_hit(_vector: u8) {
    HITS[percpu::cpu_index()].fetch_add(1, Ordering::SeqCst);
}

fn hits(c: usize) -> u64 {
    HITS[c].load(Ordering::SeqCst)
}

pub fn ipi_unicast() -> TestResult {
    let v = ipi::allocate(count_hit).ok_or("no free vector")?;
    let me = percpu::cpu_index();
    let mut result = Ok(());
    for c in online_cpus() {
        let before = hits(c);
        ipi::send(c, v);
        if !wait_for(1000, || hits(c) == before + 1) {
            result = Err(alloc::format!("CPU {} did not take the IPI (from CPU {})", c, me));
            break;
        }
    }
    ipi::release(v);
    result
}

pub fn ipi_broadcast() -> TestResult {
    let v = ipi::allocate(count_hit).ok_or("no free vector")?;
    let me = percpu::cpu_index();
    let before: alloc::vec::Vec<u64> = (0..MAX_CPUS).map(hits).collect();
    ipi::broadcast(v);
    let others = || online_cpus().filter(move |&c| c != me);
    let ok = wait_for(1000, || others().all(|c| hits(c) == before[c] + 1));
    let mine_untouched = hits(me) == before[me];
    ipi::release(v);
    ensure!(ok, "not every other CPU took the broadcast");
    ensure!(mine_untouched, "the sender received its own all-but-self broadcast");
    Ok(())
}

/// A flag, the condition variable that announces it, and how many waiters
/// have started waiting.
type Flag = (SpinLock<bool>, CondVar, AtomicU64);

fn new_flag() -> Arc<Flag> {
    Arc::new((SpinLock::new(false), CondVar::new(true), AtomicU64::new(0)))
}

/// Spawns a thread on `cpu` that sleeps on the condvar until the flag is set.
fn spawn_flag_waiter(cpu: usize, state: &Arc<Flag>) -> sched::JoinHandle<()> {
    let s = state.clone();
    sched::spawn(cpu, "cv-waiter", move || {
        let (flag, cv, waiting) = &*s;
        let mut g = flag.lock();
        waiting.fetch_add(1, Ordering::SeqCst);
        while !*g {
            g = cv.wait(g);
        }
    })
}

pub fn condvar_broadcast() -> TestResult {
    // Two waiters on every core; one broadcast must wake all of them.
    let state = new_flag();
    let waiters: alloc::vec::Vec<_> =
        online_cpus().flat_map(|c| [c, c]).map(|c| spawn_flag_waiter(c, &state)).collect();
    let n = waiters.len() as u64;
    ensure!(wait_for(1000, || state.2.load(Ordering::SeqCst) == n), "not every waiter started");
    let woken = {
        let mut g = state.0.lock();
        *g = true;
        state.1.broadcast()
    };
    ensure!(
        wait_for(1000, || waiters.iter().all(|w| w.thread().is_finished())),
        "a waiter slept through the broadcast"
    );
    ensure!(woken as u64 == n, "broadcast woke {} of {} waiters", woken, n);
    waiters.into_iter().for_each(|w| w.join());
    Ok(())
}

pub fn cross_core_wakeup() -> TestResult {
    // A waiter on every other core sleeps on a condition variable; CPU 0 sets
    // the flag and signals; the kick IPI must wake each waiter.
    for c in online_cpus() {
        for _ in 0..20 {
            let state = new_flag();
            let waiter = spawn_flag_waiter(c, &state);
            ensure!(
                wait_for(1000, || state.2.load(Ordering::SeqCst) == 1),
                "waiter on CPU {} never started",
                c
            );
            *state.0.lock() = true;
            state.1.signal();
            ensure!(
                wait_for(1000, || waiter.thread().is_finished()),
                "waiter on CPU {} was not woken",
                c
            );
            waiter.join();
        }
    }
    Ok(())
}
