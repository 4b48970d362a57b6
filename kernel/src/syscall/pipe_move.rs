//! Moving a local pipe to Linux, before a call that needs Linux to see it:
//! waiting on it beside other files (poll, select, epoll), splicing,
//! ioctls (FIONREAD), another fcntl, handing it to another process
//! (SCM_RIGHTS), or opening it again by a path (/proc/<pid>/fd/N,
//! /dev/fd/N, /dev/stdin). The bytes waiting in the LWK are written into
//! Linux's pipe through a description of its own (opened by that path:
//! a pipe opened read-write never waits for a reader), and from then on
//! every call on the pipe is Linux's. Not seen: a pipe opened through a
//! symbolic link of the program's own or relative to a /proc directory's
//! descriptor.

use alloc::format;
use alloc::vec::Vec;
use atoll_abi::syscalls::number;
use atoll_abi::CALL_SYSCALL;
use lwk_logic::errno::{Errno, EAGAIN};

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
/// poll() looks at no more descriptors than a process may have.
const MOST_POLLED: u64 = 1 << 20;

/// Before delegated call `nr` of a process with local pipe ends: the
/// pipes it makes Linux see move there.
pub fn before_delegating(c: &Call, nr: u64) {
    let [a0, a1, a2, ..] = c.args;
    match nr {
        SYS_IOCTL | SYS_PREADV2 | SYS_PWRITEV2 => fd_to_linux(c, a0),
        SYS_SPLICE | SYS_COPY_FILE_RANGE => [a0, a2].iter().for_each(|&fd| fd_to_linux(c, fd)),
        SYS_TEE | SYS_SENDFILE => [a0, a1].iter().for_each(|&fd| fd_to_linux(c, fd)),
        SYS_EPOLL_CTL => fd_to_linux(c, a2),
        SYS_POLL | SYS_PPOLL => polled(c, a0, a1),
        SYS_SELECT | SYS_PSELECT6 => selected(c, a0, [a1, a2, c.args[3]]),
        SYS_OPEN => opened(c, a0),
        SYS_OPENAT | SYS_OPENAT2 => opened(c, a1),
        // Descriptors handed over a socket (SCM_RIGHTS) are not looked
        // for: any control data moves them all.
        SYS_SENDMSG if !uaccess::read_u64(c.process, a1.wrapping_add(40)).is_ok_and(|n| n == 0) => {
            all_to_linux(c)
        }
        _ => {}
    }
}

/// The pipe of the caller's descriptor `fd`, if a local one, moves.
pub fn fd_to_linux(c: &Call, fd: u64) {
    if let Some(end) = c.process.local_fds.get(fd) {
        to_linux(c, &end.pipe, format!("/proc/self/fd/{fd}").as_bytes());
    }
}

fn all_to_linux(c: &Call) {
    for (fd, _) in c.process.local_fds.all() {
        fd_to_linux(c, fd.into());
    }
}

/// poll/ppoll(fds, nfds): struct pollfd is 8 bytes, the descriptor first.
fn polled(c: &Call, at: u64, count: u64) {
    let mut raw = alloc::vec![0u8; count.min(MOST_POLLED) as usize * 8];
    if uaccess::read_bytes(c.process, at, &mut raw).is_err() {
        return;
    }
    for entry in raw.chunks_exact(8) {
        let fd = i32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
        if fd >= 0 {
            fd_to_linux(c, fd as u64);
        }
    }
}

/// select/pselect6(nfds, sets...): each local end below nfds whose bit is
/// set in a set.
fn selected(c: &Call, nfds: u64, sets: [u64; 3]) {
    for (fd, _) in c.process.local_fds.all() {
        let fd = u64::from(fd);
        let in_a_set = fd < nfds
            && sets.iter().any(|&set| {
                set != 0
                    && uaccess::read_u64(c.process, set + fd / 64 * 8)
                        .is_ok_and(|w| w & (1 << (fd % 64)) != 0)
            });
        if in_a_set {
            fd_to_linux(c, fd);
        }
    }
}

/// open(path) of a descriptor's own path: /dev/fd/N, /dev/stdin (and
/// stdout, stderr), /proc/self/fd/N, /proc/<pid>/fd/N or
/// /proc/<pid>/task/<tid>/fd/N of a program of this enclave.
fn opened(c: &Call, path_at: u64) {
    let Some(path) = path_head(c, path_at) else { return };
    let Some((who, fd)) = descriptor_path(&path) else { return };
    let owner = match who {
        None => c.process.clone(),
        Some(pid) if pid == c.process.pid => c.process.clone(),
        Some(pid) => match programs::find(pid) {
            Some(p) => p,
            None => return,
        },
    };
    if let Some(end) = owner.local_fds.get(fd) {
        // The same path from this program's server reaches that pipe.
        to_linux(c, &end.pipe, &path);
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

/// Moves `pipe` to Linux, its waiting bytes written through `path` (which
/// the caller's server opens). If they cannot be, the pipe stays local
/// and the call goes on to Linux's answer (most likely the same refusal).
fn to_linux(c: &Call, pipe: &LocalPipe, path: &[u8]) {
    let Some(bytes) = pipe.begin_move(|| signal::interrupted(c.user)) else { return };
    if bytes.is_empty() {
        pipe.moved();
        return;
    }
    match push(c, path, &bytes) {
        Ok(()) => pipe.moved(),
        Err(e) => {
            hal::println!(
                "program {}: a pipe stays in the enclave: {e:?} writing its bytes to Linux",
                c.process.pid
            );
            pipe.stay(&bytes);
        }
    }
}

/// Writes `bytes` into the pipe at `path` on Linux.
fn push(c: &Call, path: &[u8], bytes: &[u8]) -> Result<(), Errno> {
    let linux = |nr: u64, args: [u64; 6]| {
        Errno::from_return(delegate::call(c.user, CALL_SYSCALL, nr, args)?)
    };
    let len = (path.len() + 1 + bytes.len()) as u64;
    with_scratch(c, len, |c, at| {
        let mut text: Vec<u8> = Vec::with_capacity(len as usize);
        text.extend_from_slice(path);
        text.push(0);
        text.extend_from_slice(bytes);
        uaccess::write_bytes(c.process, at, &text)?;
        let data_at = at + path.len() as u64 + 1;
        let fd = linux(SYS_OPENAT, [AT_FDCWD, at, O_RDWR | O_NONBLOCK | O_CLOEXEC, 0, 0, 0])?;
        let wrote = linux(SYS_WRITE, [fd, data_at, bytes.len() as u64, 0, 0, 0]);
        let _ = linux(SYS_CLOSE, [fd, 0, 0, 0, 0, 0]);
        if wrote? == bytes.len() as u64 {
            Ok(())
        } else {
            Err(EAGAIN)
        }
    })
}
