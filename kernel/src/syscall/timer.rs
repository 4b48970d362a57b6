//! Timers that signal (`process::itimer`): alarm, setitimer and getitimer
//! for ITIMER_REAL (SIGALRM), and POSIX timers (timer_create with
//! SIGEV_SIGNAL, SIGEV_THREAD_ID or SIGEV_NONE, timer_settime,
//! timer_gettime, timer_getoverrun, timer_delete). ITIMER_VIRTUAL and
//! ITIMER_PROF (CPU-time timers): EINVAL.

use lwk_logic::errno::*;

use super::call::Call;
use crate::mm::uaccess;
use crate::process::itimer::{self, Notify, Target, Timer};
use crate::process::sigstate::SI_TIMER;
use crate::process::{itimer_thread, Process};

const ITIMER_REAL: u64 = 0;
const US: u64 = 1_000_000;
const NS_PER_US: u64 = 1_000;

/// struct itimerval (interval, value; each seconds and microseconds) in ns.
fn read_itimerval(c: &Call, at: u64) -> Result<(u64, u64), Errno> {
    let [isec, iusec, vsec, vusec] = uaccess::read_words::<4>(c.process, at)?;
    let ns = |sec: u64, usec: u64| -> Result<u64, Errno> {
        if sec as i64 >= 0 && usec < US {
            Ok(sec.saturating_mul(1_000_000_000).saturating_add(usec * NS_PER_US))
        } else {
            Err(EINVAL)
        }
    };
    Ok((ns(vsec, vusec)?, ns(isec, iusec)?))
}

fn write_itimerval(c: &Call, at: u64, (value, interval): (u64, u64)) -> Result<(), Errno> {
    // Round up to whole microseconds: an armed timer never reads as 0.
    let split = |ns: u64| {
        let us = ns.div_ceil(NS_PER_US);
        [us / US, us % US]
    };
    let [is, iu] = split(interval);
    let [vs, vu] = split(value);
    uaccess::write_words(c.process, at, &[is, iu, vs, vu])
}

pub fn setitimer(c: &mut Call) -> SysResult {
    let [which, new, old, ..] = c.args;
    if which != ITIMER_REAL {
        return Err(EINVAL);
    }
    let (value, interval) = if new == 0 { (0, 0) } else { read_itimerval(c, new)? };
    let prev =
        itimer_thread::set(c.process, &c.process.real_timer, itimer::deadline_in(value), interval);
    if old != 0 {
        write_itimerval(c, old, prev)?;
    }
    Ok(0)
}

pub fn getitimer(c: &mut Call) -> SysResult {
    let [which, at, ..] = c.args;
    if which != ITIMER_REAL {
        return Err(EINVAL);
    }
    write_itimerval(c, at, c.process.real_timer.get()).map(|()| 0)
}

/// alarm(seconds): the seconds left of the previous alarm, rounded to the
/// nearest (at least 1 while one was armed), as Linux returns them.
pub fn alarm(c: &mut Call) -> SysResult {
    let secs = c.args[0] & 0xffff_ffff;
    let deadline = itimer::deadline_in(secs * 1_000_000_000);
    let (left, _) = itimer_thread::set(c.process, &c.process.real_timer, deadline, 0);
    Ok(match left {
        0 => 0,
        ns => (ns.div_ceil(NS_PER_US) + US / 2).div_euclid(US).max(1),
    })
}

const CLOCK_REALTIME: u64 = 0;
const CLOCK_MONOTONIC: u64 = 1;
const CLOCK_BOOTTIME: u64 = 7;
const SIGEV_SIGNAL: u32 = 0;
const SIGEV_NONE: u32 = 1;
const SIGEV_THREAD_ID: u32 = 4;
const TIMER_ABSTIME: u64 = 1;
const SIGALRM: u32 = 14;
const NS: u64 = 1_000_000_000;

/// timer_create(clock, sigevent, timerid): struct sigevent is sigev_value
/// (8 bytes), sigev_signo and sigev_notify (ints), then the thread id.
pub fn timer_create(c: &mut Call) -> SysResult {
    let [clock, sevp, idp, ..] = c.args;
    if !matches!(clock, CLOCK_REALTIME | CLOCK_MONOTONIC | CLOCK_BOOTTIME) {
        return Err(EINVAL);
    }
    let (value, signo, how, tid) = if sevp == 0 {
        (None, SIGALRM, SIGEV_SIGNAL, 0)
    } else {
        let [v, sig_how, tid] = uaccess::read_words::<3>(c.process, sevp)?;
        (Some(v), sig_how as u32, (sig_how >> 32) as u32, tid as u32)
    };
    let target = match how {
        SIGEV_NONE => Target::Nothing,
        SIGEV_SIGNAL => Target::Process,
        SIGEV_THREAD_ID => Target::Thread(tid),
        _ => return Err(EINVAL),
    };
    if !matches!(target, Target::Nothing) && !(1..=64).contains(&signo) {
        return Err(EINVAL);
    }
    let realtime = clock == CLOCK_REALTIME;
    let id = c.process.timers.add(|id| {
        let value = value.unwrap_or(id.into());
        Timer::new(Notify { signo, target, code: SI_TIMER, id, value, realtime })
    })?;
    if let Err(e) = uaccess::write_u32(c.process, idp, id) {
        let _ = c.process.timers.delete(id.into());
        return Err(e);
    }
    Ok(0)
}

/// struct itimerspec: interval, then value, each seconds and nanoseconds.
fn read_itimerspec(c: &Call, at: u64) -> Result<(u64, u64), Errno> {
    let [is, ins, vs, vns] = uaccess::read_words::<4>(c.process, at)?;
    if (is as i64) < 0 || (vs as i64) < 0 || ins >= NS || vns >= NS {
        return Err(EINVAL);
    }
    let ns = |s: u64, n: u64| s.saturating_mul(NS).saturating_add(n);
    Ok((ns(vs, vns), ns(is, ins)))
}

fn write_itimerspec(c: &Call, at: u64, (value, interval): (u64, u64)) -> Result<(), Errno> {
    uaccess::write_words(c.process, at, &[interval / NS, interval % NS, value / NS, value % NS])
}

/// timer_settime(id, flags, new, old).
pub fn timer_settime(c: &mut Call) -> SysResult {
    let [id, flags, new, old, ..] = c.args;
    let t = c.process.timers.get(id)?;
    let (value, interval) = read_itimerspec(c, new)?;
    let deadline = if flags & TIMER_ABSTIME != 0 && value != 0 {
        let now =
            if t.is_realtime() { c.process.realtime_ns() } else { Process::monotonic_ns() as i64 };
        // A time already past fires at once.
        itimer::deadline_in((value as i64 - now).max(1) as u64)
    } else {
        itimer::deadline_in(value)
    };
    let prev = itimer_thread::set(c.process, &t, deadline, interval);
    if old != 0 {
        write_itimerspec(c, old, prev)?;
    }
    Ok(0)
}

pub fn timer_gettime(c: &mut Call) -> SysResult {
    let [id, at, ..] = c.args;
    let t = c.process.timers.get(id)?;
    write_itimerspec(c, at, t.get()).map(|()| 0)
}

pub fn timer_getoverrun(c: &mut Call) -> SysResult {
    Ok(c.process.timers.get(c.args[0])?.overrun().into())
}

pub fn timer_delete(c: &mut Call) -> SysResult {
    c.process.timers.delete(c.args[0]).map(|()| 0)
}
