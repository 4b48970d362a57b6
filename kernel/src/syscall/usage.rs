//! Resource usage: getrusage and times, from the threads' CPU time
//! (`process::cputime`), and that of the children waited for.

use lwk_logic::errno::*;

use super::call::Call;
use crate::mm::uaccess;
use crate::process::cputime::Times;
use crate::process::Process;

const RUSAGE_SELF: u64 = 0;
const RUSAGE_CHILDREN: u64 = -1i64 as u64;
const RUSAGE_THREAD: u64 = 1;
/// times() counts in clock ticks of 100 Hz (sysconf(_SC_CLK_TCK)).
const NS_PER_TICK: u64 = 10_000_000;

fn timeval(ns: u64) -> [u64; 2] {
    [ns / 1_000_000_000, ns % 1_000_000_000 / 1000]
}

/// getrusage(who, usage): struct rusage is two timevals and 14 longs;
/// maxrss (KiB) is the memory mapped (the LWK maps at once what it maps).
pub fn getrusage(c: &mut Call) -> SysResult {
    let [who, at, ..] = c.args;
    let (times, maxrss) = match who {
        RUSAGE_SELF => (c.process.cpu_times(), c.mem().vm.lock().mapped_bytes() / 1024),
        RUSAGE_THREAD => (c.user.cpu_time.times(true), c.mem().vm.lock().mapped_bytes() / 1024),
        RUSAGE_CHILDREN => (*c.process.family.children_time.lock(), 0),
        _ => return Err(EINVAL),
    };
    write_rusage(c, at, times, maxrss).map(|()| 0)
}

/// Writes a struct rusage: the user and system time, maxrss (KiB), the
/// other counters 0 (getrusage, wait4, waitid).
pub fn write_rusage(c: &Call, at: u64, times: Times, maxrss: u64) -> Result<(), Errno> {
    let mut words = [0u64; 18];
    words[0..2].copy_from_slice(&timeval(times.user_ns));
    words[2..4].copy_from_slice(&timeval(times.system_ns));
    words[4] = maxrss;
    uaccess::write_words(c.process, at, &words)
}

/// times(buf): the process's user and system ticks, and those of the
/// children it waited for; returns the ticks since the LWK booted.
pub fn times(c: &mut Call) -> SysResult {
    let [at, ..] = c.args;
    if at != 0 {
        let (t, k) = (c.process.cpu_times(), *c.process.family.children_time.lock());
        let ticks = [t.user_ns, t.system_ns, k.user_ns, k.system_ns].map(|ns| ns / NS_PER_TICK);
        uaccess::write_words(c.process, at, &ticks)?;
    }
    Ok(Process::monotonic_ns() / NS_PER_TICK)
}
