//! Memory outside the enclave that the host lends it for a while (message
//! rings to other enclaves; shared segments later): mapped write-back at
//! its direct-map address in 4 KiB pages while lent, and unmapped when the
//! host takes it back. The kernel's page tables are shared by every address
//! space (user tables repeat their upper half), so a mapping made here is
//! seen everywhere; after [`Lent::unmap`] the caller flushes every CPU's TLB.

use super::paging::{self, PteError};
use super::physmem::phys_to_virt;
use super::shared::SharedRegion;
use crate::lock::SpinLock;

const PAGE: u64 = 4096;

/// One lent range, mapped. Not `Clone`: only its owner unmaps it.
#[derive(Debug)]
pub struct Lent {
    phys: u64,
    len: u64,
}

/// Why a range was not mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LendError {
    /// Empty, not page aligned, or wrapping around.
    Misaligned,
    /// Part of it is mapped already: the LWK's own memory, or lent before.
    Overlaps,
    /// No memory for page tables.
    NoMemory,
    /// Beyond the physical addresses the kernel's address space reaches.
    OutOfReach,
}

/// Serializes changes to the kernel's page tables after boot.
static KERNEL_TABLES: SpinLock<()> = SpinLock::new(());

/// Maps `[phys, phys + len)`, which the host lends: memory the LWK does not own.
pub fn map(phys: u64, len: u64) -> Result<Lent, LendError> {
    map_range(phys, len)?;
    Ok(Lent { phys, len })
}

/// Maps `[phys, phys + len)` write-back at its direct-map address in 4 KiB
/// pages (lent memory, or a memory block the host adds for good).
fn map_range(phys: u64, len: u64) -> Result<(), LendError> {
    let aligned = len > 0 && phys.is_multiple_of(PAGE) && len.is_multiple_of(PAGE);
    if !aligned || phys.checked_add(len).is_none() {
        return Err(LendError::Misaligned);
    }
    let _guard = KERNEL_TABLES.lock();
    let pages = (0..len / PAGE).map(|i| phys + i * PAGE);
    if pages.clone().any(|p| paging::translate(phys_to_virt(p)).is_some()) {
        return Err(LendError::Overlaps);
    }
    for (done, p) in pages.enumerate() {
        let new_table = || crate::mem::alloc_zeroed_frames(1, 1);
        if let Err(e) = paging::map_kernel_page(phys_to_virt(p), p, new_table) {
            // Nothing half-mapped stays behind.
            (0..done as u64).for_each(|i| paging::unmap_kernel_page(phys_to_virt(phys + i * PAGE)));
            return Err(match e {
                PteError::NoMemory => LendError::NoMemory,
                PteError::Huge => LendError::Overlaps,
                PteError::OutOfReach => LendError::OutOfReach,
            });
        }
    }
    Ok(())
}

/// Maps a memory block the host adds for good at its direct-map address,
/// in 2 MiB pages (it is 2 MiB aligned), so it needs no page tables of its
/// own; a missing page directory comes from `new_table`.
pub(crate) fn map_block(
    phys: u64,
    len: u64,
    mut new_table: impl FnMut() -> Option<u64>,
) -> Result<(), LendError> {
    const LARGE: u64 = 2 << 20;
    if len == 0
        || !phys.is_multiple_of(LARGE)
        || !len.is_multiple_of(LARGE)
        || phys.checked_add(len).is_none()
    {
        return Err(LendError::Misaligned);
    }
    let _guard = KERNEL_TABLES.lock();
    let pages = (0..len / LARGE).map(|i| phys + i * LARGE);
    for (done, p) in pages.enumerate() {
        if let Err(e) = paging::map_kernel_large_page(phys_to_virt(p), p, &mut new_table) {
            (0..done as u64)
                .for_each(|i| paging::unmap_kernel_large_page(phys_to_virt(phys + i * LARGE)));
            return Err(match e {
                PteError::NoMemory => LendError::NoMemory,
                PteError::Huge => LendError::Overlaps,
                PteError::OutOfReach => LendError::OutOfReach,
            });
        }
    }
    Ok(())
}

/// Unmaps what `map_block` mapped, from this CPU's view; the caller
/// flushes the other CPUs before the memory is used elsewhere.
pub(crate) fn unmap_block(phys: u64, len: u64) {
    let _guard = KERNEL_TABLES.lock();
    for i in 0..len / (2 << 20) {
        paging::unmap_kernel_large_page(phys_to_virt(phys + i * (2 << 20)));
    }
}

/// Unmaps what `map_range` mapped, from this CPU's view; the caller
/// flushes the other CPUs before the memory is used elsewhere.
fn unmap_range(phys: u64, len: u64) {
    let _guard = KERNEL_TABLES.lock();
    for i in 0..len / PAGE {
        paging::unmap_kernel_page(phys_to_virt(phys + i * PAGE));
    }
}

impl Lent {
    pub fn phys(&self) -> u64 {
        self.phys
    }

    /// `len` bytes from `offset`, for atomic and volatile access.
    pub fn region(&self, offset: u64, len: usize) -> SharedRegion {
        assert!(offset + len as u64 <= self.len, "outside the lent range");
        SharedRegion::lent(phys_to_virt(self.phys + offset), len)
    }

    /// Unmaps the range from this CPU's view. Before the host may reuse the
    /// memory, every other CPU must drop its cached translations too.
    pub fn unmap(self) {
        unmap_range(self.phys, self.len);
    }
}
