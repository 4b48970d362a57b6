//! Arming a process's timers (itimer.rs): each armed timer has a kernel
//! thread on the process's first core that sleeps until the deadline, sends
//! the signal and re-arms with the interval; it starts with the first
//! setting and ends with the process or the timer.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;
use hal::tsc;

use super::itimer::{remaining_ns, Target, Timer};
use super::signal;
use super::sigstate::{self, SigInfo, SI_KERNEL};
use super::types::Process;
use crate::sched;

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
    let pending = || signal::pending_set_of(p, n.target) & sigstate::bit(n.signo) != 0;
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
