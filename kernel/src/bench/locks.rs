//! fairbench (Ouyang Ch. 3): one thread per core takes one shared lock over
//! and over for a fixed time. Throughput is acquisitions per second; fairness
//! is Jain's index over the per-thread counts. With more vCPUs than host
//! cores, QEMU's threads get preempted: the lock-waiter preemption pmtlock is
//! built for.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use lwk_logic::locks::{default_tau, RawLock, RawPmtLock, RawTicketLock};
use lwk_logic::stats::jain_index;

use crate::sched;
use hal::println;
use hal::{cpu, tsc};

const RUN_MS: u64 = 2000;
/// Work inside and outside the critical section, in loop iterations.
const INSIDE: u64 = 200;
const OUTSIDE: u64 = 400;

fn busy(iterations: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..iterations {
        x = core::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
    }
    x
}

fn run<L: RawLock + Send + Sync + 'static>(name: &str, lock: L) -> (f64, f64) {
    let cpus: Vec<usize> = hal::smp::online_cpus().collect();
    let shared = Arc::new((lock, AtomicU64::new(0), AtomicBool::new(false), AtomicU64::new(0)));
    let handles: Vec<_> = cpus
        .iter()
        .map(|&c| {
            let s = shared.clone();
            // Preemptive, so the benchmark's own thread on CPU 0 gets back in
            // when its sleep ends; with one thread per core no slice is armed.
            sched::Spawn::on(c, "fairbench").preemptive().start(move || {
                let (lock, counter, stop, ready) = &*s;
                ready.fetch_add(1, Ordering::SeqCst);
                let mut mine = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    lock.lock();
                    let v = counter.load(Ordering::Relaxed);
                    busy(INSIDE);
                    counter.store(v + 1, Ordering::Relaxed);
                    lock.unlock();
                    mine += 1;
                    busy(OUTSIDE);
                }
                mine
            })
        })
        .collect();
    while shared.3.load(Ordering::SeqCst) < cpus.len() as u64 {
        sched::yield_now();
    }
    let t0 = cpu::rdtsc();
    sched::sleep_ns(RUN_MS * 1_000_000);
    shared.2.store(true, Ordering::Relaxed);
    let counts: Vec<u64> = handles.into_iter().map(|h| h.join()).collect();
    let secs = tsc::cycles_to_ns(cpu::rdtsc() - t0) as f64 / 1e9;
    let total: u64 = counts.iter().sum();
    assert_eq!(total, shared.1.load(Ordering::Relaxed), "{name}: lost updates");
    let throughput = total as f64 / secs;
    let jain = jain_index(&counts);
    println!(
        "result lock_{} unit=acq/s throughput={:.0} jain={:.3} threads={} per_thread={:?}",
        name,
        throughput,
        jain,
        counts.len(),
        counts
    );
    (throughput, jain)
}

/// pmtlock with an explicit unit timeout, for the tau sweep.
struct PmtWithTau(RawPmtLock, u32);

impl RawLock for PmtWithTau {
    fn lock(&self) {
        self.0.lock_with_tau(self.1)
    }
    fn try_lock(&self) -> bool {
        self.0.try_lock()
    }
    fn unlock(&self) {
        self.0.unlock()
    }
    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
}

/// Unit timeouts swept (spin iterations per waiter ahead), as in Ouyang Fig. 9/10.
const TAUS: [u32; 4] = [16, 64, 256, 1024];

pub fn fairbench() {
    let (ticket, ticket_jain) = run("ticket", RawTicketLock::new());
    for tau in TAUS {
        let (t, j) = run(&alloc::format!("pmtlock_tau{}", tau), PmtWithTau(RawPmtLock::new(), tau));
        println!(
            "    tau {:>4}: pmtlock/ticket throughput {:.2}x, Jain {:.3}",
            tau,
            t / ticket.max(1.0),
            j
        );
    }
    let (pmt, pmt_jain) = run("pmtlock", RawPmtLock::new());
    println!(
        "    fairbench, {} ms: pmtlock (default tau {}) {:.0} acq/s (Jain {:.3}), \
         ticket {:.0} acq/s (Jain {:.3}): {:.2}x",
        RUN_MS,
        default_tau(),
        pmt,
        pmt_jain,
        ticket,
        ticket_jain,
        pmt / ticket.max(1.0)
    );
}
