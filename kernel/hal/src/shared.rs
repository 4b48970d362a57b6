//! Memory shared with the host module (control channel, console ring): the
//! LWK and Linux read and write it concurrently, so every access is atomic or
//! volatile, and bounds are checked here once.

use core::sync::atomic::{AtomicU32, AtomicU64};

use super::physmem::phys_to_virt;

#[derive(Clone, Copy, Debug)]
pub struct SharedRegion {
    virt: u64,
    len: usize,
}

impl SharedRegion {
    /// `phys..phys+len` lies in the enclave's shared area, which the host
    /// hands over at boot for the LWK's lifetime and which the direct map covers.
    pub const fn new(phys: u64, len: usize) -> Self {
        SharedRegion { virt: phys_to_virt(phys), len }
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
    pub fn read<T: Copy>(&self, offset: usize) -> T {
        // SAFETY: in bounds and aligned (checked); T is plain data, valid for any bytes.
        unsafe {
            core::ptr::read_volatile(self.at(
                offset,
                core::mem::size_of::<T>(),
                core::mem::align_of::<T>(),
            ) as *const T)
        }
    }

    pub fn write<T: Copy>(&self, offset: usize, value: T) {
        // SAFETY: in bounds and aligned (checked); the protocol gives this slot to us.
        unsafe {
            core::ptr::write_volatile(
                self.at(offset, core::mem::size_of::<T>(), core::mem::align_of::<T>()) as *mut T,
                value,
            )
        }
    }
}
