//! Clocks and sleeping: clock_gettime, clock_getres, gettimeofday,
//! nanosleep, clock_nanosleep. CLOCK_MONOTONIC is the TSC; CLOCK_REALTIME
//! adds the offset Linux gave at start. The CPU-time clocks count the
//! process's and the thread's user and system time (`process::cputime`).

use lwk_logic::errno::*;

use super::call::Call;
use crate::mm::uaccess;
use crate::process::{signal, Process, UserThread};
use hal::{cpu, tsc};

const CLOCK_REALTIME: u64 = 0;
const CLOCK_PROCESS_CPUTIME_ID: u64 = 2;
const CLOCK_THREAD_CPUTIME_ID: u64 = 3;
const CLOCK_REALTIME_COARSE: u64 = 5;
const CLOCK_TAI: u64 = 11;
const TIMER_ABSTIME: u64 = 1;
const NS: i64 = 1_000_000_000;

fn is_realtime(clock: u64) -> bool {
    matches!(clock, CLOCK_REALTIME | CLOCK_REALTIME_COARSE | CLOCK_TAI)
}

fn known_clock(clock: u64) -> bool {
    clock <= 11 && clock != 10
}

fn is_cputime(clock: u64) -> bool {
    matches!(clock, CLOCK_PROCESS_CPUTIME_ID | CLOCK_THREAD_CPUTIME_ID)
}

fn now_ns(c: &Call, clock: u64) -> i64 {
    match clock {
        CLOCK_PROCESS_CPUTIME_ID => c.process.cpu_times().total_ns() as i64,
        CLOCK_THREAD_CPUTIME_ID => c.user.cpu_time.times(true).total_ns() as i64,
        _ if is_realtime(clock) => c.process.realtime_ns(),
        _ => Process::monotonic_ns() as i64,
    }
}

pub fn read_timespec(p: &Process, at: u64) -> Result<i64, Errno> {
    let [sec, nsec] = uaccess::read_words::<2>(p, at)?;
    let (sec, nsec) = (sec as i64, nsec as i64);
    if sec < 0 || !(0..NS).contains(&nsec) {
        return Err(EINVAL);
    }
    Ok(sec.saturating_mul(NS).saturating_add(nsec))
}

fn write_timespec(p: &Process, at: u64, ns: i64) -> Result<(), Errno> {
    uaccess::write_words(p, at, &[ns.div_euclid(NS) as u64, ns.rem_euclid(NS) as u64])
}

/// TSC deadline `span` ns from now.
pub fn deadline_after(span: i64) -> u64 {
    cpu::rdtsc().saturating_add(tsc::ns_to_cycles(span.max(0) as u64))
}

/// TSC deadline at `at` ns on the monotonic or realtime clock.
pub fn deadline_at(p: &Process, at: i64, realtime: bool) -> u64 {
    let now = if realtime { p.realtime_ns() } else { Process::monotonic_ns() as i64 };
    deadline_after(at.saturating_sub(now))
}

pub fn clock_gettime(c: &mut Call) -> SysResult {
    let [clock, tp, ..] = c.args;
    if !known_clock(clock) {
        return Err(EINVAL);
    }
    write_timespec(c.process, tp, now_ns(c, clock)).map(|()| 0)
}

pub fn clock_getres(c: &mut Call) -> SysResult {
    let [clock, res, ..] = c.args;
    if !known_clock(clock) {
        return Err(EINVAL);
    }
    if res == 0 {
        return Ok(0);
    }
    write_timespec(c.process, res, 1).map(|()| 0)
}

pub fn gettimeofday(c: &mut Call) -> SysResult {
    let [tv, ..] = c.args;
    if tv == 0 {
        return Ok(0);
    }
    let ns = c.process.realtime_ns();
    let timeval = [ns.div_euclid(NS) as u64, (ns.rem_euclid(NS) / 1000) as u64];
    uaccess::write_words(c.process, tv, &timeval).map(|()| 0)
}

/// time(2): seconds of CLOCK_REALTIME, also stored at the pointer if any.
pub fn time(c: &mut Call) -> SysResult {
    let seconds = c.process.realtime_ns().div_euclid(NS) as u64;
    if c.args[0] != 0 {
        uaccess::write_u64(c.process, c.args[0], seconds)?;
    }
    Ok(seconds)
}

/// Sleeps until the TSC deadline; EINTR if a signal comes or the program
/// is ending first.
fn sleep_until(u: &UserThread, deadline: u64) -> Result<(), Errno> {
    signal::sleep_while(Some(deadline), || !signal::interrupted(u));
    if cpu::rdtsc() < deadline {
        return Err(EINTR);
    }
    Ok(())
}

pub fn nanosleep(c: &mut Call) -> SysResult {
    let [req, rem, ..] = c.args;
    let span = read_timespec(c.process, req)?;
    let deadline = deadline_after(span);
    let r = sleep_until(c.user, deadline);
    if r.is_err() && rem != 0 {
        let left = tsc::cycles_to_ns(deadline.saturating_sub(cpu::rdtsc()));
        write_timespec(c.process, rem, left as i64)?;
    }
    r.map(|()| 0)
}

pub fn clock_nanosleep(c: &mut Call) -> SysResult {
    let [clock, flags, req, ..] = c.args;
    // Sleeping on a CPU-time clock: not provided (Linux has no thread one).
    if !known_clock(clock) || is_cputime(clock) {
        return Err(EINVAL);
    }
    let t = read_timespec(c.process, req)?;
    let deadline = if flags & TIMER_ABSTIME != 0 {
        deadline_at(c.process, t, is_realtime(clock))
    } else {
        deadline_after(t)
    };
    // Like every system call it returns -errno (the C library's wrapper
    // turns that into the positive number clock_nanosleep(3) returns).
    sleep_until(c.user, deadline).map(|()| 0)
}
