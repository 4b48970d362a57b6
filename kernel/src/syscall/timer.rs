//! Interval timers that signal: alarm, setitimer and getitimer for
//! ITIMER_REAL (SIGALRM; `process::itimer`). ITIMER_VIRTUAL and ITIMER_PROF
//! would need CPU-time accounting per process: EINVAL.

use lwk_logic::errno::*;

use super::Call;
use crate::process::{itimer, uaccess};

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
    let prev = itimer::set(c.process, value, interval);
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
    write_itimerval(c, at, itimer::get(c.process)).map(|()| 0)
}

/// alarm(seconds): the seconds left of the previous alarm, rounded to the
/// nearest (at least 1 while one was armed), as Linux returns them.
pub fn alarm(c: &mut Call) -> SysResult {
    let secs = c.args[0] & 0xffff_ffff;
    let (left, _) = itimer::set(c.process, secs * 1_000_000_000, 0);
    Ok(match left {
        0 => 0,
        ns => (ns.div_ceil(NS_PER_US) + US / 2).div_euclid(US).max(1),
    })
}
