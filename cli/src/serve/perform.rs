//! Performing one delegated system call in this process, once
//! `policy::check` has let it through. The thin layer over libc::syscall.

use super::policy::{self, IOVEC_SIZE, SIGMASK_ARG_SIZE};
use super::usercopy::UserCopy;
use std::io;
use std::os::fd::RawFd;

/// Performs delegated system calls (a trait so the worker tests can block
/// and count at will).
pub trait Perform: Send + Sync + 'static {
    /// The result as the kernel returns it: a value, or -errno.
    fn perform(&self, nr: u64, args: [u64; 6]) -> i64;
}

pub struct Performer {
    /// Descriptors the program must not touch.
    reserved: Vec<RawFd>,
    copier: UserCopy,
}

impl Performer {
    /// `reserved` is extended with the copier's own descriptors.
    pub fn new(mut reserved: Vec<RawFd>, copier: UserCopy) -> Performer {
        reserved.extend(copier.fds());
        Performer { reserved, copier }
    }

    /// readv/writev with a copy of the program's iovec array, each buffer
    /// checked, so the kernel only ever touches the program area.
    fn vectored(&self, nr: u64, args: [u64; 6]) -> i64 {
        let count = args[2] as usize;
        let mut raw = vec![0u8; count * IOVEC_SIZE as usize];
        if let Err(errno) = self.copier.read(args[1], &mut raw) {
            return -(errno as i64);
        }
        let mut iovecs = Vec::with_capacity(count);
        for entry in raw.chunks_exact(IOVEC_SIZE as usize) {
            let base = u64::from_le_bytes(entry[..8].try_into().unwrap_or_default());
            let len = u64::from_le_bytes(entry[8..].try_into().unwrap_or_default());
            if !policy::inside(base, len) {
                return -(libc::EFAULT as i64);
            }
            iovecs.push(libc::iovec { iov_base: base as *mut libc::c_void, iov_len: len as usize });
        }
        // SAFETY: `iovecs` is our own array of `count` entries and outlives
        // the call; each buffer lies in the program area (checked above),
        // which holds no memory of this process, and a fault there is EFAULT.
        raw_result(unsafe { libc::syscall(nr as libc::c_long, args[0], iovecs.as_ptr(), count) })
    }

    /// pselect6 with a copy of its {sigset pointer, size} pair, the pointer
    /// checked, so the kernel reads the signal mask from the program area.
    fn pselect(&self, args: [u64; 6]) -> i64 {
        let mut raw = [0u8; SIGMASK_ARG_SIZE as usize];
        if let Err(errno) = self.copier.read(args[5], &mut raw) {
            return -(errno as i64);
        }
        let pair = [
            u64::from_le_bytes(raw[..8].try_into().unwrap_or_default()),
            u64::from_le_bytes(raw[8..].try_into().unwrap_or_default()),
        ];
        if pair[0] != 0 && !policy::inside(pair[0], pair[1]) {
            return -(libc::EFAULT as i64);
        }
        let [a, b, c, d, e, _] = args;
        // SAFETY: as in perform(), and the sixth argument is our own pair,
        // which outlives the call, whose pointer lies in the program area.
        raw_result(unsafe { libc::syscall(libc::SYS_pselect6, a, b, c, d, e, pair.as_ptr()) })
    }
}

impl Perform for Performer {
    fn perform(&self, nr: u64, args: [u64; 6]) -> i64 {
        if let Err(errno) = policy::check(nr, &args, &self.reserved) {
            return -(errno as i64);
        }
        if nr == libc::SYS_readv as u64 || nr == libc::SYS_writev as u64 {
            return self.vectored(nr, args);
        }
        if nr == libc::SYS_pselect6 as u64 && args[5] != 0 {
            return self.pselect(args);
        }
        let [a, b, c, d, e, f] = args;
        // SAFETY: policy::check allowed only calls of the delegated set, on
        // descriptors that are not this process's own, with every pointer
        // argument inside the program area for as many bytes as the call
        // may touch. That area is the mirror: it holds no memory of this
        // process, so whatever the kernel writes there cannot break it, and
        // an unmapped page there makes the call fail with EFAULT.
        raw_result(unsafe { libc::syscall(nr as libc::c_long, a, b, c, d, e, f) })
    }
}

/// libc::syscall's -1 and errno as the kernel's -errno.
fn raw_result(value: libc::c_long) -> i64 {
    if value == -1 {
        -(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
    } else {
        value
    }
}

#[cfg(test)]
mod tests;
