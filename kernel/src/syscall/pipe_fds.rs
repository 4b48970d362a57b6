//! The descriptor changes a process's local pipe ends follow: Linux makes
//! each (it numbers every descriptor of the program), then the table says
//! the same. pipe and pipe2 make a local pipe beside Linux's; close, the
//! dups and fcntl change which numbers are its ends; execve drops those
//! Linux closed on exec. (close_range is not provided: ENOSYS.)

use atoll_abi::syscalls::number;
use lwk_logic::errno::{Errno, SysResult, EBADF};

use super::call::Call;
use super::files;
use super::pipe_move;
use crate::mm::uaccess;
use crate::pipe::LocalPipe;
use crate::process::delegate;

const SYS_CLOSE: u64 = number("close");
const SYS_FCNTL: u64 = number("fcntl");
const SYS_DUP2: u64 = number("dup2");
const SYS_DUP3: u64 = number("dup3");
const SYS_PIPE2: u64 = number("pipe2");
const O_NONBLOCK: u64 = 0o4000;
/// Packet mode: left to Linux.
const O_DIRECT: u64 = 0o40000;
const F_DUPFD: u64 = 0;
const F_GETFD: u64 = 1;
const F_SETFD: u64 = 2;
const F_GETFL: u64 = 3;
const F_SETFL: u64 = 4;
const F_DUPFD_CLOEXEC: u64 = 1030;
const F_GETPIPE_SZ: u64 = 1032;

/// pipe(fds), pipe2(fds, flags): Linux's pipe numbers the ends, the LWK
/// keeps the bytes. (A thread that rewrites `fds` meanwhile only confuses
/// its own program.)
pub fn create(c: &Call, nr: u64) -> SysResult {
    c.process.local_fds.while_changing(|| {
        let r = files::delegate(c.user, nr, c.args)?;
        let flags = if nr == SYS_PIPE2 { c.args[1] } else { 0 };
        if flags & O_DIRECT != 0 {
            return Ok(r);
        }
        let mut raw = [0u8; 8];
        if uaccess::read_bytes(c.process, c.args[0], &mut raw).is_err() {
            return Ok(r);
        }
        let [r0, r1, r2, r3, w0, w1, w2, w3] = raw;
        let (read_fd, write_fd) =
            (u32::from_le_bytes([r0, r1, r2, r3]), u32::from_le_bytes([w0, w1, w2, w3]));
        // Linux's pipe may be smaller than its default (pipe-user-pages-soft):
        // the bytes that wait here must fit there when the pipe moves.
        let Ok(capacity) = linux_fcntl(c, read_fd.into(), F_GETPIPE_SZ) else { return Ok(r) };
        let Some((read_end, write_end)) =
            LocalPipe::make(capacity as usize, flags & O_NONBLOCK != 0)
        else {
            return Ok(r);
        };
        c.process.local_fds.insert(read_fd, read_end);
        c.process.local_fds.insert(write_fd, write_end);
        Ok(r)
    })
}

/// close(fd): out of the table first, so that no other thread's call on
/// that number reaches the pipe once Linux may have reused it.
pub fn close(c: &Call) -> SysResult {
    c.process.local_fds.while_changing(|| {
        c.process.local_fds.remove(c.args[0]);
        files::delegate(c.user, SYS_CLOSE, c.args)
    })
}

/// dup(old), dup2(old, new), dup3(old, new, flags), fcntl(old, F_DUPFD*):
/// the new number is the same end (or no longer a local one).
pub fn dup(c: &Call, nr: u64) -> SysResult {
    c.process.local_fds.while_changing(|| {
        let end = c.process.local_fds.get(c.args[0]);
        let new = files::delegate(c.user, nr, c.args)?;
        match end {
            Some(end) => c.process.local_fds.insert(new as u32, end),
            None if nr == SYS_DUP2 || nr == SYS_DUP3 => c.process.local_fds.remove(new),
            None => {}
        }
        Ok(new)
    })
}

/// fcntl(fd, cmd, arg) on a local end: dups follow, O_NONBLOCK is copied,
/// the descriptor flags are Linux's alone; any other command (pipe size,
/// locks, owners, ...) is Linux's to answer about its pipe.
pub fn fcntl(c: &Call) -> Option<SysResult> {
    let [fd, cmd, arg, ..] = c.args;
    let end = c.process.local_fds.get(fd)?;
    match cmd {
        F_DUPFD | F_DUPFD_CLOEXEC => Some(dup(c, SYS_FCNTL)),
        F_GETFD | F_SETFD | F_GETFL => None,
        F_SETFL => {
            let r = files::delegate(c.user, SYS_FCNTL, c.args);
            if r.is_ok() {
                end.set_nonblock(arg & O_NONBLOCK != 0);
            }
            Some(r)
        }
        _ => pipe_move::fd_to_linux(c, fd).err().map(Err),
    }
}

/// After an execve: the ends whose descriptors Linux closed on exec close.
pub fn after_exec(c: &Call) {
    for (fd, _) in c.process.local_fds.all() {
        if linux_fcntl(c, fd.into(), F_GETFD) == Err(EBADF) {
            c.process.local_fds.remove(fd.into());
        }
    }
}

/// fcntl(fd, cmd) on Linux.
fn linux_fcntl(c: &Call, fd: u64, cmd: u64) -> Result<u64, Errno> {
    let ret = delegate::call(c.user, atoll_abi::CALL_SYSCALL, SYS_FCNTL, [fd, cmd, 0, 0, 0, 0])?;
    Errno::from_return(ret)
}
