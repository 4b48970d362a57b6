//! Sleeping and preemption on one-shot timer interrupts. Tickless: the timer
//! is armed only for the earliest sleeper, or for a time slice when a
//! preemptive thread runs while others wait. A core running one thread takes
//! no timer interrupt at all.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use atoll_abi::TIMER_VECTOR;
use hal::{apic, cpu, tsc, MAX_CPUS};

pub(super) use super::thread::NO_TIMER;
use super::{current, this_cpu, wake, with_current, State, Thread};
use hal::SpinLock;

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
    pub interrupts: AtomicU64,
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
    hal::irq::send(to, TIMER_VECTOR);
}

/// Takes `me`'s timer entry back, from whichever core's list holds it
/// (a leaving core hands its list on).
fn cancel(me: &Arc<Thread>) {
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

pub fn sleep_until(deadline: u64) {
    current().mark_blocked();
    block_until(Some(deadline));
}

/// Blocks the current thread, which the caller has already marked blocked
/// and made findable by its waker, until it is woken or, with a deadline,
/// until then. Returns true if the deadline passed.
pub fn block_until(deadline: Option<u64>) -> bool {
    let irqs = cpu::save_and_disable_interrupts();
    let me = current();
    if let Some(d) = deadline {
        let mut s = mine().sleepers.lock();
        let pos = s.partition_point(|(t, _)| *t <= d);
        s.insert(pos, (d, me.clone()));
        me.timer_cpu.store(hal::cpu_index(), Ordering::Release);
        drop(s);
        rearm();
    }
    super::schedule();
    cpu::restore_interrupts(irqs);
    let Some(d) = deadline else { return false };
    // Woken early: take the timer entry back so it cannot wake a later block.
    cancel(&me);
    cpu::rdtsc() >= d
}

/// Programs this CPU's timer for the next thing that needs it, or stops it.
pub fn rearm() {
    with_current(rearm_for);
}

/// As `rearm`, for `running`, the thread that runs (or is about to).
pub fn rearm_for(running: &Thread) {
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

/// The timer interrupt: wake expired sleepers, ask for a reschedule.
pub fn on_interrupt() {
    let t = mine();
    t.interrupts.fetch_add(1, Ordering::Relaxed);
    t.armed_at.store(0, Ordering::Relaxed);
    let now = cpu::rdtsc();
    let expired: Vec<_> = {
        let mut s = t.sleepers.lock();
        let n = s.partition_point(|(d, _)| *d <= now);
        s.drain(..n).map(|(_, th)| th).collect()
    };
    for th in &expired {
        wake(th, true); // a sleeper moved elsewhere needs its core woken
    }
    super::request_resched();
    rearm();
}
