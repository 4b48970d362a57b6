//! Reading and writing a program's memory from system calls. Every access
//! goes through the program's page tables (under its address-space lock)
//! to the physical page, so a bad pointer is an EFAULT, never a kernel
//! fault. A vfork child's memory is its lender's (`Owner::memory_now`).

use core::ops::Deref;
use core::sync::atomic::{AtomicU32, Ordering};

use super::vm::AddressSpace;
use crate::sync::SpinLock;
use hal::user_space::Fault;
use lwk_logic::errno::{Errno, EFAULT, EINVAL};
use lwk_logic::user_pages::{Translation, PAGE_SIZE};

/// A program's memory as user access needs it (`process::Process`).
pub trait Memory {
    /// Its address space.
    fn space(&self) -> &SpinLock<AddressSpace>;
    /// Its main stack got memory (`AddressSpace::still_to_grow` changed).
    fn stack_grew(&self, vm: &AddressSpace);
}

/// A program whose memory may be another's while it runs (a vfork child
/// uses its lender's).
pub trait Owner {
    type Now<'a>: Deref<Target: Memory>
    where
        Self: 'a;
    /// The memory the program uses now.
    fn memory_now(&self) -> Self::Now<'_>;
}

/// A shared program, as callers usually hold one.
impl<T: Owner> Owner for alloc::sync::Arc<T> {
    type Now<'a>
        = T::Now<'a>
    where
        T: 'a;

    fn memory_now(&self) -> T::Now<'_> {
        (**self).memory_now()
    }
}

/// Where `va` leads; the main stack's part without memory yet gets it
/// first (a system call may be the first to touch it). `p` owns `vm`
/// (`Owner::memory_now`).
pub fn page_of(
    p: &(impl Memory + ?Sized),
    vm: &mut AddressSpace,
    va: u64,
) -> Result<Translation, Errno> {
    if let Some(t) = vm.translate(va) {
        return Ok(t);
    }
    if vm.grow_to(va).unwrap_or(false) {
        p.stack_grew(vm);
    }
    vm.translate(va).ok_or(EFAULT)
}

/// `va` had no memory: the main stack's part without memory yet gets it
/// (as `page_of`), then `access` is tried again.
fn grow_then(
    p: &(impl Memory + ?Sized),
    vm: &mut AddressSpace,
    va: u64,
    access: impl FnOnce(&AddressSpace) -> Result<usize, Fault>,
) -> Result<usize, Errno> {
    page_of(p, vm, va)?;
    access(vm).map_err(|_| EFAULT)
}

/// Copies `buf.len()` bytes from the program's `va`.
pub fn read_bytes(p: &impl Owner, va: u64, buf: &mut [u8]) -> Result<(), Errno> {
    let m = p.memory_now();
    let p = &*m;
    let mut vm = p.space().lock();
    let mut done = 0;
    while done < buf.len() {
        let at = va.checked_add(done as u64).ok_or(EFAULT)?;
        done += match vm.user().read(at, &mut buf[done..]) {
            Ok(n) => n,
            Err(Fault::NotMapped) => {
                grow_then(p, &mut vm, at, |vm| vm.user().read(at, &mut buf[done..]))?
            }
            Err(_) => return Err(EFAULT),
        };
    }
    Ok(())
}

/// Copies `buf` to the program's `va`; the pages must be writable.
pub fn write_bytes(p: &impl Owner, va: u64, buf: &[u8]) -> Result<(), Errno> {
    let m = p.memory_now();
    let p = &*m;
    let mut vm = p.space().lock();
    let mut done = 0;
    while done < buf.len() {
        let at = va.checked_add(done as u64).ok_or(EFAULT)?;
        done += match vm.user().write(at, &buf[done..]) {
            Ok(n) => n,
            Err(Fault::NotMapped) => {
                grow_then(p, &mut vm, at, |vm| vm.user().write(at, &buf[done..]))?
            }
            Err(_) => return Err(EFAULT),
        };
    }
    // Written through the kernel's mapping: MADV_DONTNEED must zero it.
    vm.mark_written(va, va + buf.len() as u64);
    Ok(())
}

/// Writable program memory [va, va + len), at most a page long, held by
/// the address-space lock while a closure writes it: a signal frame goes
/// straight to the program's pages, without a staging copy.
pub struct UserSpan<'a> {
    vm: &'a AddressSpace,
    va: u64,
    end: u64,
}

impl UserSpan<'_> {
    /// Copies `data` to the program's `at`, which the span holds.
    pub fn write(&self, at: u64, data: &[u8]) {
        assert!(at >= self.va && at + data.len() as u64 <= self.end, "write outside a user span");
        let mut done = 0;
        while done < data.len() {
            // Mapped writable when the span was made, and held since.
            match self.vm.user().write(at + done as u64, &data[done..]) {
                Ok(n) => done += n,
                Err(e) => panic!("a user span lost its page: {e:?}"),
            }
        }
    }

    /// FXSAVE of the running thread's FPU state to `at` if [at, at + 512)
    /// lies in one page (and is aligned); false if not.
    pub fn save_fpu(&self, at: u64) -> bool {
        self.vm.user().save_fpu_at(at) == Ok(())
    }
}

/// Runs `write` on [va, va + len) (at most a page) once all of it is
/// mapped writable, under the address-space lock.
pub fn with_writable<R>(
    p: &impl Owner,
    va: u64,
    len: u64,
    write: impl FnOnce(&UserSpan) -> R,
) -> Result<R, Errno> {
    let end = va.checked_add(len).ok_or(EFAULT)?;
    if len > PAGE_SIZE {
        return Err(EFAULT);
    }
    let m = p.memory_now();
    let p = &*m;
    let mut vm = p.space().lock();
    let mut at = va;
    // A page or less spans at most two pages.
    while at < end {
        let t = page_of(p, &mut vm, at)?;
        if !t.writable {
            return Err(EFAULT);
        }
        at += t.rest_of_page.min(end - at);
    }
    vm.mark_written(va, end);
    Ok(write(&UserSpan { vm: &vm, va, end }))
}

pub fn read_u64(p: &impl Owner, va: u64) -> Result<u64, Errno> {
    let mut b = [0u8; 8];
    read_bytes(p, va, &mut b)?;
    Ok(u64::from_le_bytes(b))
}

pub fn write_u64(p: &impl Owner, va: u64, v: u64) -> Result<(), Errno> {
    write_bytes(p, va, &v.to_le_bytes())
}

pub fn write_u32(p: &impl Owner, va: u64, v: u32) -> Result<(), Errno> {
    write_bytes(p, va, &v.to_le_bytes())
}

/// Writes consecutive u64 words (a C struct of longs).
pub fn write_words(p: &impl Owner, va: u64, words: &[u64]) -> Result<(), Errno> {
    let mut b = alloc::vec::Vec::with_capacity(words.len() * 8);
    for w in words {
        b.extend_from_slice(&w.to_le_bytes());
    }
    write_bytes(p, va, &b)
}

/// Reads consecutive u64 words (a C struct of longs) in one copy.
pub fn read_words<const N: usize>(p: &impl Owner, va: u64) -> Result<[u64; N], Errno> {
    let mut b = [[0u8; 8]; N];
    read_bytes(p, va, b.as_flattened_mut())?;
    Ok(b.map(u64::from_le_bytes))
}

/// Runs `f` on the futex word at `va` (4-byte aligned, mapped) and its
/// page, under the address-space lock.
fn with_futex_word<R>(
    p: &impl Owner,
    va: u64,
    f: impl FnOnce(&mut AddressSpace, Translation) -> Result<R, Errno>,
) -> Result<R, Errno> {
    if !va.is_multiple_of(4) {
        return Err(EINVAL);
    }
    let m = p.memory_now();
    let p = &*m;
    let mut vm = p.space().lock();
    let t = page_of(p, &mut vm, va)?;
    f(&mut vm, t)
}

fn futex_fault(f: Fault) -> Errno {
    if f == Fault::Unaligned {
        EINVAL
    } else {
        EFAULT
    }
}

/// Runs `f` on the futex word at `va` (4-byte aligned, mapped) under the
/// address-space lock, so that the word stays the program's meanwhile. One
/// walk of the page tables unless the page has no memory yet.
pub fn with_futex<R>(
    p: &impl Owner,
    va: u64,
    f: impl FnOnce(&AtomicU32) -> Result<R, Errno>,
) -> Result<R, Errno> {
    let m = p.memory_now();
    let p = &*m;
    let mut vm = p.space().lock();
    match vm.user().atomic_u32(va) {
        Ok(word) => return f(word),
        Err(Fault::NotMapped) => {}
        Err(e) => return Err(futex_fault(e)),
    }
    page_of(p, &mut vm, va)?;
    f(vm.user().atomic_u32(va).map_err(futex_fault)?)
}

/// Changes the futex word at `va` to `change(old)` atomically (it must be
/// writable: a read-only page's frame may be another process's too);
/// returns the old value. Under the address-space lock, so that the page
/// cannot become read-only (and shared by a fork) meanwhile.
pub fn futex_update(p: &impl Owner, va: u64, change: impl Fn(u32) -> u32) -> Result<u32, Errno> {
    with_futex_word(p, va, |vm, t| {
        if !t.writable {
            return Err(EFAULT);
        }
        vm.mark_written(va, va + 4);
        let word = vm.user().atomic_u32(va).map_err(futex_fault)?;
        Ok(word
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |old| Some(change(old)))
            .unwrap_or(0))
    })
}
