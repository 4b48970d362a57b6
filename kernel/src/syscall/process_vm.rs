//! process_vm_readv and process_vm_writev between processes of this
//! enclave (Open MPI's single-copy "CMA" path between ranks): the LWK
//! copies from one address space to the other through a kernel buffer, so
//! that it never holds both address-space locks at once.

use alloc::vec;
use alloc::vec::Vec;
use lwk_logic::errno::*;

use super::Call;
use crate::process::{launch, uaccess, Process};

/// Linux's UIO_MAXIOV.
const IOV_MAX: u64 = 1024;
/// Bytes copied per step.
const CHUNK: usize = 64 * 1024;

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
    let target = launch::find(pid as u32).ok_or(ESRCH)?;
    let (mut l, mut r) = (Pieces::new(&local), Pieces::new(&remote));
    let mut buf = vec![0u8; CHUNK];
    let mut done = 0u64;
    while let (Some((la, ln)), Some((ra, rn))) = (l.next_at(), r.next_at()) {
        let n = ln.min(rn).min(CHUNK as u64) as usize;
        let copied = if write {
            uaccess::read_bytes(c.process, la, &mut buf[..n])
                .and_then(|()| uaccess::write_bytes(&target, ra, &buf[..n]))
        } else {
            uaccess::read_bytes(&target, ra, &mut buf[..n])
                .and_then(|()| uaccess::write_bytes(c.process, la, &buf[..n]))
        };
        if let Err(e) = copied {
            // As on Linux: a fault after some bytes is a short count.
            return if done > 0 { Ok(done) } else { Err(e) };
        }
        l.advance(n as u64);
        r.advance(n as u64);
        done += n as u64;
    }
    Ok(done)
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
