//! A process's timers that signal: its real-time interval timer
//! (ITIMER_REAL: alarm, setitimer, SIGALRM) and its POSIX timers
//! (timer_create: a signal to the process or to one thread). Each armed
//! timer has a kernel thread on the process's first core that sleeps until
//! the deadline, sends the signal and re-arms with the interval; it starts
//! with the first setting and ends with the process or the timer.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use hal::{cpu, tsc};

use super::signal::{self, SigInfo, SIGALRM, SI_KERNEL};
use super::Process;
use crate::sched;
use crate::sync::{SpinLock, WaitQueue};
use lwk_logic::errno::*;

/// Where a timer's signal goes.
#[derive(Clone, Copy)]
pub enum Target {
    /// Nowhere (SIGEV_NONE): the timer only counts.
    Nothing,
    Process,
    Thread(u32),
}

/// What a timer sends when it fires.
#[derive(Clone, Copy)]
pub struct Notify {
    pub signo: u32,
    pub target: Target,
    /// siginfo: SI_KERNEL for ITIMER_REAL; SI_TIMER with the timer's id and
    /// sigev_value for POSIX timers.
    pub code: i32,
    pub id: u32,
    pub value: u64,
    /// Absolute times (TIMER_ABSTIME) are on CLOCK_REALTIME, not MONOTONIC.
    pub realtime: bool,
}

pub struct Timer {
    state: SpinLock<State>,
    changed: WaitQueue,
    deleted: AtomicBool,
    notify: Notify,
}

struct State {
    /// TSC deadline; 0: disarmed.
    deadline: u64,
    interval_ns: u64,
    /// Bumped by every setting, so the thread looks again.
    generation: u64,
    /// Expiries the process has not seen a signal for (timer_getoverrun).
    overrun: u32,
    started: bool,
}

impl Timer {
    pub fn new(notify: Notify) -> Self {
        Timer {
            state: SpinLock::new(State {
                deadline: 0,
                interval_ns: 0,
                generation: 0,
                overrun: 0,
                started: false,
            }),
            changed: WaitQueue::new(),
            deleted: AtomicBool::new(false),
            notify,
        }
    }

    /// ITIMER_REAL's: SIGALRM to the process.
    pub fn real() -> Self {
        Timer::new(Notify {
            signo: SIGALRM,
            target: Target::Process,
            code: SI_KERNEL,
            id: 0,
            value: 0,
            realtime: false,
        })
    }

    /// The timer or its process is gone: its thread leaves.
    pub fn stop(&self) {
        self.deleted.store(true, Ordering::Release);
        self.changed.wake_all(true);
    }

    /// (time left, interval) in ns; (0, _) when disarmed.
    pub fn get(&self) -> (u64, u64) {
        let s = self.state.lock();
        (remaining_ns(s.deadline), s.interval_ns)
    }

    pub fn overrun(&self) -> u32 {
        self.state.lock().overrun
    }

    pub fn is_realtime(&self) -> bool {
        self.notify.realtime
    }
}

fn remaining_ns(deadline: u64) -> u64 {
    match deadline {
        0 => 0,
        // At least 1 ns while armed: "0" would read as disarmed.
        d => tsc::cycles_to_ns(d.saturating_sub(cpu::rdtsc())).max(1),
    }
}

/// Arms `t` to fire at the TSC `deadline` (0 disarms), then every
/// `interval_ns`; returns the previous (time left, interval).
pub fn set(p: &Arc<Process>, t: &Arc<Timer>, deadline: u64, interval_ns: u64) -> (u64, u64) {
    let (old, start) = {
        let mut s = t.state.lock();
        let old = (remaining_ns(s.deadline), s.interval_ns);
        s.deadline = deadline;
        s.interval_ns = interval_ns;
        s.generation += 1;
        s.overrun = 0;
        let start = !s.started && deadline != 0;
        s.started |= start;
        (old, start)
    };
    if start {
        let (process, timer) = (p.clone(), t.clone());
        drop(sched::spawn(p.cpus.first(), "timer", move || run(process, timer)));
    }
    t.changed.wake_all(true);
    old
}

/// A deadline `ns` from now (0 stays 0: disarmed).
pub fn deadline_in(ns: u64) -> u64 {
    match ns {
        0 => 0,
        ns => cpu::rdtsc() + tsc::ns_to_cycles(ns),
    }
}

fn run(p: Arc<Process>, t: Arc<Timer>) {
    let gone = || p.is_exiting() || t.deleted.load(Ordering::Acquire);
    while !gone() {
        let (deadline, generation) = {
            let s = t.state.lock();
            (s.deadline, s.generation)
        };
        let armed = (deadline != 0).then_some(deadline);
        let woken = t
            .changed
            .wait_until_deadline(|| gone() || t.state.lock().generation != generation, armed);
        if woken {
            continue;
        }
        let fired = {
            let mut s = t.state.lock();
            let fired = s.generation == generation && s.deadline != 0;
            if fired {
                s.deadline = match s.interval_ns {
                    0 => 0,
                    i => deadline + tsc::ns_to_cycles(i),
                };
            }
            fired.then_some(s.overrun)
        };
        if let Some(overrun) = fired {
            fire(&p, &t, overrun);
        }
    }
}

fn fire(p: &Arc<Process>, t: &Timer, overrun: u32) {
    let n = t.notify;
    let info = match n.code {
        SI_KERNEL => SigInfo::kernel(n.signo),
        code => SigInfo {
            signo: n.signo,
            code,
            timer: Some((n.id, overrun, n.value)),
            ..Default::default()
        },
    };
    let pending = || signal::pending_set_of(p, n.target) & signal::bit(n.signo) != 0;
    // A signal still pending from the last expiry: count an overrun instead.
    if !matches!(n.target, Target::Nothing) && pending() {
        let mut s = t.state.lock();
        s.overrun = s.overrun.saturating_add(1);
        return;
    }
    t.state.lock().overrun = 0;
    match n.target {
        Target::Nothing => {}
        Target::Process => signal::send_to_process(p, info),
        Target::Thread(tid) => {
            // A target thread that has ended: the signal goes to the process.
            if signal::send_to_thread(p, tid, info).is_err() {
                signal::send_to_process(p, info);
            }
        }
    }
}

/// The process's POSIX timers, by id (timer_create hands out the index).
pub struct Timers(SpinLock<Vec<Option<Arc<Timer>>>>);

/// Timers a process may have at once.
pub const MAX_TIMERS: usize = 32;

impl Timers {
    pub const fn new() -> Self {
        Timers(SpinLock::new(Vec::new()))
    }

    /// A new timer; its id.
    pub fn add(&self, make: impl FnOnce(u32) -> Timer) -> Result<u32, Errno> {
        let mut all = self.0.lock();
        let id = match all.iter().position(Option::is_none) {
            Some(i) => i,
            None if all.len() < MAX_TIMERS => {
                all.push(None);
                all.len() - 1
            }
            None => return Err(EAGAIN),
        };
        all[id] = Some(Arc::new(make(id as u32)));
        Ok(id as u32)
    }

    pub fn get(&self, id: u64) -> Result<Arc<Timer>, Errno> {
        self.0.lock().get(id as usize).and_then(Clone::clone).ok_or(EINVAL)
    }

    pub fn delete(&self, id: u64) -> Result<(), Errno> {
        let t = self.0.lock().get_mut(id as usize).and_then(Option::take).ok_or(EINVAL)?;
        t.stop();
        Ok(())
    }

    /// The process ends: every timer's thread leaves.
    pub fn stop_all(&self) {
        for t in self.0.lock().iter().flatten() {
            t.stop();
        }
    }
}
