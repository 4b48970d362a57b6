//! Facts about this process that std does not offer: its user and group ids,
//! the CPU's feature bits and time-stamp counter, random bytes, duplicating
//! a descriptor to a high number, pinning a thread to a CPU, fork. Through
//! rustix where it has the call; the rest (fork, signal dispositions, the
//! time-stamp counter) through libc or the CPU, each `unsafe` saying why it
//! is sound.

use rustix::fs::Access;
use rustix::io::{fcntl_dupfd_cloexec, Errno};
use rustix::pipe::{pipe_with, PipeFlags};
use rustix::process::{getegid, geteuid, getgid, getuid};
use rustix::rand::{getrandom, GetRandomFlags};
use rustix::thread::{sched_setaffinity, CpuSet};
use std::io;
use std::os::fd::{BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// The ids a program started by this process would have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Ids {
    pub uid: u32,
    pub euid: u32,
    pub gid: u32,
    pub egid: u32,
}

pub fn ids() -> Ids {
    Ids { uid: getuid().as_raw(), euid: geteuid().as_raw(), gid: getgid().as_raw(), egid: getegid().as_raw() }
}

/// CPUID leaf 1, EDX: what Linux passes to programs as AT_HWCAP on x86-64.
pub fn hwcap() -> u64 {
    core::arch::x86_64::__cpuid(1).edx as u64
}

/// The CPU's time-stamp counter: the noise probes' clock, as in the LWK
/// (clock_gettime can cost microseconds where Linux's clocksource is not
/// the TSC, as under emulation).
pub fn tsc() -> u64 {
    // SAFETY: RDTSC only reads a counter into registers; every x86-64 CPU
    // has it and Linux lets user space execute it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// 16 bytes from the kernel's random pool, for AT_RANDOM.
pub fn random16() -> io::Result<[u8; 16]> {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        match getrandom(&mut bytes[filled..], GetRandomFlags::empty()) {
            Ok(n) => filled += n,
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(bytes)
}

/// A close-on-exec duplicate of `fd` on the lowest free descriptor >= `min`.
pub fn dup_above(fd: BorrowedFd<'_>, min: RawFd) -> io::Result<OwnedFd> {
    Ok(fcntl_dupfd_cloexec(fd, min)?)
}

extern "C" fn ignore_signal(_: libc::c_int) {}

/// Makes `signal` interrupt this process's blocking system calls (EINTR)
/// and otherwise do nothing: a handler that returns, without SA_RESTART.
pub fn interrupt_on(signal: libc::c_int) -> io::Result<()> {
    // SAFETY: an all-zero sigaction is valid (empty mask, no flags); the
    // handler is an `extern "C"` function that touches nothing.
    let rc = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = ignore_signal as *const () as libc::sighandler_t;
        libc::sigaction(signal, &sa, std::ptr::null_mut())
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Children of this process (forked `atoll run`s) are reaped by Linux as
/// they end: nobody waits for them here.
pub fn reap_children_automatically() -> io::Result<()> {
    // SAFETY: SIG_IGN for SIGCHLD changes no memory; Linux then reaps.
    if unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) } == libc::SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A new pipe (close-on-exec): (read end, write end).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(pipe_with(PipeFlags::CLOEXEC)?)
}

/// What `fork` made of this process.
pub enum Forked {
    Parent(libc::pid_t),
    Child,
}

/// fork(2). In the child only the calling thread goes on: it must build
/// afresh whatever it needs, and leave with `exit_now`.
pub fn fork() -> io::Result<Forked> {
    // SAFETY: fork has no memory-safety preconditions; the child keeps to
    // the rules above (its callers build new objects and never touch
    // locks other threads may have held).
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
    }
}

/// Takes over a descriptor a forked process inherited from its parent
/// (the parent's handle to it is gone with the parent's other threads).
pub fn take_inherited(fd: RawFd) -> OwnedFd {
    // SAFETY: the callers pass a descriptor the parent owned at fork, of
    // which this process holds no other handle.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// True if this process may execute `path` (execute permission).
pub fn may_execute(path: &std::path::Path) -> bool {
    rustix::fs::access(path, Access::EXEC_OK).is_ok()
}

/// Closes a descriptor this process no longer wants (one inherited).
pub fn close(fd: RawFd) {
    // SAFETY: the callers own `fd` (a descriptor of the parent's they took
    // over on fork) and drop every handle to it.
    unsafe { libc::close(fd) };
}

/// Ends this process at once with `code`, running no exit handlers (a
/// forked child must not flush what its parent's threads had buffered).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: _exit never returns and touches no memory of ours.
    unsafe { libc::_exit(code) }
}

/// Pins the calling thread to Linux CPU `cpu`.
pub fn pin_to_cpu(cpu: u32) -> io::Result<()> {
    if cpu as usize >= CpuSet::MAX_CPU {
        return Err(Errno::INVAL.into());
    }
    let mut set = CpuSet::new();
    set.set(cpu as usize);
    Ok(sched_setaffinity(None, &set)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{AsFd, AsRawFd};

    #[test]
    fn facts() {
        // Every x86-64 CPU has the FPU, TSC and SSE2 bits (0, 4, 26).
        let hw = hwcap();
        assert_eq!(hw & (1 | 1 << 4 | 1 << 26), 1 | 1 << 4 | 1 << 26);
        let (a, b) = (random16().unwrap(), random16().unwrap());
        assert_ne!(a, b);
        let meta = std::fs::metadata("/proc/self").unwrap();
        let ids = ids();
        use std::os::unix::fs::MetadataExt;
        assert_eq!((meta.uid(), meta.gid()), (ids.euid, ids.egid));
    }

    #[test]
    fn interrupts_a_blocking_read() {
        use std::io::Read;
        interrupt_on(libc::SIGRTMAX() - 1).unwrap();
        let (mut reader, _writer) = std::io::pipe().unwrap();
        // SAFETY: pthread_self() is this thread; the signal's handler returns.
        let me = unsafe { libc::pthread_self() } as usize;
        let kicker = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            // SAFETY: the reading thread lives until this thread is joined.
            unsafe { libc::pthread_kill(me as libc::pthread_t, libc::SIGRTMAX() - 1) };
        });
        let err = reader.read(&mut [0u8; 1]).unwrap_err();
        kicker.join().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::Interrupted);
    }

    #[test]
    fn duplicates_high() {
        let file = std::fs::File::open("/dev/null").unwrap();
        let fd = dup_above(file.as_fd(), 1000).unwrap();
        assert!(fd.as_raw_fd() >= 1000);
    }
}
