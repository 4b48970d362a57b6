//! Memory blocks the host adds while the kernel runs (`atoll add --mem`)
//! and takes back: mapped into the direct map for good and given to the
//! frame allocator, or taken out of both.

use lwk_logic::frames::{FrameError, RemoveError};

use crate::lent::{self, LendError};
use crate::{mem, physmem};

/// Why a block the host adds was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddBlockError {
    Map(LendError),
    Region(FrameError),
}

/// Maps the block and gives it to the frame allocator.
pub fn add_block(phys: u64, len: u64) -> Result<(), AddBlockError> {
    lent::map_block(phys, len, permanent_table).map_err(AddBlockError::Map)?;
    mem::add_region(phys, len).map_err(|e| {
        lent::unmap_block(phys, len);
        AddBlockError::Region(e)
    })
}

/// Takes a block `add_block` added out of the allocator if none of its
/// frames is in use, and out of the direct map; the caller flushes every
/// CPU's TLB before the host takes it back.
pub fn remove_block(phys: u64, len: u64) -> Result<(), RemoveError> {
    mem::remove_region(phys, len)?;
    lent::unmap_block(phys, len);
    Ok(())
}

/// A page directory for a block's direct map, from the kernel heap (boot
/// memory, never given back), so that no block is held by another's table.
fn permanent_table() -> Option<u64> {
    #[repr(C, align(4096))]
    struct Table([u64; 512]);
    let t: &'static mut Table = alloc::boxed::Box::leak(alloc::boxed::Box::new(Table([0; 512])));
    Some(physmem::virt_to_phys(t as *mut Table as u64))
}
