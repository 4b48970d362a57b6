//! read, write, readv and writev on a local pipe's end: the bytes go
//! between the program's buffers and the pipe in the LWK, and a call that
//! must wait sleeps here. A call on a pipe that moved to Linux (or on the
//! wrong end, for Linux's EBADF) is delegated.

use alloc::vec;
use alloc::vec::Vec;
use atoll_abi::syscalls::number;
use lwk_logic::errno::{Errno, SysResult, EINVAL, EPIPE};
use lwk_logic::pipe::End;

use super::call::Call;
use super::files;
use crate::mm::uaccess;
use crate::pipe::{OpenEnd, Outcome};
use crate::process::signal;
use crate::process::sigstate::{SigInfo, SI_USER};

const SYS_READ: u64 = number("read");
const SYS_WRITE: u64 = number("write");
const SYS_READV: u64 = number("readv");
const SIGPIPE: u32 = 13;
/// Linux's UIO_MAXIOV.
const IOV_MAX: u64 = 1024;
/// Bytes a write copies in at a time: a writer waiting for room holds no
/// more of the LWK's heap than this.
const CHUNK: usize = 16 * 1024;

/// The answer to `nr` on a local pipe's end; None to delegate it.
pub fn call(c: &Call, nr: u64) -> Option<SysResult> {
    let end = c.process.local_fds.get(c.args[0])?;
    let reads = nr == SYS_READ || nr == SYS_READV;
    if end.end != if reads { End::Read } else { End::Write } || end.pipe.on_linux() {
        return None;
    }
    let buffers = match nr {
        SYS_READ | SYS_WRITE => {
            Buffers { parts: vec![(c.args[1], c.args[2])], total: c.args[2] as usize }
        }
        _ => match Buffers::of_iovec(c, c.args[1], c.args[2]) {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        },
    };
    if reads {
        read(c, &end, &buffers)
    } else {
        write(c, &end, &buffers, nr)
    }
}

fn read(c: &Call, end: &OpenEnd, buffers: &Buffers) -> Option<SysResult> {
    if buffers.total == 0 {
        return Some(Ok(0));
    }
    let bytes = match end.pipe.read(buffers.total, end.nonblock(), || signal::interrupted(c.user)) {
        Outcome::Linux => return None,
        Outcome::Done(r) => r,
    };
    // A buffer that faults part-way: EFAULT, and the bytes stay in the
    // pipe, as Linux leaves a pipe buffer it could not copy whole.
    Some(bytes.and_then(|bytes| match buffers.copy_out(c, &bytes) {
        Ok(()) => Ok(bytes.len() as u64),
        Err((_, e)) => {
            end.pipe.unread(&bytes);
            Err(e)
        }
    }))
}

fn write(c: &Call, end: &OpenEnd, buffers: &Buffers, nr: u64) -> Option<SysResult> {
    let total = buffers.total;
    if total == 0 {
        return Some(Ok(0));
    }
    let mut done = 0;
    // What was written counts, whatever stops the rest.
    let ended = |done: usize, e: Errno| Some(if done > 0 { Ok(done as u64) } else { Err(e) });
    while done < total {
        let chunk = match buffers.copy_in(c, done, (total - done).min(CHUNK)) {
            Ok(chunk) => chunk,
            Err(e) => return ended(done, e),
        };
        match end.pipe.write(&chunk, total, end.nonblock(), || signal::interrupted(c.user)) {
            Outcome::Done(Ok(n)) => done += n,
            Outcome::Done(Err(EPIPE)) => {
                let _ = signal::send_to_thread(
                    c.process,
                    c.user.tid,
                    SigInfo::user(SIGPIPE, SI_USER, c.process.pid),
                );
                return ended(done, EPIPE);
            }
            Outcome::Done(Err(e)) => return ended(done, e),
            Outcome::Linux if done == 0 => return None,
            // Moved mid-call: a plain write's rest goes to Linux's pipe.
            Outcome::Linux if nr == SYS_WRITE => {
                let [fd, buf, ..] = c.args;
                let rest = [fd, buf + done as u64, (total - done) as u64, 0, 0, 0];
                return Some(Ok(
                    done as u64 + files::delegate(c.user, SYS_WRITE, rest).unwrap_or(0)
                ));
            }
            Outcome::Linux => return Some(Ok(done as u64)),
        }
    }
    Some(Ok(done as u64))
}

/// The program's buffers of one call, in order.
struct Buffers {
    parts: Vec<(u64, u64)>,
    total: usize,
}

impl Buffers {
    /// readv/writev's `count` struct iovecs at `at`.
    fn of_iovec(c: &Call, at: u64, count: u64) -> Result<Buffers, Errno> {
        if count > IOV_MAX {
            return Err(EINVAL);
        }
        let mut raw = vec![0u8; count as usize * 16];
        uaccess::read_bytes(c.process, at, &mut raw)?;
        let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
        let parts: Vec<(u64, u64)> =
            raw.chunks_exact(16).map(|e| (word(&e[..8]), word(&e[8..]))).collect();
        let total =
            parts.iter().try_fold(0u64, |sum, &(_, len)| sum.checked_add(len)).ok_or(EINVAL)?;
        if total > isize::MAX as u64 {
            return Err(EINVAL);
        }
        Ok(Buffers { parts, total: total as usize })
    }

    /// `len` bytes from offset `from` of the buffers.
    fn copy_in(&self, c: &Call, from: usize, len: usize) -> Result<Vec<u8>, Errno> {
        let mut out = vec![0u8; len];
        self.each(from, len, |at, range| uaccess::read_bytes(c.process, at, &mut out[range]))
            .map_err(|(_, e)| e)?;
        Ok(out)
    }

    /// `bytes` into the buffers from their start; on a fault, how many
    /// went in whole buffers' pieces before it.
    fn copy_out(&self, c: &Call, bytes: &[u8]) -> Result<(), (usize, Errno)> {
        self.each(0, bytes.len(), |at, range| uaccess::write_bytes(c.process, at, &bytes[range]))
    }

    /// `f(address, range of the bytes)` for each piece of [from, from+len);
    /// on an error, the bytes done before the failing piece.
    fn each(
        &self,
        from: usize,
        len: usize,
        mut f: impl FnMut(u64, core::ops::Range<usize>) -> Result<(), Errno>,
    ) -> Result<(), (usize, Errno)> {
        let (mut skip, mut done) = (from, 0);
        for &(base, part_len) in &self.parts {
            let part_len = part_len as usize;
            if skip >= part_len {
                skip -= part_len;
                continue;
            }
            let n = (part_len - skip).min(len - done);
            f(base.wrapping_add(skip as u64), done..done + n).map_err(|e| (done, e))?;
            done += n;
            skip = 0;
            if done == len {
                break;
            }
        }
        Ok(())
    }
}
