//! Threads, scheduling, sleeping and the tickless timer.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use super::helpers::{last_cpu, online_cpus, TestResult};
use crate::ensure;
use crate::sched::{self, timer, Spawn};
use crate::sync::SpinLock;
use hal::println;
use hal::smp;
use hal::{apic, cpu, percpu, tsc};

pub fn on_every_core() -> TestResult {
    let handles: Vec<_> = online_cpus()
        .map(|c| {
            (
                c,
                sched::spawn(c, "where-am-i", move || {
                    (percpu::cpu_index(), apic::id(), sched::current().id)
                }),
            )
        })
        .collect();
    for (c, h) in handles {
        let (ran_on, apic_id, tid) = h.join();
        println!("    cpu {}: thread {} ran here (APIC id {})", ran_on, tid, apic_id);
        ensure!(ran_on == c, "thread for CPU {} ran on CPU {}", c, ran_on);
        ensure!(
            apic_id == smp::apic_id_of(c),
            "CPU {} has APIC id {}, MADT said {}",
            c,
            apic_id,
            smp::apic_id_of(c)
        );
    }
    Ok(())
}

pub fn fork_join() -> TestResult {
    let per_core = 16u64;
    let mut handles = Vec::new();
    for c in online_cpus() {
        for k in 0..per_core {
            let base = (c as u64 * per_core + k) * 1000;
            handles.push(sched::spawn(c, "worker", move || (base..base + 1000).sum::<u64>()));
        }
    }
    let n = handles.len() as u64 * 1000;
    let total: u64 = handles.into_iter().map(|h| h.join()).sum();
    ensure!(total == n * (n - 1) / 2, "fork/join sum {} != {}", total, n * (n - 1) / 2);
    Ok(())
}

pub fn cooperative_yield() -> TestResult {
    // Both threads wait for `go` (yielding), so neither can finish before the
    // other exists; from then on each yield must hand over to the other.
    let log = Arc::new(SpinLock::new(Vec::new()));
    let go = Arc::new(AtomicU64::new(0));
    let c = last_cpu();
    let mk = |tag: u8| {
        let (log, go) = (log.clone(), go.clone());
        move || {
            while go.load(Ordering::SeqCst) == 0 {
                sched::yield_now();
            }
            for _ in 0..5 {
                log.lock().push(tag);
                sched::yield_now();
            }
        }
    };
    let a = sched::spawn(c, "yield-a", mk(b'a'));
    let b = sched::spawn(c, "yield-b", mk(b'b'));
    go.store(1, Ordering::SeqCst);
    a.join();
    b.join();
    let got = log.lock().clone();
    ensure!(got == b"ababababab" || got == b"bababababa", "order {:?}", core::str::from_utf8(&got));
    Ok(())
}

pub fn preemption() -> TestResult {
    // Two threads that never yield share one core: both make progress only if
    // the timer preempts them. The window is many slices long, so a slow
    // start (the software /dev/kvm back end runs this suite at a crawl) still
    // leaves the second thread its turn.
    let c = last_cpu();
    let window = tsc::ns_to_cycles(20 * timer::QUANTUM_NS);
    let end = cpu::rdtsc() + window;
    let spin = move || {
        let mut first = 0;
        let mut n = 0u64;
        while cpu::rdtsc() < end {
            if n == 0 {
                first = cpu::rdtsc();
            }
            n += 1;
        }
        (first, n)
    };
    let a = Spawn::on(c, "spin-a").preemptive().start(spin);
    let b = Spawn::on(c, "spin-b").preemptive().start(spin);
    let ((fa, na), (fb, nb)) = (a.join(), b.join());
    ensure!(na > 0 && nb > 0, "a thread never ran: {} / {} iterations", na, nb);
    ensure!(fa < end && fb < end, "one thread started only after the other finished");
    Ok(())
}

pub fn sleep_on_every_core() -> TestResult {
    let ns = 20_000_000;
    let handles: Vec<_> = online_cpus()
        .map(|c| {
            sched::spawn(c, "sleeper", move || {
                let t0 = cpu::rdtsc();
                sched::sleep_ns(ns);
                tsc::cycles_to_ns(cpu::rdtsc() - t0)
            })
        })
        .collect();
    for h in handles {
        let slept = h.join();
        ensure!(slept >= ns, "woke after {} ns, asked for {}", slept, ns);
    }
    Ok(())
}

pub fn tickless() -> TestResult {
    // A core running a single thread must take no timer interrupts.
    let c = last_cpu();
    let before = Arc::new(AtomicU64::new(0));
    let b = before.clone();
    let h = sched::spawn(c, "alone", move || {
        b.store(timer::interrupts_on(percpu::cpu_index()), Ordering::SeqCst);
        let end = cpu::rdtsc() + tsc::ns_to_cycles(100_000_000);
        while cpu::rdtsc() < end {
            cpu::relax();
        }
        timer::interrupts_on(percpu::cpu_index())
    });
    let after = h.join();
    let before = before.load(Ordering::SeqCst);
    ensure!(after == before, "{} timer interrupts while one thread ran", after - before);
    Ok(())
}
