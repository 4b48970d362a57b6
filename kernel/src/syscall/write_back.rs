//! Writes to shared file mappings reach the file on Linux: the pages of a
//! writable MAP_SHARED mapping are written back (from the mapping itself,
//! through the mirror) at msync, at munmap, when MAP_FIXED replaces it and
//! when the program ends or execs, through a descriptor of the file that
//! the program's `atoll run` keeps from mmap on (CALL_KEPT_FILE: the file
//! reopened, which the program cannot use, close or replace, so it may
//! close its own). A forked child leaves its parent's mappings to the
//! parent, whose write-back covers the frames they share, and so does a
//! vfork child, which runs on them. Not written back:
//! a mapping moved by mremap, and a program killed by a signal.

use alloc::collections::BTreeSet;
use lwk_logic::errno::*;

use super::call::Call;
use crate::mm::vm::WriteBack;
use crate::process::delegate;
use atoll_abi::{CALL_KEPT_FILE, CALL_SYSCALL, KEPT_DROP, KEPT_KEEP, KEPT_WRITE};

const PAGE_SIZE: u64 = 4096;

const SYS_FCNTL: u64 = 72;
const F_GETFL: u64 = 3;
const O_ACCMODE: u64 = 3;
const O_RDWR: u64 = 2;

/// A descriptor of `fd`'s file kept for writing a writable shared mapping
/// back: EACCES if `fd` is not open for reading and writing (as on Linux);
/// None if Linux gives no descriptor (the mapping then stays in the enclave).
pub fn keep(c: &Call, fd: u64, file_size: u64) -> Result<Option<WriteBack>, Errno> {
    let args = [fd, F_GETFL, 0, 0, 0, 0];
    let flags = Errno::from_return(delegate::call(c.user, CALL_SYSCALL, SYS_FCNTL, args)?)?;
    if flags & O_ACCMODE != O_RDWR {
        return Err(EACCES);
    }
    let kept = kept_file(c, KEPT_KEEP, [fd, 0, 0, 0]).ok();
    Ok(kept.map(|fd| WriteBack { fd, file_size }))
}

/// CALL_KEPT_FILE `op` with `args`: its value, or the errno.
fn kept_file(c: &Call, op: u64, [a, b, d, e]: [u64; 4]) -> SysResult {
    let r = delegate::call(c.user, CALL_KEPT_FILE, op, [a, b, d, e, 0, 0])?;
    Errno::from_return(r)
}

/// The mapping that would have kept it was not made.
pub fn forget(c: &Call, kept: Option<WriteBack>) {
    if let Some(wb) = kept {
        close(c, wb.fd);
    }
}

fn close(c: &Call, fd: u64) {
    let _ = kept_file(c, KEPT_DROP, [fd, 0, 0, 0]);
}

/// Writes the shared file pages in [start, end) back to their files; EIO
/// if Linux could not take them all.
pub fn write_back(c: &Call, start: u64, end: u64) -> Result<(), Errno> {
    let pieces = c.mem().vm.lock().write_backs(start, end);
    let mut failed = false;
    for p in pieces {
        let mut done = 0;
        while done < p.len {
            let args = [p.fd, p.va + done, p.len - done, p.offset + done];
            match kept_file(c, KEPT_WRITE, args) {
                Ok(n) if n > 0 => done += n,
                _ => {
                    failed = true;
                    break;
                }
            }
        }
    }
    if failed {
        Err(EIO)
    } else {
        Ok(())
    }
}

/// [start, end) is about to be unmapped (munmap, or MAP_FIXED over it):
/// its shared file pages go back to their files (Linux reports no failure
/// of that either); the kept descriptors of its ranges, for close_unkept.
pub fn before_unmap(c: &Call, start: u64, end: u64) -> BTreeSet<u64> {
    let kept = kept_in(c, start, end);
    let _ = write_back(c, start, end);
    kept
}

/// The kept descriptors of shared ranges in [start, end), before they go.
pub fn kept_in(c: &Call, start: u64, end: u64) -> BTreeSet<u64> {
    c.mem().vm.lock().write_back_fds(start, end)
}

/// Closes those of `fds` that no shared range keeps any more.
pub fn close_unkept(c: &Call, fds: BTreeSet<u64>) {
    let still = c.mem().vm.lock().write_back_fds(0, u64::MAX);
    for &fd in fds.difference(&still) {
        close(c, fd);
    }
}

/// msync(addr, len, flags): the range's shared file pages go to their
/// files now (MS_ASYNC as MS_SYNC; MS_INVALIDATE has nothing to drop).
pub fn msync(c: &mut Call) -> SysResult {
    const MS_ASYNC: u64 = 1;
    const MS_INVALIDATE: u64 = 2;
    const MS_SYNC: u64 = 4;
    let [addr, len, flags, ..] = c.args;
    let both = flags & MS_ASYNC != 0 && flags & MS_SYNC != 0;
    if !addr.is_multiple_of(PAGE_SIZE) || flags & !(MS_ASYNC | MS_INVALIDATE | MS_SYNC) != 0 || both
    {
        return Err(EINVAL);
    }
    let end = len.div_ceil(PAGE_SIZE).checked_mul(PAGE_SIZE).and_then(|n| addr.checked_add(n));
    let end = end.ok_or(ENOMEM)?;
    if !c.mem().vm.lock().is_covered(addr, end) {
        return Err(ENOMEM);
    }
    write_back(c, addr, end).map(|()| 0)
}

/// The program ends or execs: everything shared goes back to its file
/// (not a vfork child's: the mappings stay its lender's).
pub fn all(c: &Call) {
    if !c.mem().is_lent() {
        let _ = write_back(c, 0, u64::MAX);
    }
}
