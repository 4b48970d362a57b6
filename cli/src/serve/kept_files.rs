//! The descriptors `atoll run` keeps for writing a program's shared file
//! mappings back (CALL_KEPT_FILE, the LWK's write_back.rs). Each is a file
//! description of its own (the file reopened, so the program's fcntl on
//! its descriptor, O_APPEND say, cannot steer it), close-on-exec, numbered
//! from 512 below atoll run's own. The program can neither use, close nor
//! replace one: they count as reserved, and a close or dup2 of the program
//! holds the set still from its check to its end.

use std::collections::BTreeSet;
use std::os::fd::RawFd;
use std::sync::{RwLock, RwLockReadGuard};

use super::perform::raw_result as result;
use super::policy;
use atoll_abi::{KEPT_DROP, KEPT_KEEP, KEPT_WRITE};

/// Where the kept descriptors are numbered from, and up to (atoll run's own).
const FIRST: RawFd = 512;
const LIMIT: RawFd = crate::commands::run::RESERVED_FD;

#[derive(Default)]
pub struct KeptFiles {
    fds: RwLock<BTreeSet<RawFd>>,
}

/// The kept set, held still while the guard lives.
pub type Held<'a> = RwLockReadGuard<'a, BTreeSet<RawFd>>;

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
            KEPT_WRITE => {
                let kept = self.hold();
                if !kept.contains(&fd) {
                    return -(libc::EBADF as i64);
                }
                if !policy::inside(args[1], args[2]) {
                    return -(libc::EFAULT as i64);
                }
                // SAFETY: a kept descriptor (held still), and a buffer
                // inside the program area, the mirror, which pwrite64 only reads.
                result(unsafe { libc::syscall(libc::SYS_pwrite64, fd, args[1], args[2], args[3]) })
            }
            KEPT_DROP => {
                let mut kept = self.fds.write().unwrap_or_else(|p| p.into_inner());
                if !kept.remove(&fd) {
                    return -(libc::EBADF as i64);
                }
                // SAFETY: closes a descriptor this process kept and nothing else uses.
                result(unsafe { libc::close(fd) }.into())
            }
            _ => -(libc::EINVAL as i64),
        }
    }

    /// A description of the program's `fd`'s file of its own, kept.
    fn keep(&self, fd: RawFd) -> i64 {
        let mut kept = self.fds.write().unwrap_or_else(|p| p.into_inner());
        if kept.contains(&fd) || fd >= LIMIT {
            return -(libc::EBADF as i64);
        }
        let path = format!("/proc/self/fd/{fd}\0");
        // SAFETY: a NUL-terminated path; open only reads it.
        let own = unsafe { libc::open(path.as_ptr().cast(), libc::O_RDWR | libc::O_CLOEXEC) };
        if own < 0 {
            return result(-1);
        }
        // SAFETY: fcntl and close on the descriptor just opened, ours alone.
        let moved = unsafe { libc::fcntl(own, libc::F_DUPFD_CLOEXEC, FIRST) };
        let err = result(-1);
        // SAFETY: as above.
        unsafe { libc::close(own) };
        if moved < 0 {
            return err;
        }
        if moved >= LIMIT {
            // SAFETY: as above: the duplicate just made.
            unsafe { libc::close(moved) };
            return -(libc::EMFILE as i64);
        }
        kept.insert(moved);
        moved.into()
    }

    /// The kept descriptors now (for a forked copy of this process, which
    /// closes them: its child's mappings are written back by its parent).
    pub fn snapshot(&self) -> Vec<RawFd> {
        self.hold().iter().copied().collect()
    }

    /// The program exec'ed: its kept descriptors were closed with the other
    /// close-on-exec ones; the numbers are free again.
    pub fn exec_done(&self) {
        self.fds.write().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
