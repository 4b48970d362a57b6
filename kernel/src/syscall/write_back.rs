//! Writes to shared file mappings reach the file on Linux: the pages of a
//! writable MAP_SHARED mapping are written back (a delegated pwrite64 from
//! the mapping itself, through the mirror) at msync, at munmap and when the
//! program ends or execs, to a descriptor of the file that the program's
//! `atoll run` keeps from mmap on (a duplicate, close-on-exec, so the
//! program may close its own). A mapping replaced by MAP_FIXED or moved by
//! mremap, or a program killed by a signal, is not written back.

use alloc::collections::BTreeSet;
use lwk_logic::errno::*;

use super::Call;
use crate::process::delegate;
use crate::process::vm::WriteBack;
use atoll_abi::CALL_SYSCALL;

const PAGE_SIZE: u64 = 4096;

const SYS_PWRITE64: u64 = 18;
const SYS_CLOSE: u64 = 3;
const SYS_FCNTL: u64 = 72;
const F_DUPFD_CLOEXEC: u64 = 1030;
/// The kept descriptors start here, out of the way of the program's own
/// (from 0 if the program may not have that many).
const KEPT_FD_FROM: u64 = 512;

/// A descriptor of `fd`'s file kept for writing a mapping back (None if
/// Linux gives none: the mapping then stays in the enclave).
pub fn keep(c: &Call, fd: u64, file_size: u64) -> Option<WriteBack> {
    let dup = |from| {
        delegate::call(c.user, CALL_SYSCALL, SYS_FCNTL, [fd, F_DUPFD_CLOEXEC, from, 0, 0, 0])
    };
    let kept = [KEPT_FD_FROM, 0].into_iter().find_map(|from| dup(from).ok().filter(|&r| r >= 0))?;
    Some(WriteBack { fd: kept as u64, file_size })
}

/// The mapping that would have kept it was not made.
pub fn forget(c: &Call, kept: Option<WriteBack>) {
    if let Some(wb) = kept {
        let _ = delegate::call(c.user, CALL_SYSCALL, SYS_CLOSE, [wb.fd, 0, 0, 0, 0, 0]);
    }
}

/// Writes the shared file pages in [start, end) back to their files; EIO
/// if Linux could not take them all.
pub fn write_back(c: &Call, start: u64, end: u64) -> Result<(), Errno> {
    let pieces = c.process.vm.lock().write_backs(start, end);
    let mut failed = false;
    for p in pieces {
        let mut done = 0;
        while done < p.len {
            let args = [p.fd, p.va + done, p.len - done, p.offset + done, 0, 0];
            match delegate::call(c.user, CALL_SYSCALL, SYS_PWRITE64, args).map(Errno::from_return) {
                Ok(Ok(n)) if n > 0 => done += n,
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

/// The kept descriptors of shared ranges in [start, end), before they go.
pub fn kept_in(c: &Call, start: u64, end: u64) -> BTreeSet<u64> {
    let vm = c.process.vm.lock();
    vm.write_backs(start, end).iter().map(|p| p.fd).collect()
}

/// Closes those of `fds` that no shared range keeps any more.
pub fn close_unkept(c: &Call, fds: BTreeSet<u64>) {
    let still = c.process.vm.lock().write_back_fds();
    for fd in fds.difference(&still) {
        let _ = delegate::call(c.user, CALL_SYSCALL, SYS_CLOSE, [*fd, 0, 0, 0, 0, 0]);
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
    let end = addr.checked_add(len.div_ceil(PAGE_SIZE) * PAGE_SIZE).ok_or(ENOMEM)?;
    if !c.process.vm.lock().covers(addr, end) {
        return Err(ENOMEM);
    }
    write_back(c, addr, end).map(|()| 0)
}

/// The program ends or execs: everything shared goes back to its file.
pub fn all(c: &Call) {
    let _ = write_back(c, 0, u64::MAX);
}
