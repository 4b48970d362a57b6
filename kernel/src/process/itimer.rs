//! A process's timers that signal: its real-time interval timer
//! (ITIMER_REAL: alarm, setitimer, SIGALRM) and its POSIX timers
//! (timer_create: a signal to the process or to one thread), as the process
//! keeps them. Arming them, and the thread each armed timer has, are
//! itimer_thread.rs's.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use hal::{cpu, tsc};

use super::sigstate::{SIGALRM, SI_KERNEL};
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
    pub(super) state: SpinLock<State>,
    pub(super) changed: WaitQueue,
    pub(super) deleted: AtomicBool,
    pub(super) notify: Notify,
}

pub(super) struct State {
    /// TSC deadline; 0: disarmed.
    pub(super) deadline: u64,
    pub(super) interval_ns: u64,
    /// Bumped by every setting, so the thread looks again.
    pub(super) generation: u64,
    /// Expiries the process has not seen a signal for (timer_getoverrun).
    pub(super) overrun: u32,
    pub(super) started: bool,
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

pub(super) fn remaining_ns(deadline: u64) -> u64 {
    match deadline {
        0 => 0,
        // At least 1 ns while armed: "0" would read as disarmed.
        d => tsc::cycles_to_ns(d.saturating_sub(cpu::rdtsc())).max(1),
    }
}

/// A deadline `ns` from now (0 stays 0: disarmed).
pub fn deadline_in(ns: u64) -> u64 {
    match ns {
        0 => 0,
        ns => cpu::rdtsc() + tsc::ns_to_cycles(ns),
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
