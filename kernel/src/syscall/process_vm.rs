//! process_vm_readv and process_vm_writev between processes of this
//! enclave (Open MPI's single-copy "CMA" path between ranks): the LWK
//! copies from one address space's pages straight to the other's, a chunk
//! at a time with both address spaces locked (in one order for every pair,
//! so two processes copying to each other at once cannot deadlock).

use alloc::vec;
use alloc::vec::Vec;
use hal::user_space::UserSpace;
use lwk_logic::errno::*;

use super::call::Call;
use crate::mm::uaccess;
use crate::mm::vm::AddressSpace;
use crate::process::{programs, with_both_vms, Process};

/// Linux's UIO_MAXIOV.
const IOV_MAX: u64 = 1024;
/// Bytes copied per step: the locks mask interrupts while it lasts.
const CHUNK: u64 = 64 * 1024;

pub fn process_vm_readv(c: &mut Call) -> SysResult {
    transfer(c, false)
}

pub fn process_vm_writev(c: &mut Call) -> SysResult {
    transfer(c, true)
}

/// (base, length) pairs of the iovec array at `at` in `p`.
fn iovecs(p: &Process, at: u64, count: u64) -> Result<Vec<(u64, u64)>, Errno> {
    if count > IOV_MAX {
        return Err(EINVAL);
    }
    let mut raw = vec![0u8; count as usize * 16];
    uaccess::read_bytes(p, at, &mut raw)?;
    let word = |b: &[u8]| u64::from_le_bytes(b.try_into().unwrap_or_default());
    Ok(raw.chunks_exact(16).map(|e| (word(&e[..8]), word(&e[8..]))).collect())
}

fn transfer(c: &mut Call, write: bool) -> SysResult {
    let [pid, local_at, local_count, remote_at, remote_count, flags] = c.args;
    if flags != 0 {
        return Err(EINVAL);
    }
    let local = iovecs(c.process, local_at, local_count)?;
    let remote = iovecs(c.process, remote_at, remote_count)?;
    let target = programs::find(pid as u32).ok_or(ESRCH)?;
    if !target.reachable_by(c.process) {
        return Err(EPERM);
    }
    let (mut l, mut r) = (Pieces::new(&local), Pieces::new(&remote));
    let mut done = 0u64;
    while let (Some((la, ln)), Some((ra, rn))) = (l.next_at(), r.next_at()) {
        let n = ln.min(rn).min(CHUNK);
        let copied = if write {
            copy(c.process, la, &target, ra, n)
        } else {
            copy(&target, ra, c.process, la, n)
        };
        // As on Linux: a fault after some bytes is a short count.
        done += copied;
        if copied < n {
            return if done > 0 { Ok(done) } else { Err(EFAULT) };
        }
        l.advance(n);
        r.advance(n);
    }
    Ok(done)
}

/// Copies up to `len` bytes from `src`'s `from` to `dst`'s `to`; the bytes
/// copied (fewer at an unmapped or, in `dst`, read-only page).
fn copy(src: &Process, from: u64, dst: &Process, to: u64, len: u64) -> u64 {
    // The memory each runs on (a vfork child's is its lender's).
    let (src, dst) = (src.mem(), dst.mem());
    let (src, dst) = (&*src, &*dst);
    if core::ptr::eq(src, dst) {
        // Within one address space the ranges may overlap: go through a buffer.
        let mut buf = vec![0u8; len as usize];
        let ok = uaccess::read_bytes(src, from, &mut buf)
            .and_then(|()| uaccess::write_bytes(dst, to, &buf));
        return if ok.is_ok() { len } else { 0 };
    }
    with_both_vms(src, dst, |s, d| copy_locked(src, s, from, dst, d, to, len))
}

fn copy_locked(
    src: &Process,
    s: &mut AddressSpace,
    from: u64,
    dst: &Process,
    d: &mut AddressSpace,
    to: u64,
    len: u64,
) -> u64 {
    let mut done = 0;
    while done < len {
        let a = uaccess::page_of(src, s, from + done);
        let (Ok(_), Ok(_)) = (a, uaccess::page_of(dst, d, to + done)) else { break };
        match UserSpace::copy(s.user(), from + done, d.user(), to + done, len - done) {
            Ok(n) => done += n,
            Err(_) => break,
        }
    }
    // Written through the kernel's mapping: MADV_DONTNEED must zero it.
    d.mark_written(to, to + done);
    done
}

/// A walk through an iovec list.
struct Pieces<'a> {
    list: &'a [(u64, u64)],
    index: usize,
    offset: u64,
}

impl<'a> Pieces<'a> {
    fn new(list: &'a [(u64, u64)]) -> Self {
        Pieces { list, index: 0, offset: 0 }
    }

    /// Where the next bytes go and how many the current piece has left.
    fn next_at(&mut self) -> Option<(u64, u64)> {
        while let Some(&(base, len)) = self.list.get(self.index) {
            if self.offset < len {
                return Some((base.wrapping_add(self.offset), len - self.offset));
            }
            self.index += 1;
            self.offset = 0;
        }
        None
    }

    fn advance(&mut self, n: u64) {
        self.offset += n;
    }
}
