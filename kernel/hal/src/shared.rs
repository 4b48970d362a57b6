//! Memory shared with the host module (control channel, console ring,
//! program area): the LWK and Linux read and write it concurrently, so every
//! access is atomic or volatile, bounds are checked here once, and a region
//! can only be made inside the enclave's shared area.

use atoll_abi::{FileName, Header, Region, Slot};
use core::sync::atomic::{AtomicU32, AtomicU64};
use spin::Once;

use super::physmem::phys_to_virt;

/// Plain data: every bit pattern is a valid value, so it may be read from
/// memory that the host writes too.
///
/// # Safety
/// Only for integers and `repr(C)` structs and arrays made of them.
pub unsafe trait Plain: Copy {}

// SAFETY: integers: every bit pattern is valid.
unsafe impl Plain for u8 {}
// SAFETY: as for u8.
unsafe impl Plain for u32 {}
// SAFETY: as for u8.
unsafe impl Plain for u64 {}
// SAFETY: as for u8.
unsafe impl Plain for i64 {}
// SAFETY: repr(C) structs of integers (abi/src/lib.rs).
unsafe impl Plain for Header {}
// SAFETY: as for Header.
unsafe impl Plain for Region {}
// SAFETY: as for Header.
unsafe impl Plain for Slot {}
// SAFETY: as for Header.
unsafe impl Plain for FileName {}
// SAFETY: an array of plain data.
unsafe impl<T: Plain, const N: usize> Plain for [T; N] {}

/// The enclave's shared area, [start, end), as the host gave it at boot.
static AREA: Once<(u64, u64)> = Once::new();

/// Records the shared area (co-kernel boot, before anything maps a region).
pub(crate) fn set_area(start: u64, end: u64) {
    AREA.call_once(|| (start, end));
}

/// A region asked for outside the shared area (`area` is (0, 0) when the
/// LWK is not an enclave and has none).
#[derive(Clone, Copy, Debug)]
pub struct OutsideArea {
    pub phys: u64,
    pub len: usize,
    pub area: (u64, u64),
}

#[derive(Clone, Copy, Debug)]
pub struct SharedRegion {
    virt: u64,
    len: usize,
}

impl SharedRegion {
    /// `phys..phys+len`, if it lies in the enclave's shared area, which the
    /// boot parameters gave (the host hands it over for the LWK's lifetime
    /// and the direct map covers it).
    pub fn in_enclave_area(phys: u64, len: usize) -> Result<Self, OutsideArea> {
        let &(start, end) = AREA.get().ok_or(OutsideArea { phys, len, area: (0, 0) })?;
        let inside = phys.checked_sub(start).zip(end.checked_sub(start));
        let inside =
            inside.is_some_and(|(offset, size)| offset <= size && len as u64 <= size - offset);
        if !inside {
            return Err(OutsideArea { phys, len, area: (start, end) });
        }
        Ok(SharedRegion { virt: phys_to_virt(phys), len })
    }

    /// Memory the host lends (`lent::Lent::region`), mapped at `virt` for as
    /// long as the `Lent` is not unmapped.
    pub(crate) fn lent(virt: u64, len: usize) -> Self {
        SharedRegion { virt, len }
    }

    fn at(&self, offset: usize, size: usize, align: usize) -> u64 {
        assert!(
            offset + size <= self.len && offset.is_multiple_of(align),
            "shared access out of bounds"
        );
        self.virt + offset as u64
    }

    pub fn atomic_u32(&self, offset: usize) -> &AtomicU32 {
        // SAFETY: in bounds and aligned (checked); the host only ever accesses
        // this word atomically too.
        unsafe { &*(self.at(offset, 4, 4) as *const AtomicU32) }
    }

    pub fn atomic_u64(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: as in atomic_u32.
        unsafe { &*(self.at(offset, 8, 8) as *const AtomicU64) }
    }

    /// Reads a plain-data value (a message slot the protocol says is ours).
    pub fn read<T: Plain>(&self, offset: usize) -> T {
        // SAFETY: in bounds and aligned (checked); T is plain data, valid for any bytes.
        unsafe {
            core::ptr::read_volatile(self.at(
                offset,
                core::mem::size_of::<T>(),
                core::mem::align_of::<T>(),
            ) as *const T)
        }
    }

    /// Copies `src` to `offset` (message slots the protocol gives us).
    pub fn copy_in(&self, offset: usize, src: &[u8]) {
        let dst = self.at(offset, src.len(), 1) as *mut u8;
        // SAFETY: in bounds (checked); bytes are plain data; the message
        // protocol gives these bytes to the writer until it publishes them.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) }
    }

    /// Copies from `offset` into `dst`. The other kernel may be writing the
    /// same bytes (a broken or hostile peer): they are plain data, checked
    /// by the caller after the copy.
    pub fn copy_out(&self, offset: usize, dst: &mut [u8]) {
        let src = self.at(offset, dst.len(), 1) as *const u8;
        // SAFETY: in bounds (checked); any bytes are valid u8s.
        unsafe { core::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) }
    }

    pub fn write<T: Plain>(&self, offset: usize, value: T) {
        // SAFETY: in bounds and aligned (checked); the protocol gives this slot to us.
        unsafe {
            core::ptr::write_volatile(
                self.at(offset, core::mem::size_of::<T>(), core::mem::align_of::<T>()) as *mut T,
                value,
            )
        }
    }
}
