//! Frames the LWK owns, as values. A `Frames` is one hold on each frame of
//! a run; dropping it lets go of the hold, and a frame goes back to the
//! allocator when its last holder lets go. What holds a frame: the
//! page-table leaf that maps it (`UserSpace`), a second address space a
//! fork shares a read-only page with, a shared file's copy of a page, an
//! XEMEM pin, and memory waiting for a TLB shootdown before it is reused.
//! Only hal turns an address into a `Frames`: from the allocator, or from
//! a leaf that held one.
//!
//! Memory the LWK does not own but maps into a program (an XEMEM
//! attachment the host grants) is a `HostPages` instead: mapped as a lent
//! leaf, which is never handed back, changed or zeroed.

use core::fmt;
use lwk_logic::frames::FRAME_SIZE;

use crate::mem;

/// One hold on each of `count` frames from `phys`.
pub struct Frames {
    phys: u64,
    count: u64,
}

impl Frames {
    /// `count` frames whose address is a multiple of `align` frames, their
    /// bytes as they were.
    pub fn alloc(count: u64, align: u64) -> Option<Frames> {
        let phys = mem::alloc_frames(count, align)?;
        Some(Frames { phys, count })
    }

    /// As `alloc`, zeroed.
    pub fn alloc_zeroed(count: u64, align: u64) -> Option<Frames> {
        let phys = mem::alloc_zeroed_frames(count, align)?;
        Some(Frames { phys, count })
    }

    /// The frames of a hold hal kept as an address (a page-table leaf, a
    /// table taken out of the tree).
    ///
    /// # Safety
    /// The caller gives up one hold on each of the frames: nothing else
    /// will let go of it.
    pub(crate) unsafe fn from_hold(phys: u64, count: u64) -> Frames {
        Frames { phys, count }
    }

    /// The hold as an address, kept by hal from now on (a leaf).
    pub(crate) fn into_hold(self) -> (u64, u64) {
        let hold = (self.phys, self.count);
        core::mem::forget(self);
        hold
    }

    /// Physical address of the first frame (for the host, and comparisons).
    pub fn phys(&self) -> u64 {
        self.phys
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn bytes(&self) -> u64 {
        self.count * FRAME_SIZE
    }

    /// Another hold on the same frames; None if one of them has as many
    /// holders as it can count.
    pub fn share(&self) -> Option<Frames> {
        mem::share_frames(self.phys, self.count).ok()?;
        Some(Frames { phys: self.phys, count: self.count })
    }

    /// True if another holder holds one of these frames too.
    pub fn is_shared(&self) -> bool {
        mem::any_shared() && (0..self.count).any(|i| mem::is_shared(self.phys + i * FRAME_SIZE))
    }
}

impl Drop for Frames {
    fn drop(&mut self) {
        mem::release_frames(self.phys, self.count)
    }
}

impl fmt::Debug for Frames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Frames({:#x}, {})", self.phys, self.count)
    }
}

/// Pages the host grants a program (an XEMEM attachment): page aligned,
/// outside the kernel image and not free frames of this LWK (its own
/// frames only while a pin holds them). The host keeps them until this
/// kernel has answered its revocation, which unmaps every lent leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostPages {
    phys: u64,
    len: u64,
}

/// Why pages the host named were refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GrantError {
    /// Empty, not page aligned, or wrapping around.
    Misaligned,
    /// Part of the kernel image, or frames this LWK has free.
    NotGrantable,
}

impl HostPages {
    /// Checks a run the host granted.
    pub fn granted(phys: u64, len: u64) -> Result<HostPages, GrantError> {
        let aligned = len > 0 && phys.is_multiple_of(FRAME_SIZE) && len.is_multiple_of(FRAME_SIZE);
        let end = phys.checked_add(len).filter(|_| aligned).ok_or(GrantError::Misaligned)?;
        let (image_start, image_end) = crate::physmem::image_range();
        if (phys < image_end && image_start < end) || mem::any_free(phys, len / FRAME_SIZE) {
            return Err(GrantError::NotGrantable);
        }
        Ok(HostPages { phys, len })
    }

    pub fn phys(&self) -> u64 {
        self.phys
    }

    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
