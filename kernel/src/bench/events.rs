//! Cross-core events: condition-variable wake-up with and without the IPI kick
//! (Nemo, Hale Ch. 6), and the raw IPI round trip.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

use super::report::{other_cpu, report_latency};
use crate::sched::{self, Spawn, State};
use crate::sync::{CondVar, SpinLock};
use hal::irq as ipi;
use hal::println;
use hal::{cpu, tsc};

const WAKEUPS: u64 = 200;
const IPI_ROUNDS: usize = 1000;
/// The background thread on the waiter's core yields this often; without a
/// kick, a signalled waiter waits for that yield.
const BACKGROUND_YIELD_US: u64 = 100;

struct Shared {
    seq: SpinLock<u64>,
    cv: CondVar,
    woke_at: AtomicU64,
    acked: AtomicU64,
}

fn wakeups(target: usize, kick: bool) -> Vec<u64> {
    let s = Arc::new(Shared {
        seq: SpinLock::new(0),
        cv: CondVar::new(kick),
        woke_at: AtomicU64::new(0),
        acked: AtomicU64::new(0),
    });
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let background = Spawn::on(target, "background").preemptive().start(move || {
        while !st.load(Ordering::Relaxed) {
            tsc::delay_us(BACKGROUND_YIELD_US);
            sched::yield_now();
        }
    });
    let w = s.clone();
    let waiter = sched::spawn(target, "waiter", move || {
        for i in 1..=WAKEUPS {
            let mut g = w.seq.lock();
            while *g < i {
                g = w.cv.wait(g);
            }
            drop(g);
            w.woke_at.store(cpu::rdtsc(), Ordering::SeqCst);
            w.acked.store(i, Ordering::SeqCst);
        }
    });
    let mut samples = Vec::new();
    for i in 1..=WAKEUPS {
        while waiter.thread().state() != State::Blocked {
            cpu::relax();
        }
        let t0 = cpu::rdtsc();
        *s.seq.lock() = i;
        s.cv.signal();
        while s.acked.load(Ordering::SeqCst) != i {
            cpu::relax();
        }
        samples.push(s.woke_at.load(Ordering::SeqCst).saturating_sub(t0));
    }
    waiter.join();
    stop.store(true, Ordering::Relaxed);
    background.join();
    samples
}

pub fn wakeup_latency() {
    let Some(target) = other_cpu() else {
        println!("bench: wake-up latency needs two CPUs; skipped");
        return;
    };
    let kick = report_latency("wakeup_condvar_ipi_kick", &mut wakeups(target, true));
    let nokick = report_latency("wakeup_condvar_no_kick", &mut wakeups(target, false));
    println!(
        "    condvar wake-up on another core: median {} ns with IPI kick, {} ns without ({:.1}x)",
        kick.median,
        nokick.median,
        nokick.median as f64 / kick.median.max(1) as f64
    );
}

static PING: AtomicU8 = AtomicU8::new(0);
static PONG: AtomicU8 = AtomicU8::new(0);
static PONGED: AtomicBool = AtomicBool::new(false);

fn on_ping(_: u8) {
    ipi::send(0, PONG.load(Ordering::SeqCst));
}

fn on_pong(_: u8) {
    PONGED.store(true, Ordering::SeqCst);
}

pub fn ipi_round_trip() {
    let Some(target) = other_cpu() else {
        println!("bench: IPI round trip needs two CPUs; skipped");
        return;
    };
    let (Some(ping), Some(pong)) = (ipi::allocate(on_ping), ipi::allocate(on_pong)) else {
        println!("bench: no free vectors; IPI round trip skipped");
        return;
    };
    PING.store(ping, Ordering::SeqCst);
    PONG.store(pong, Ordering::SeqCst);
    let mut samples = Vec::with_capacity(IPI_ROUNDS);
    for _ in 0..IPI_ROUNDS {
        PONGED.store(false, Ordering::SeqCst);
        let t0 = cpu::rdtsc();
        ipi::send(target, ping);
        while !PONGED.load(Ordering::SeqCst) {
            cpu::relax();
        }
        samples.push(cpu::rdtsc() - t0);
    }
    ipi::release(ping);
    ipi::release(pong);
    report_latency("ipi_round_trip", &mut samples);
}
