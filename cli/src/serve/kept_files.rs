//! The descriptors `atoll run` keeps for writing a program's shared file
//! mappings back (CALL_KEPT_FILE, the LWK's write_back.rs), and a pipe's
//! bytes into Linux's pipe when it leaves the enclave (pipe_move.rs). Each is a file
//! description of its own (the file reopened, so the program's fcntl on
//! its descriptor, O_APPEND say, cannot steer it), close-on-exec, numbered
//! from 512 below atoll run's own. The program can neither use, close nor
//! replace one: they count as reserved, and a close or dup2 of the program
//! holds the set still from its check to its end.

use std::collections::BTreeMap;
use std::os::fd::{AsFd, AsRawFd, IntoRawFd, OwnedFd, RawFd};
use std::sync::{RwLock, RwLockReadGuard};

use super::descriptors::{KEPT_FD as FIRST, RESERVED_FD as LIMIT};
use super::passthrough;
use atoll_abi::{KEPT_DROP, KEPT_KEEP, KEPT_PUSH, KEPT_WRITE};
use rustix::fs::{open, Mode, OFlags};
use rustix::io::fcntl_dupfd_cloexec;

#[derive(Default)]
pub struct KeptFiles {
    fds: RwLock<BTreeMap<RawFd, OwnedFd>>,
}

/// The kept set, held still while the guard lives.
pub type Held<'a> = RwLockReadGuard<'a, BTreeMap<RawFd, OwnedFd>>;

impl KeptFiles {
    /// The set, held still until the guard is dropped.
    pub fn hold(&self) -> Held<'_> {
        self.fds.read().unwrap_or_else(|p| p.into_inner())
    }

    /// CALL_KEPT_FILE: `op` (KEPT_*) with `args`; a value or -errno.
    pub fn call(&self, op: u64, args: [u64; 6]) -> i64 {
        let fd = args[0] as u32 as RawFd;
        match op {
            KEPT_KEEP => self.keep(fd),
            KEPT_WRITE => match self.hold().get(&fd) {
                Some(kept) => passthrough::pwrite(kept.as_fd(), args[1], args[2], args[3]),
                None => -(libc::EBADF as i64),
            },
            KEPT_PUSH => match self.hold().get(&fd) {
                Some(kept) => passthrough::write_now(kept.as_fd(), args[1], args[2]),
                None => -(libc::EBADF as i64),
            },
            KEPT_DROP => match self.fds.write().unwrap_or_else(|p| p.into_inner()).remove(&fd) {
                Some(kept) => passthrough::close(kept),
                None => -(libc::EBADF as i64),
            },
            _ => -(libc::EINVAL as i64),
        }
    }

    /// A description of the program's `fd`'s file of its own, kept.
    fn keep(&self, fd: RawFd) -> i64 {
        let mut kept = self.fds.write().unwrap_or_else(|p| p.into_inner());
        if kept.contains_key(&fd) || fd >= LIMIT {
            return -(libc::EBADF as i64);
        }
        let moved = open(format!("/proc/self/fd/{fd}"), OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())
            .and_then(|own| fcntl_dupfd_cloexec(own, FIRST));
        let moved = match moved {
            Ok(moved) => moved,
            Err(e) => return -(e.raw_os_error() as i64),
        };
        let number = moved.as_raw_fd();
        if number >= LIMIT {
            return -(libc::EMFILE as i64);
        }
        kept.insert(number, moved);
        number.into()
    }

    /// The kept descriptors now (for a forked copy of this process, which
    /// closes them: its child's mappings are written back by its parent).
    pub fn snapshot(&self) -> Vec<RawFd> {
        self.hold().keys().copied().collect()
    }

    /// The program exec'ed: its kept descriptors were closed with the other
    /// close-on-exec ones (passthrough::close_on_exec_below), so they are
    /// forgotten, not closed again; the numbers are free again.
    pub fn exec_done(&self) {
        let closed = std::mem::take(&mut *self.fds.write().unwrap_or_else(|p| p.into_inner()));
        closed.into_values().for_each(|fd| _ = fd.into_raw_fd());
    }
}
