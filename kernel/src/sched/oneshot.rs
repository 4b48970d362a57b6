//! Each core's one-shot timer: the threads sleeping on it, sorted by
//! deadline, and arming it. Tickless: the timer is armed only for the
//! earliest sleeper, or for a time slice when a preemptive thread runs while
//! others wait. A core running one thread takes no timer interrupt at all.
//! Blocking on it and its interrupt are timer.rs's.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use hal::{apic, cpu, tsc, SpinLock, MAX_CPUS};

use super::cpus::this_cpu;
use super::running::with_current;
use super::thread::{State, NO_TIMER};
use super::user::Thread;

/// Time slice for preemptive threads that share a core: about what Linux's
/// scheduler gives each of two CPU-bound tasks on a 4-CPU machine. Each
/// switch costs a timer interrupt and the TLB's refill; under QEMU the
/// interrupt also waits for QEMU's global lock, held by the other vCPUs'
/// threads (with 2 ms slices, two programs on one core lost up to a third
/// of the core to that when the host was busy).
pub const QUANTUM_NS: u64 = 10_000_000;

struct CpuTimers {
    /// Sleepers, sorted by deadline (TSC).
    sleepers: SpinLock<Vec<(u64, Arc<Thread>)>>,
    /// When the timer is armed to fire (0 = not armed).
    armed_at: AtomicU64,
    /// Timer interrupts taken, for tests and benchmarks.
    interrupts: AtomicU64,
}

impl CpuTimers {
    const fn new() -> Self {
        CpuTimers {
            sleepers: SpinLock::new(Vec::new()),
            armed_at: AtomicU64::new(0),
            interrupts: AtomicU64::new(0),
        }
    }
}

static TIMERS: [CpuTimers; MAX_CPUS] = [const { CpuTimers::new() }; MAX_CPUS];

fn mine() -> &'static CpuTimers {
    &TIMERS[hal::cpu_index()]
}

/// Timer interrupts this CPU has taken (the self-tests count them).
#[cfg(feature = "testing")]
pub fn interrupts_on(cpu: usize) -> u64 {
    TIMERS[cpu].interrupts.load(Ordering::Relaxed)
}

/// A core (re)starting: its timer is not armed.
pub(super) fn reset(cpu: usize) {
    TIMERS[cpu].armed_at.store(0, Ordering::Relaxed);
}

/// A leaving core's sleepers move to core `to`, which rearms for them.
pub(super) fn hand_over(from: usize, to: usize) {
    let mut moved = TIMERS[from].sleepers.lock();
    if moved.is_empty() {
        return;
    }
    let mut dest = TIMERS[to].sleepers.lock();
    for (deadline, t) in moved.drain(..) {
        t.timer_cpu.store(to, Ordering::Release);
        let pos = dest.partition_point(|(d, _)| *d <= deadline);
        dest.insert(pos, (deadline, t));
    }
    drop(dest);
    drop(moved);
    hal::irq::send(to, atoll_abi::TIMER_VECTOR);
}

/// Puts `me`, the current thread, on this core's list until `deadline`
/// and arms the timer for it.
pub(super) fn add(me: &Arc<Thread>, deadline: u64) {
    let mut s = mine().sleepers.lock();
    let pos = s.partition_point(|(t, _)| *t <= deadline);
    s.insert(pos, (deadline, me.clone()));
    me.timer_cpu.store(hal::cpu_index(), Ordering::Release);
    drop(s);
    rearm();
}

/// Takes `me`'s timer entry back, from whichever core's list holds it
/// (a leaving core hands its list on).
pub(super) fn cancel(me: &Arc<Thread>) {
    loop {
        let cpu = me.timer_cpu.load(Ordering::Acquire);
        if cpu == NO_TIMER {
            return;
        }
        let mut s = TIMERS[cpu].sleepers.lock();
        if me.timer_cpu.load(Ordering::Acquire) == cpu {
            s.retain(|(_, t)| !Arc::ptr_eq(t, me));
            me.timer_cpu.store(NO_TIMER, Ordering::Release);
            return;
        }
    }
}

/// The timer has fired: counts it and takes this core's expired sleepers
/// off its list (the timer stays disarmed until the next `rearm`).
pub(super) fn fired() -> Vec<Arc<Thread>> {
    let t = mine();
    t.interrupts.fetch_add(1, Ordering::Relaxed);
    t.armed_at.store(0, Ordering::Relaxed);
    let now = cpu::rdtsc();
    let mut s = t.sleepers.lock();
    let n = s.partition_point(|(d, _)| *d <= now);
    s.drain(..n).map(|(_, th)| th).collect()
}

/// Programs this CPU's timer for the next thing that needs it, or stops it.
pub(super) fn rearm() {
    with_current(rearm_for);
}

/// As `rearm`, for `running`, the thread that runs (or is about to).
pub(super) fn rearm_for(running: &Thread) {
    let irqs = cpu::save_and_disable_interrupts();
    let t = mine();
    let mut next = t.sleepers.lock().first().map(|(d, _)| *d);
    let slice_needed =
        running.preemptive && running.state() == State::Running && this_cpu().ready_len() > 0;
    if slice_needed {
        let slice_end = cpu::rdtsc() + tsc::ns_to_cycles(QUANTUM_NS);
        next = Some(next.map_or(slice_end, |d| d.min(slice_end)));
    }
    match next {
        Some(at) => {
            let armed = t.armed_at.load(Ordering::Relaxed);
            if armed == 0 || at < armed || armed < cpu::rdtsc() {
                t.armed_at.store(at, Ordering::Relaxed);
                apic::arm_timer_at(at);
            }
        }
        None => {
            if t.armed_at.swap(0, Ordering::Relaxed) != 0 {
                apic::cancel_timer();
            }
        }
    }
    cpu::restore_interrupts(irqs);
}
