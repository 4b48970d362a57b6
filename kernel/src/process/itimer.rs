//! A process's real-time interval timer (ITIMER_REAL: alarm, setitimer):
//! a kernel thread on the process's first core sleeps until the deadline,
//! then sends SIGALRM and re-arms with the interval. It starts with the
//! first setting and ends with the process.

use alloc::sync::Arc;
use hal::{cpu, tsc};

use super::signal::{self, SigInfo, SIGALRM};
use super::Process;
use crate::sched;
use crate::sync::{SpinLock, WaitQueue};

pub struct RealTimer {
    state: SpinLock<State>,
    changed: WaitQueue,
}

struct State {
    /// TSC deadline; 0: disarmed.
    deadline: u64,
    interval_ns: u64,
    /// Bumped by every setting, so the thread looks again.
    generation: u64,
    started: bool,
}

impl RealTimer {
    pub const fn new() -> Self {
        RealTimer {
            state: SpinLock::new(State {
                deadline: 0,
                interval_ns: 0,
                generation: 0,
                started: false,
            }),
            changed: WaitQueue::new(),
        }
    }

    /// The process is ending: the timer's thread leaves.
    pub fn stop(&self) {
        self.changed.wake_all(true);
    }
}

fn remaining_ns(deadline: u64) -> u64 {
    match deadline {
        0 => 0,
        // At least 1 ns while armed: "0" would read as disarmed.
        d => tsc::cycles_to_ns(d.saturating_sub(cpu::rdtsc())).max(1),
    }
}

/// (time left, interval) in ns; (0, _) when disarmed.
pub fn get(p: &Process) -> (u64, u64) {
    let s = p.real_timer.state.lock();
    (remaining_ns(s.deadline), s.interval_ns)
}

/// Arms the timer to fire in `value_ns` (0 disarms), then every
/// `interval_ns`; returns the previous (time left, interval).
pub fn set(p: &Arc<Process>, value_ns: u64, interval_ns: u64) -> (u64, u64) {
    let t = &p.real_timer;
    let (old, start) = {
        let mut s = t.state.lock();
        let old = (remaining_ns(s.deadline), s.interval_ns);
        s.deadline = if value_ns == 0 { 0 } else { cpu::rdtsc() + tsc::ns_to_cycles(value_ns) };
        s.interval_ns = interval_ns;
        s.generation += 1;
        let start = !s.started && value_ns != 0;
        s.started |= start;
        (old, start)
    };
    if start {
        let process = p.clone();
        drop(sched::spawn(p.cpus[0], "itimer", move || run(process)));
    }
    t.changed.wake_all(true);
    old
}

fn run(p: Arc<Process>) {
    let t = &p.real_timer;
    while !p.is_exiting() {
        let (deadline, generation) = {
            let s = t.state.lock();
            (s.deadline, s.generation)
        };
        let armed = (deadline != 0).then_some(deadline);
        let woken = t.changed.wait_until_deadline(
            || p.is_exiting() || t.state.lock().generation != generation,
            armed,
        );
        if woken {
            continue;
        }
        let fire = {
            let mut s = t.state.lock();
            let fire = s.generation == generation && s.deadline != 0;
            if fire {
                s.deadline = match s.interval_ns {
                    0 => 0,
                    i => deadline + tsc::ns_to_cycles(i),
                };
            }
            fire
        };
        if fire {
            signal::send_to_process(&p, SigInfo::kernel(SIGALRM));
        }
    }
}
