//! Memory outside the enclave that the host lends it for a while (message
//! rings to other enclaves; shared segments later): mapped write-back at
//! its direct-map address in 4 KiB pages while lent, and unmapped when the
//! host takes it back. The kernel's page tables are shared by every address
//! space (user tables repeat their upper half), so a mapping made here is
//! seen everywhere; after [`Lent::unmap`] the caller flushes every CPU's TLB.

use super::paging::{self, PteError};
use super::physmem::phys_to_virt;
use super::shared::SharedRegion;
use super::SpinLock;

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
        if let Err(e) = paging::map_kernel_page(phys_to_virt(p), p) {
            // Nothing half-mapped stays behind.
            (0..done as u64).for_each(|i| paging::unmap_kernel_page(phys_to_virt(phys + i * PAGE)));
            return Err(match e {
                PteError::NoMemory => LendError::NoMemory,
                PteError::Huge => LendError::Overlaps,
                PteError::OutOfReach => LendError::OutOfReach,
            });
        }
    }
    Ok(Lent { phys, len })
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
        let _guard = KERNEL_TABLES.lock();
        for i in 0..self.len / PAGE {
            paging::unmap_kernel_page(phys_to_virt(self.phys + i * PAGE));
        }
    }
}
