//! Moving a local pipe to Linux, before a call that needs Linux to see it:
//! waiting on it beside other files (poll, select, epoll), splicing,
//! ioctls (FIONREAD), another fcntl, handing it to another process
//! (SCM_RIGHTS), or opening it again by a path (/proc/<pid>/fd/N,
//! /dev/fd/N, /dev/stdin). The bytes waiting in the LWK are written into
//! Linux's pipe through a description of its own (a pipe opened
//! read-write never waits for a reader): for the caller's own descriptor
//! one `atoll run` keeps out of the program's reach (CALL_KEPT_FILE), for
//! another program's the path the caller opens, once Linux said the
//! caller may (so its bytes never reach a program that may not read
//! them). From then on every call on the pipe is Linux's. A move that
//! fails fails the call that needed it. Not seen: a pipe opened through a
//! symbolic link of the program's own or relative to a /proc directory's
//! descriptor. isatty() on a local end is answered here (ENOTTY), not
//! moved: Python asks it of every standard stream.

use atoll_abi::syscalls::number;
use atoll_abi::{
    CALL_KEPT_FILE, CALL_SYSCALL, CALL_TEXT_FILE, KEPT_DROP, KEPT_KEEP, KEPT_PUSH, TEXT_MAY_READ,
};
use lwk_logic::errno::{Errno, SysResult, EAGAIN, ENOTTY};

use super::call::Call;
use super::proc_maps::path_head;
use super::scratch::with_scratch;
use crate::mm::uaccess;
use crate::pipe::LocalPipe;
use crate::process::{delegate, programs, signal};

const SYS_WRITE: u64 = number("write");
const SYS_OPEN: u64 = number("open");
const SYS_CLOSE: u64 = number("close");
const SYS_POLL: u64 = number("poll");
const SYS_IOCTL: u64 = number("ioctl");
const SYS_SELECT: u64 = number("select");
const SYS_SENDFILE: u64 = number("sendfile");
const SYS_SENDMSG: u64 = number("sendmsg");
const SYS_EPOLL_CTL: u64 = number("epoll_ctl");
const SYS_OPENAT: u64 = number("openat");
const SYS_PSELECT6: u64 = number("pselect6");
const SYS_PPOLL: u64 = number("ppoll");
const SYS_SPLICE: u64 = number("splice");
const SYS_TEE: u64 = number("tee");
const SYS_COPY_FILE_RANGE: u64 = number("copy_file_range");
const SYS_PREADV2: u64 = number("preadv2");
const SYS_PWRITEV2: u64 = number("pwritev2");
const SYS_OPENAT2: u64 = number("openat2");
const AT_FDCWD: u64 = -100i64 as u64;
const O_RDWR: u64 = 2;
const O_NONBLOCK: u64 = 0o4000;
const O_CLOEXEC: u64 = 0o2000000;
/// Linux refuses a poll() of more descriptors than this (its largest
/// RLIMIT_NOFILE): Linux answers such a call.
const MOST_POLLED: u64 = 1 << 20;
/// pollfd entries read at a time.
const POLLED_AT_ONCE: u64 = 256;
const TCGETS: u64 = 0x5401;

/// Before delegated call `nr` of a process with local pipe ends: the
/// pipes it makes Linux see move there. Some(answer) if the call is
/// answered here (isatty on a local end, or a move that failed).
pub fn before_delegating(c: &Call, nr: u64) -> Option<SysResult> {
    let [a0, a1, a2, ..] = c.args;
    let moved = match nr {
        SYS_IOCTL
            if a1 == TCGETS && c.process.local_fds.get(a0).is_some_and(|e| !e.pipe.on_linux()) =>
        {
            return Some(Err(ENOTTY));
        }
        SYS_IOCTL | SYS_PREADV2 | SYS_PWRITEV2 => fd_to_linux(c, a0),
        SYS_SPLICE | SYS_COPY_FILE_RANGE => fd_to_linux(c, a0).and_then(|()| fd_to_linux(c, a2)),
        SYS_TEE | SYS_SENDFILE => fd_to_linux(c, a0).and_then(|()| fd_to_linux(c, a1)),
        SYS_EPOLL_CTL => fd_to_linux(c, a2),
        SYS_POLL | SYS_PPOLL => polled(c, a0, a1),
        SYS_SELECT | SYS_PSELECT6 => selected(c, a0, [a1, a2, c.args[3]]),
        // Descriptors handed over a socket (SCM_RIGHTS) are not looked
        // for: any control data moves them all.
        SYS_SENDMSG if !uaccess::read_u64(c.process, a1.wrapping_add(40)).is_ok_and(|n| n == 0) => {
            all_to_linux(c)
        }
        _ => Ok(()),
    };
    moved.err().map(Err)
}

/// Before open, openat or openat2 by any program of the enclave while some
/// pipe is local: the pipe its path names, if local, moves.
pub fn before_open(c: &Call, nr: u64) -> Option<SysResult> {
    let path_at = match nr {
        SYS_OPEN => c.args[0],
        SYS_OPENAT | SYS_OPENAT2 => c.args[1],
        _ => return None,
    };
    opened(c, path_at).err().map(Err)
}

/// The pipe of the caller's descriptor `fd`, if a local one, moves.
pub fn fd_to_linux(c: &Call, fd: u64) -> Result<(), Errno> {
    match c.process.local_fds.get(fd) {
        Some(end) => to_linux(c, &end.pipe, Through::Own(fd)),
        None => Ok(()),
    }
}

fn all_to_linux(c: &Call) -> Result<(), Errno> {
    c.process.local_fds.all().into_iter().try_for_each(|(fd, _)| fd_to_linux(c, fd.into()))
}

/// poll/ppoll(fds, nfds): struct pollfd is 8 bytes, the descriptor first.
fn polled(c: &Call, at: u64, count: u64) -> Result<(), Errno> {
    if count > MOST_POLLED {
        return Ok(());
    }
    let mut raw = alloc::vec![0u8; (count.min(POLLED_AT_ONCE) * 8) as usize];
    for first in (0..count).step_by(POLLED_AT_ONCE as usize) {
        let n = (count - first).min(POLLED_AT_ONCE) as usize;
        // Unreadable: Linux's EFAULT answers the call.
        if uaccess::read_bytes(c.process, at.wrapping_add(first * 8), &mut raw[..n * 8]).is_err() {
            return Ok(());
        }
        for entry in raw[..n * 8].chunks_exact(8) {
            let fd = i32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
            if fd >= 0 {
                fd_to_linux(c, fd as u64)?;
            }
        }
    }
    Ok(())
}

/// select/pselect6(nfds, sets...): each local end below nfds whose bit is
/// set in a set.
fn selected(c: &Call, nfds: u64, sets: [u64; 3]) -> Result<(), Errno> {
    for (fd, _) in c.process.local_fds.all() {
        let fd = u64::from(fd);
        let in_a_set = fd < nfds
            && sets.iter().any(|&set| {
                let word = set.checked_add(fd / 64 * 8);
                set != 0
                    && word.is_some_and(|w| {
                        uaccess::read_u64(c.process, w).is_ok_and(|w| w & (1 << (fd % 64)) != 0)
                    })
            });
        if in_a_set {
            fd_to_linux(c, fd)?;
        }
    }
    Ok(())
}

/// open(path) of a descriptor's own path: /dev/fd/N, /dev/stdin (and
/// stdout, stderr), /proc/self/fd/N, /proc/<pid>/fd/N or
/// /proc/<pid>/task/<tid>/fd/N of a program of this enclave.
fn opened(c: &Call, path_at: u64) -> Result<(), Errno> {
    let Some(path) = path_head(c, path_at) else { return Ok(()) };
    let Some((who, fd)) = descriptor_path(&path) else { return Ok(()) };
    match who {
        Some(pid) if pid != c.process.pid => {
            let Some(owner) = programs::find(pid) else { return Ok(()) };
            let Some(end) = owner.local_fds.get(fd) else { return Ok(()) };
            if end.pipe.on_linux() {
                return Ok(());
            }
            // Linux's own answer (EACCES) if this program may not open it.
            let may =
                delegate::call(c.user, CALL_TEXT_FILE, TEXT_MAY_READ, [pid.into(), 0, 0, 0, 0, 0])?;
            if Errno::from_return(may).is_err() {
                return Ok(());
            }
            to_linux(c, &end.pipe, Through::Path(&path))
        }
        _ => fd_to_linux(c, fd),
    }
}

/// The process (None: the caller) and descriptor a path names, if it
/// names one.
fn descriptor_path(path: &[u8]) -> Option<(Option<u32>, u64)> {
    let number = |s: &[u8]| -> Option<u64> {
        (!s.is_empty() && s.iter().all(u8::is_ascii_digit))
            .then(|| core::str::from_utf8(s).ok()?.parse().ok())?
    };
    match path {
        b"/dev/stdin" => return Some((None, 0)),
        b"/dev/stdout" => return Some((None, 1)),
        b"/dev/stderr" => return Some((None, 2)),
        _ => {}
    }
    if let Some(fd) = path.strip_prefix(b"/dev/fd/") {
        return Some((None, number(fd)?));
    }
    let rest = path.strip_prefix(b"/proc/")?;
    let slash = rest.iter().position(|&b| b == b'/')?;
    let (who, mut rest) = (&rest[..slash], &rest[slash..]);
    let who = match who {
        b"self" | b"thread-self" => None,
        pid => Some(u32::try_from(number(pid)?).ok()?),
    };
    if let Some(task) = rest.strip_prefix(b"/task/") {
        let slash = task.iter().position(|&b| b == b'/')?;
        number(&task[..slash])?;
        rest = &task[slash..];
    }
    Some((who, number(rest.strip_prefix(b"/fd/")?)?))
}

/// How the mover reaches Linux's pipe.
enum Through<'a> {
    /// The caller's own descriptor: a description `atoll run` keeps.
    Own(u64),
    /// Another program's: the path naming it, which the caller may open.
    Path(&'a [u8]),
}

/// Moves `pipe` to Linux, its waiting bytes written in first. If they
/// cannot be, the pipe stays local and the error is the caller's.
fn to_linux(c: &Call, pipe: &LocalPipe, through: Through) -> Result<(), Errno> {
    let Some(bytes) = pipe.begin_move(|| signal::interrupted(c.user)) else { return Ok(()) };
    let pushed = if bytes.is_empty() { Ok(()) } else { push(c, through, &bytes) };
    match pushed {
        Ok(()) => pipe.moved(),
        Err(_) => pipe.stay(&bytes),
    }
    pushed
}

/// Writes `bytes` into Linux's pipe.
fn push(c: &Call, through: Through, bytes: &[u8]) -> Result<(), Errno> {
    let call = |kind: u32, nr: u64, args: [u64; 6]| {
        Errno::from_return(delegate::call(c.user, kind, nr, args)?)
    };
    let len = bytes.len() as u64;
    let path_len = match through {
        Through::Path(path) => path.len() as u64 + 1,
        Through::Own(_) => 0,
    };
    with_scratch(c, path_len + len, |c, at| {
        let data_at = at + path_len;
        uaccess::write_bytes(c.process, data_at, bytes)?;
        let wrote = match through {
            Through::Own(fd) => {
                let kept = call(CALL_KEPT_FILE, KEPT_KEEP, [fd, 0, 0, 0, 0, 0])?;
                let wrote = call(CALL_KEPT_FILE, KEPT_PUSH, [kept, data_at, len, 0, 0, 0]);
                let _ = call(CALL_KEPT_FILE, KEPT_DROP, [kept, 0, 0, 0, 0, 0]);
                wrote
            }
            Through::Path(path) => {
                uaccess::write_bytes(c.process, at, path)?;
                uaccess::write_bytes(c.process, at + path.len() as u64, &[0])?;
                let fd = call(
                    CALL_SYSCALL,
                    SYS_OPENAT,
                    [AT_FDCWD, at, O_RDWR | O_NONBLOCK | O_CLOEXEC, 0, 0, 0],
                )?;
                let wrote = call(CALL_SYSCALL, SYS_WRITE, [fd, data_at, len, 0, 0, 0]);
                let _ = call(CALL_SYSCALL, SYS_CLOSE, [fd, 0, 0, 0, 0, 0]);
                wrote
            }
        };
        if wrote? == len {
            Ok(())
        } else {
            Err(EAGAIN)
        }
    })
}
