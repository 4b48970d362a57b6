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

    /// `count` blocks of `SIZE` bytes one after another from `offset` (a
    /// message ring's slots; its header as one block), if they lie in the
    /// region, `count` is a power of two and `offset` is 8-aligned.
    pub fn slots<const SIZE: usize>(&self, offset: usize, count: u32) -> Option<SharedSlots<SIZE>> {
        let bytes = (count as usize).checked_mul(SIZE)?;
        let fits = offset.checked_add(bytes).is_some_and(|end| end <= self.len);
        let aligned = (self.virt + offset as u64).is_multiple_of(8);
        (count.is_power_of_two() && fits && aligned && SIZE.is_multiple_of(8))
            .then_some(SharedSlots { virt: self.virt + offset as u64, mask: count - 1 })
    }
}

/// Blocks of `SIZE` bytes in shared memory, a power of two of them, indexed
/// modulo their number: bounds and alignment were checked once, when they
/// were made (`SharedRegion::slots`), and a field's offset is checked when
/// the kernel is compiled, so an access costs no check (a message ring's
/// hot path reads and writes a dozen words a message).
#[derive(Clone, Copy, Debug)]
pub struct SharedSlots<const SIZE: usize> {
    virt: u64,
    mask: u32,
}

impl<const SIZE: usize> SharedSlots<SIZE> {
    /// Block `index` modulo their number.
    #[inline(always)]
    pub fn slot(&self, index: u32) -> SharedSlot<SIZE> {
        SharedSlot { virt: self.virt + u64::from(index & self.mask) * SIZE as u64 }
    }
}

/// One of `SharedSlots`' blocks.
#[derive(Clone, Copy, Debug)]
pub struct SharedSlot<const SIZE: usize> {
    virt: u64,
}

impl<const SIZE: usize> SharedSlot<SIZE> {
    /// The address of byte OFFSET, for an access of ALIGN-aligned LEN bytes there.
    #[inline(always)]
    fn at<const OFFSET: usize, const LEN: usize, const ALIGN: usize>(&self) -> u64 {
        const { assert!(OFFSET + LEN <= SIZE && OFFSET.is_multiple_of(ALIGN) && ALIGN <= 8) };
        self.virt + OFFSET as u64
    }

    /// The u32 at byte OFFSET.
    #[inline(always)]
    pub fn atomic_u32<const OFFSET: usize>(&self) -> &AtomicU32 {
        // SAFETY: inside the block (OFFSET is checked at compile time, the
        // block when its SharedSlots were made) and aligned (they start
        // 8-aligned and SIZE is a multiple of 8); the other kernel accesses
        // this word atomically too.
        unsafe { &*(self.at::<OFFSET, 4, 4>() as *const AtomicU32) }
    }

    /// The u64 at byte OFFSET.
    #[inline(always)]
    pub fn atomic_u64<const OFFSET: usize>(&self) -> &AtomicU64 {
        // SAFETY: as in atomic_u32.
        unsafe { &*(self.at::<OFFSET, 8, 8>() as *const AtomicU64) }
    }

    /// Copies `src` to byte OFFSET + `offset`: bytes the protocol gives the
    /// writer until it publishes them.
    #[inline(always)]
    pub fn copy_in<const OFFSET: usize>(&self, offset: usize, src: &[u8]) {
        let fits = offset.checked_add(src.len()).is_some_and(|end| end <= SIZE - OFFSET);
        assert!(fits, "shared access out of bounds");
        let dst = (self.at::<OFFSET, 0, 1>() + offset as u64) as *mut u8;
        // SAFETY: inside the block (checked above); bytes are plain data.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) }
    }

    /// Copies the bytes from OFFSET + `offset` into `dst`. The other kernel
    /// may be writing them (a broken or hostile peer): they are plain data,
    /// checked by the caller after the copy.
    #[inline(always)]
    pub fn copy_out<const OFFSET: usize>(&self, offset: usize, dst: &mut [u8]) {
        let fits = offset.checked_add(dst.len()).is_some_and(|end| end <= SIZE - OFFSET);
        assert!(fits, "shared access out of bounds");
        let src = (self.at::<OFFSET, 0, 1>() + offset as u64) as *const u8;
        // SAFETY: inside the block (checked above); any bytes are valid u8s.
        unsafe { core::ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), dst.len()) }
    }
}
