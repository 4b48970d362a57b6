//! The core of the scheduler: picking the next thread on this core and
//! switching to it, queueing woken threads on their cores, preemption, and
//! moving threads between cores. Cross-core wake-ups put the thread on its
//! core's queue and (by default) kick that core.

use alloc::sync::Arc;
use atoll_abi::RESCHED_VECTOR;
use core::sync::atomic::Ordering;
use hal::cpu;
use hal::task::Context;

use super::cpus::{active_cpus, is_leaving, new_home, this_cpu, CpuSched, CPUS};
use super::oneshot;
use super::running::{current, switcher, with_current};
use super::thread::State;
use super::user::{self, Thread};

/// Picks the next thread on this CPU and switches to it. Returns when the
/// calling thread runs again (at once if nothing else is ready).
pub fn schedule() {
    let irqs = cpu::save_and_disable_interrupts();
    let me = this_cpu();
    me.need_resched.store(false, Ordering::Relaxed);
    let prev = current();
    let leaving = is_leaving(hal::cpu_index());
    if leaving && !prev.is_idle && prev.cpu() == hal::cpu_index() {
        // Queued on its new core once off this one (Thread::left_cpu).
        prev.set_cpu(new_home(&prev));
    }
    let next = if leaving { None } else { pop_mine(me) };
    let next = match next {
        Some(t) => t,
        None if prev.state() == State::Running && prev.cpu() == hal::cpu_index() => {
            cpu::restore_interrupts(irqs);
            return;
        }
        None => me.idle(),
    };
    if Arc::ptr_eq(&prev, &next) {
        next.set_state(State::Running);
        cpu::restore_interrupts(irqs);
        return;
    }
    // A preempted thread is queued here, or, if it moves to another core,
    // there once off this one (Thread::left_cpu); a dead one is freed then.
    // A thread a waker made ready is the waker's to queue.
    if prev.state() == State::Running {
        prev.set_state(State::Ready);
        if prev.is_idle {
            // The idle thread is never queued: schedule() falls back on it.
        } else if prev.cpu() != hal::cpu_index() {
            prev.hand_over.store(true, Ordering::Release);
        } else if !prev.queued.swap(true, Ordering::AcqRel) {
            me.ready.lock().threads.push_back(prev.clone());
        }
    }
    // A thread woken while its old core was still switching it out: that
    // core decides about it (hand over or not) from its state, so it
    // becomes Running only once it is off that core.
    switcher().wait_off_cpu(&next);
    next.set_state(State::Running);
    me.context_switches.fetch_add(1, Ordering::Relaxed);
    oneshot::rearm_for(&next);
    user::switch(prev.user.as_deref(), next.user.as_deref());
    drop(prev);
    switcher().switch_to(next);
    cpu::restore_interrupts(irqs);
}

/// The next ready thread of this core; one moved to another core while
/// queued here goes there instead.
fn pop_mine(me: &CpuSched) -> Option<Arc<Thread>> {
    loop {
        let t = me.ready.lock().threads.pop_front()?;
        t.queued.store(false, Ordering::Release);
        if t.cpu() == hal::cpu_index() {
            return Some(t);
        }
        enqueue(&t, true);
    }
}

/// Moves the running thread to `cpu`; returns running there. A core that
/// is leaving (or gone) takes nothing: the thread stays where it is.
pub fn migrate_current(cpu: usize) {
    let me = current();
    if me.cpu() == cpu || me.is_idle || !active_cpus().any(|c| c == cpu) {
        return;
    }
    me.set_cpu(cpu);
    drop(me);
    schedule();
}

/// Moves thread `t` to core `to`, whatever it is doing: queued elsewhere,
/// its old core hands it on; running, it is switched out there and queued
/// on `to`; blocked, its waker queues it on `to`.
pub fn move_thread(t: &Arc<Thread>, to: usize) {
    let from = t.cpu();
    if from == to || t.is_idle {
        return;
    }
    t.set_cpu(to);
    if from == hal::cpu_index() {
        request_resched();
    } else {
        hal::irq::send(from, RESCHED_VECTOR);
    }
}

/// Queues `t` on its core; a core that has left hands it to a new home.
/// A thread is on one queue at most: one already queued (perhaps on the
/// core it was moved away from, which hands it on) stays where it is.
pub(super) fn enqueue(t: &Arc<Thread>, kick: bool) {
    enqueue_at(t, kick, false);
}

/// As `enqueue`; `first`: ahead of the threads queued there.
fn enqueue_at(t: &Arc<Thread>, kick: bool, first: bool) {
    if t.queued.swap(true, Ordering::AcqRel) {
        return;
    }
    let cpu = loop {
        let cpu = t.cpu();
        let mut q = CPUS[cpu].ready.lock();
        if !q.gone {
            if first {
                q.threads.push_front(t.clone());
            } else {
                q.threads.push_back(t.clone());
            }
            break cpu;
        }
        drop(q);
        t.set_cpu(new_home(t));
    };
    if cpu == hal::cpu_index() {
        oneshot::rearm();
    } else if kick {
        hal::irq::send(cpu, RESCHED_VECTOR);
    }
}

impl hal::task::Task for Thread {
    fn context(&self) -> &Context {
        &self.context
    }

    /// A thread that moved to another core is queued there once off this one.
    fn left_cpu(thread: &Arc<Thread>) {
        if thread.hand_over.swap(false, Ordering::AcqRel) {
            enqueue(thread, true);
        }
    }
}

/// Makes a blocked thread runnable on its own core.
pub fn wake(t: &Arc<Thread>, kick: bool) {
    if t.try_unblock() {
        enqueue(t, kick);
    }
}

/// Makes a blocked thread run next on its core, ahead of the threads
/// queued there and in place of the one running there now (at once on
/// another core, which the IPI makes reschedule; here at the caller's
/// next `schedule`). True if it was blocked.
pub fn wake_first(t: &Arc<Thread>) -> bool {
    if !t.try_unblock() {
        return false;
    }
    enqueue_at(t, true, true);
    if t.cpu() == hal::cpu_index() {
        request_resched();
    }
    true
}

/// Makes `t` look at its state soon: woken if it is blocked, interrupted
/// if it runs on another core (it checks on its way back to user mode).
pub fn kick(t: &Arc<Thread>) {
    wake(t, true);
    if t.cpu() != hal::cpu_index() {
        hal::irq::send(t.cpu(), RESCHED_VECTOR);
    }
}

/// Lets other ready threads on this core run.
pub fn yield_now() {
    schedule();
}

/// Called on the way out of an interrupt: switch if asked and allowed.
pub fn preempt_point() {
    let me = this_cpu();
    if !me.need_resched.load(Ordering::Relaxed) {
        return;
    }
    // A thread that has marked itself blocked is on its way into schedule()
    // and may not be registered with its waker (or timer) yet: leave it be.
    let allowed = with_current(|t| {
        t.is_idle
            || (t.preemptive
                && t.state() == State::Running
                && t.no_preempt.load(Ordering::Relaxed) == 0
                && !holds(t))
    });
    if allowed {
        schedule();
    }
}

/// While it lives, the current thread is not preempted, so it stays on
/// its core (it must not block): for code that works on "this core"
/// with interrupts on. A reschedule asked for meanwhile happens at its end.
pub struct NoPreempt(());

pub fn no_preempt() -> NoPreempt {
    with_current(|t| t.no_preempt.fetch_add(1, Ordering::Relaxed));
    NoPreempt(())
}

impl Drop for NoPreempt {
    fn drop(&mut self) {
        let irqs = cpu::save_and_disable_interrupts();
        if with_current(|t| t.no_preempt.fetch_sub(1, Ordering::Relaxed)) == 1 {
            preempt_point();
        }
        cpu::restore_interrupts(irqs);
    }
}

/// How long a program may hold its core against preemption (`hold`).
const HOLD_MAX_NS: u64 = atoll_abi::HRT_HOLD_MAX_US * 1000;

/// The thread holds its core (`hold`), and not for longer than allowed.
fn holds(t: &Thread) -> bool {
    let since = t.held_since.load(Ordering::Relaxed);
    since != 0 && hal::cpu::rdtsc().wrapping_sub(since) < hal::tsc::ns_to_cycles(HOLD_MAX_NS)
}

/// A program thread's interrupt-off region in ring 3 (docs/hrt.md): while
/// held, the current thread is not preempted, up to HOLD_MAX_NS at a time
/// so that no program keeps a core from the others. Releasing it lets a
/// reschedule asked for meanwhile happen.
/// Returns whether it was held before.
pub fn hold(on: bool) -> bool {
    let irqs = cpu::save_and_disable_interrupts();
    let since = if on { hal::cpu::rdtsc().max(1) } else { 0 };
    let was = with_current(|t| t.held_since.swap(since, Ordering::Relaxed)) != 0;
    if !on {
        preempt_point();
    }
    cpu::restore_interrupts(irqs);
    was
}

/// Asks this core to reschedule on its way out of the interrupt.
pub(crate) fn request_resched() {
    this_cpu().need_resched.store(true, Ordering::Relaxed);
}
