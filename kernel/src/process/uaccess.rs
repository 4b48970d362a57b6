//! Reading and writing a program's memory from system calls. Every access
//! goes through the program's page tables (under its address-space lock)
//! to the physical page, so a bad pointer is an EFAULT, never a kernel
//! fault. A vfork child's memory is its lender's (`Process::mem`).

use core::sync::atomic::{AtomicU32, Ordering};

use super::types::Process;
use crate::mm::vm::AddressSpace;
use hal::physmem;
use lwk_logic::errno::{Errno, EFAULT, EINVAL};
use lwk_logic::user_pages::{Translation, PAGE_SIZE};

/// Where `va` leads; the main stack's part without memory yet gets it
/// first (a system call may be the first to touch it). `p` owns `vm`
/// (`Process::mem`).
pub fn page_of(p: &Process, vm: &mut AddressSpace, va: u64) -> Result<Translation, Errno> {
    if let Some(t) = vm.translate(va) {
        return Ok(t);
    }
    if vm.grow_to(va).unwrap_or(false) {
        p.note_stack(vm);
    }
    vm.translate(va).ok_or(EFAULT)
}

/// Copies `buf.len()` bytes from the program's `va`.
pub fn read_bytes(p: &Process, va: u64, buf: &mut [u8]) -> Result<(), Errno> {
    let m = p.mem();
    let p = &*m;
    let mut vm = p.vm.lock();
    let mut done = 0;
    while done < buf.len() {
        let t = page_of(p, &mut vm, va.checked_add(done as u64).ok_or(EFAULT)?)?;
        let n = (t.rest_of_page as usize).min(buf.len() - done);
        physmem::copy_from(t.phys, &mut buf[done..done + n]);
        done += n;
    }
    Ok(())
}

/// Copies `buf` to the program's `va`; the pages must be writable.
pub fn write_bytes(p: &Process, va: u64, buf: &[u8]) -> Result<(), Errno> {
    let m = p.mem();
    let p = &*m;
    let mut vm = p.vm.lock();
    let mut done = 0;
    while done < buf.len() {
        let t = page_of(p, &mut vm, va.checked_add(done as u64).ok_or(EFAULT)?)?;
        if !t.writable {
            return Err(EFAULT);
        }
        let n = (t.rest_of_page as usize).min(buf.len() - done);
        physmem::copy_to(t.phys, &buf[done..done + n]);
        done += n;
    }
    // Written through the kernel's mapping: MADV_DONTNEED must zero it.
    vm.mark_written(va, va + buf.len() as u64);
    Ok(())
}

/// Writable program memory [va, va + len), at most a page long, held by
/// the address-space lock while a closure writes it: a signal frame goes
/// straight to the program's pages, without a staging copy.
pub struct UserSpan {
    va: u64,
    /// (physical address, length) of each page's part, in order.
    pieces: [(u64, u64); 2],
}

impl UserSpan {
    /// Copies `data` to the program's `at`, which the span holds.
    pub fn write(&self, at: u64, data: &[u8]) {
        let mut offset = at - self.va;
        let mut done = 0;
        for &(phys, len) in &self.pieces {
            if done == data.len() {
                break;
            }
            if offset >= len {
                offset -= len;
                continue;
            }
            let n = ((len - offset) as usize).min(data.len() - done);
            physmem::copy_to(phys + offset, &data[done..done + n]);
            done += n;
            offset = 0;
        }
        assert_eq!(done, data.len(), "write outside a user span");
    }

    /// The physical address of [at, at + len) when it lies in one page.
    pub fn contiguous(&self, at: u64, len: u64) -> Option<u64> {
        let mut offset = at - self.va;
        for &(phys, piece) in &self.pieces {
            if offset < piece {
                return (offset + len <= piece).then_some(phys + offset);
            }
            offset -= piece;
        }
        None
    }
}

/// Runs `write` on [va, va + len) (at most a page) once all of it is
/// mapped writable, under the address-space lock.
pub fn with_writable<R>(
    p: &Process,
    va: u64,
    len: u64,
    write: impl FnOnce(&UserSpan) -> R,
) -> Result<R, Errno> {
    let end = va.checked_add(len).ok_or(EFAULT)?;
    if len > PAGE_SIZE {
        return Err(EFAULT);
    }
    let m = p.mem();
    let p = &*m;
    let mut vm = p.vm.lock();
    let mut span = UserSpan { va, pieces: [(0, 0); 2] };
    let mut at = va;
    // A page or less spans at most two pages.
    for piece in span.pieces.iter_mut() {
        if at == end {
            break;
        }
        let t = page_of(p, &mut vm, at)?;
        if !t.writable {
            return Err(EFAULT);
        }
        let n = t.rest_of_page.min(end - at);
        *piece = (t.phys, n);
        at += n;
    }
    vm.mark_written(va, end);
    Ok(write(&span))
}

pub fn read_u64(p: &Process, va: u64) -> Result<u64, Errno> {
    let mut b = [0u8; 8];
    read_bytes(p, va, &mut b)?;
    Ok(u64::from_le_bytes(b))
}

pub fn write_u64(p: &Process, va: u64, v: u64) -> Result<(), Errno> {
    write_bytes(p, va, &v.to_le_bytes())
}

pub fn write_u32(p: &Process, va: u64, v: u32) -> Result<(), Errno> {
    write_bytes(p, va, &v.to_le_bytes())
}

/// Writes consecutive u64 words (a C struct of longs).
pub fn write_words(p: &Process, va: u64, words: &[u64]) -> Result<(), Errno> {
    let mut b = alloc::vec::Vec::with_capacity(words.len() * 8);
    for w in words {
        b.extend_from_slice(&w.to_le_bytes());
    }
    write_bytes(p, va, &b)
}

/// Reads consecutive u64 words (a C struct of longs) in one copy.
pub fn read_words<const N: usize>(p: &Process, va: u64) -> Result<[u64; N], Errno> {
    let mut b = [[0u8; 8]; N];
    read_bytes(p, va, b.as_flattened_mut())?;
    Ok(b.map(u64::from_le_bytes))
}

/// Runs `f` on the futex word at `va` (4-byte aligned, mapped) and its
/// page, under the address-space lock.
fn with_futex_word<R>(
    p: &Process,
    va: u64,
    f: impl FnOnce(&mut AddressSpace, Translation) -> Result<R, Errno>,
) -> Result<R, Errno> {
    if !va.is_multiple_of(4) {
        return Err(EINVAL);
    }
    let m = p.mem();
    let p = &*m;
    let mut vm = p.vm.lock();
    let t = page_of(p, &mut vm, va)?;
    f(&mut vm, t)
}

/// A futex word, for atomic reads (4-byte aligned, mapped).
pub fn futex_word(p: &Process, va: u64) -> Result<&'static AtomicU32, Errno> {
    with_futex_word(p, va, |_, t| Ok(physmem::atomic_u32(t.phys)))
}

/// Changes the futex word at `va` to `change(old)` atomically (it must be
/// writable: a read-only page's frame may be another process's too);
/// returns the old value. Under the address-space lock, so that the page
/// cannot become read-only (and shared by a fork) meanwhile.
pub fn futex_update(p: &Process, va: u64, change: impl Fn(u32) -> u32) -> Result<u32, Errno> {
    with_futex_word(p, va, |vm, t| {
        if !t.writable {
            return Err(EFAULT);
        }
        vm.mark_written(va, va + 4);
        let word = physmem::atomic_u32(t.phys);
        Ok(word
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| Some(change(old)))
            .unwrap_or(0))
    })
}
