//! A program's page tables and the memory they map. Only hal walks the
//! tables, and the kernel reads and writes a program's memory only through
//! a `UserSpace` it borrows: a frame is reached through the leaf that maps
//! it, and the borrow keeps that leaf (and so the frame) in place for as
//! long as the access lasts.
//!
//! Invariant: every leaf that is not lent holds one hold on its frames
//! (`Frames`, RAM in the direct map): `map` and `replace_frame` take one,
//! `unmap`, `replace_frame` and `destroy` hand it back (all through
//! `&mut self`), and `share_frame` and `share_range` give more. Lent leaves
//! (`map_lent`) map `HostPages`, which are never handed back, changed or
//! zeroed here.

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use lwk_logic::user_pages::{
    Access, MapError, TableMemory, Translation, Unlinked, UserPageTable, LARGE_PAGE_SIZE, PAGE_SIZE,
};

use crate::frames::{Frames, HostPages};
use crate::physmem::phys_to_virt;

/// Why an access to user memory failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Nothing accessible is mapped there.
    NotMapped,
    /// The page may not be written.
    ReadOnly,
    /// A word or area is not aligned as it must be.
    Unaligned,
}

pub struct UserSpace {
    pages: UserPageTable,
}

/// A `UserSpace`'s tables as a CPU loads them. Only a `UserSpace` names
/// one (`tables`), so CR3 only ever gets the kernel's root or a user root
/// whose upper half repeats the kernel's; `destroy` stops the system
/// rather than free tables a CPU still has loaded. The program layer drops
/// its copies with the space (it loads a space only while it holds it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Root(u64);

impl Root {
    /// The root table's physical address, for the host's mirror.
    pub fn phys(self) -> u64 {
        self.0
    }

    /// Loads these tables on this CPU, unless they are loaded already.
    pub fn load(self) {
        crate::paging::switch_root(self.0)
    }
}

/// A `Root` other CPUs read (a process's, which exec and vfork change).
pub struct RootCell(AtomicU64);

impl RootCell {
    pub fn new(root: Root) -> Self {
        RootCell(AtomicU64::new(root.0))
    }

    pub fn get(&self) -> Root {
        Root(self.0.load(Ordering::Acquire))
    }

    pub fn set(&self, root: Root) {
        self.0.store(root.0, Ordering::Release)
    }
}

/// Table frames from the frame allocator, reached through the direct map.
struct Tables;

impl TableMemory for Tables {
    fn read(&self, table: u64, index: usize) -> u64 {
        // SAFETY: `table` is a table frame of a UserSpace (the walk reaches
        // only those), 8-byte aligned words in the direct map.
        unsafe { core::ptr::read_volatile(word(table, index)) }
    }
    fn write(&mut self, table: u64, index: usize, value: u64) {
        // SAFETY: as in `read`.
        unsafe { core::ptr::write_volatile(word(table, index), value) }
    }
    fn compare_exchange(
        &mut self,
        table: u64,
        index: usize,
        current: u64,
        new: u64,
    ) -> Result<(), u64> {
        use core::sync::atomic::{AtomicU64, Ordering};
        // SAFETY: as in `read`; other CPUs and the host's mirror access
        // these words only atomically.
        let w = unsafe { AtomicU64::from_ptr(word(table, index)) };
        w.compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire).map(|_| ())
    }
    fn new_table(&mut self) -> Option<u64> {
        crate::mem::alloc_zeroed_frames(1, 1)
    }
    fn free_table(&mut self, table: u64) {
        crate::mem::free_frames(table, 1)
    }
}

/// The hold of a leaf the tables just took out (`unmap`, `destroy`): `bytes`
/// of frames at `phys`.
fn leaf_hold(phys: u64, bytes: u64) -> Frames {
    // SAFETY: only the tables' walks call this, with what a leaf that is not
    // lent mapped; each held one hold on its frames (the invariant), which
    // the leaf, gone now, no longer keeps.
    unsafe { Frames::from_hold(phys, bytes / PAGE_SIZE) }
}

fn word(table: u64, index: usize) -> *mut u64 {
    phys_to_virt(table + 8 * index as u64) as *mut u64
}

impl UserSpace {
    /// An empty lower half; the upper half is the kernel's.
    pub fn new() -> Option<Self> {
        let pages = UserPageTable::new(&mut Tables, crate::paging::kernel_root())?;
        Some(UserSpace { pages })
    }

    /// The tables, to load on a CPU or to give the host (`Root::phys`).
    pub fn tables(&self) -> Root {
        Root(self.pages.root())
    }

    pub fn translate(&self, va: u64) -> Option<Translation> {
        self.pages.translate(&Tables, va)
    }

    pub fn next_mapped(&self, va: u64, end: u64) -> Option<u64> {
        self.pages.next_mapped(&Tables, va, end)
    }

    pub fn has_frame(&self, va: u64) -> bool {
        self.pages.has_frame(&Tables, va)
    }

    pub fn is_empty(&self, start: u64, end: u64) -> bool {
        self.pages.is_empty(&Tables, start, end)
    }

    /// Maps `frames` at `va`: one 4 KiB page, or a 2 MiB page for 512
    /// aligned frames. On success, a page table this took out of the tree
    /// (to drop once no CPU and no walk of the host's can be in it); on an
    /// error the frames are dropped.
    pub fn map(
        &mut self,
        va: u64,
        frames: Frames,
        access: Access,
    ) -> Result<Option<Frames>, MapError> {
        let large =
            frames.bytes() == LARGE_PAGE_SIZE && frames.phys().is_multiple_of(LARGE_PAGE_SIZE);
        assert!(large || frames.count() == 1, "a page is 4 KiB or 2 MiB: {frames:?}");
        let Unlinked(table) = self.pages.map(&mut Tables, va, frames.phys(), large, access)?;
        frames.into_hold();
        // SAFETY: the table's frame came from `Tables::new_table`, one
        // hold, and no entry points at it any more.
        Ok(table.map(|t| unsafe { Frames::from_hold(t, 1) }))
    }

    /// Maps `len` bytes of `pages` from `offset` at `va` (2 MiB pages
    /// where `large`), as lent leaves; as `map` otherwise.
    pub fn map_lent(
        &mut self,
        va: u64,
        pages: &HostPages,
        offset: u64,
        large: bool,
        access: Access,
    ) -> Result<Option<Frames>, MapError> {
        let size = if large { LARGE_PAGE_SIZE } else { PAGE_SIZE };
        assert!(
            offset.is_multiple_of(PAGE_SIZE) && offset + size <= pages.len(),
            "outside the grant"
        );
        let Unlinked(table) =
            self.pages.map_lent(&mut Tables, va, pages.phys() + offset, large, access)?;
        // SAFETY: as in `map`.
        Ok(table.map(|t| unsafe { Frames::from_hold(t, 1) }))
    }

    /// Unmaps [start, end); `free` gets each frame's hold back (lent
    /// leaves give none).
    pub fn unmap(
        &mut self,
        start: u64,
        end: u64,
        mut free: impl FnMut(Frames),
    ) -> Result<(), MapError> {
        self.pages.unmap(&mut Tables, start, end, |p, s| free(leaf_hold(p, s)))
    }

    pub fn protect(&mut self, start: u64, end: u64, access: Access) -> Result<(), MapError> {
        self.pages.protect(&mut Tables, start, end, access)
    }

    /// The (address, frame address) of each read-only 4 KiB page of
    /// [start, end) that the space owns and shares with another holder.
    pub fn shared_pages(&mut self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut pages = Vec::new();
        if !crate::mem::any_shared() {
            return pages;
        }
        self.pages.for_each_frame(&mut Tables, start, end, |va, frame, size, writable| {
            if size == PAGE_SIZE && !writable && crate::mem::is_shared(frame) {
                pages.push((va, frame));
            }
        });
        pages
    }

    /// Another hold on the frame of the 4 KiB page at `va`, if the space
    /// owns one there (not lent, not part of a 2 MiB page).
    pub fn share_frame(&self, va: u64) -> Option<Frames> {
        let frame = self.pages.small_frame(&Tables, va)?;
        // SAFETY: only to share it: the leaf keeps its own hold.
        let held = core::mem::ManuallyDrop::new(unsafe { Frames::from_hold(frame, 1) });
        held.share()
    }

    /// Another hold on every frame of [start, start + len) (page aligned),
    /// as runs of contiguous frames; NotMapped if a page has none the
    /// space owns there, or a frame has as many holders as it can count.
    pub fn share_range(&self, start: u64, len: u64) -> Result<Vec<Frames>, Fault> {
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for va in (start..start + len).step_by(PAGE_SIZE as usize) {
            let t = self.translate(va).filter(|t| !t.lent).ok_or(Fault::NotMapped)?;
            match runs.last_mut() {
                Some((p, n)) if *p + *n * PAGE_SIZE == t.phys => *n += 1,
                _ => runs.push((t.phys, 1)),
            }
        }
        let mut held = Vec::with_capacity(runs.len());
        for (phys, count) in runs {
            // SAFETY: as in `share_frame`; the leaves keep their holds.
            let leaves = core::mem::ManuallyDrop::new(unsafe { Frames::from_hold(phys, count) });
            held.push(leaves.share().ok_or(Fault::NotMapped)?);
        }
        Ok(held)
    }

    pub fn mark_dirty(&mut self, start: u64, end: u64) {
        self.pages.mark_dirty(&mut Tables, start, end)
    }

    /// Hands every frame's hold to `free` and frees every table; no CPU
    /// may have them loaded (every thread left them first).
    pub fn destroy(&mut self, mut free: impl FnMut(Frames)) {
        assert!(!self.loaded_anywhere(), "page tables freed while a CPU has them loaded");
        self.pages.destroy(&mut Tables, |p, s| free(leaf_hold(p, s)))
    }

    /// Whether some CPU has these tables loaded.
    pub fn loaded_anywhere(&self) -> bool {
        let root = self.pages.root();
        root != 0 && crate::paging::loaded_anywhere(root)
    }

    /// MADV_DONTNEED's zeroing: every written page of [start, end) is
    /// zeroed there (see `UserPageTable::clean`).
    pub fn zero_written(&mut self, start: u64, end: u64) {
        self.pages.clean(&mut Tables, start, end, |phys, n| {
            // SAFETY: a frame these tables map (the invariant), zeroed
            // through `&mut self`, so no other kernel access is under way.
            unsafe { core::ptr::write_bytes(phys_to_virt(phys) as *mut u8, 0, n as usize) }
        })
    }

    /// Points the 4 KiB page at `va` to `frame` (one frame), keeping its
    /// access and marks; the hold it had. Err gives `frame` back if no
    /// 4 KiB page the space owns is there. The caller flushes TLBs.
    pub fn replace_frame(&mut self, va: u64, frame: Frames) -> Result<Frames, Frames> {
        assert_eq!(frame.count(), 1, "one 4 KiB frame");
        let Some(old) = self.pages.replace_frame(&mut Tables, va, frame.phys()) else {
            return Err(frame);
        };
        frame.into_hold();
        // SAFETY: the leaf held one hold on `old` (the invariant).
        Ok(unsafe { Frames::from_hold(old, 1) })
    }

    /// As `replace_frame`, with the old frame's bytes copied to `frame`
    /// first (so that no CPU sees the new frame before it holds them).
    pub fn replace_frame_copying(&mut self, va: u64, frame: Frames) -> Result<Frames, Frames> {
        assert_eq!(frame.count(), 1, "one 4 KiB frame");
        let Some(old) = self.pages.small_frame(&Tables, va) else { return Err(frame) };
        // SAFETY: `old` is a frame these tables map (the invariant),
        // `frame` one the caller holds; distinct frames.
        unsafe { copy(old, frame.phys(), PAGE_SIZE as usize) };
        self.replace_frame(va, frame)
    }

    /// Copies from `va` into `buf`, up to the end of `va`'s page; the bytes
    /// copied.
    pub fn read(&self, va: u64, buf: &mut [u8]) -> Result<usize, Fault> {
        let t = self.translate(va).ok_or(Fault::NotMapped)?;
        let n = (t.rest_of_page as usize).min(buf.len());
        // SAFETY: `t.phys` is in a frame these tables map (the invariant),
        // with `rest_of_page` bytes to its end; `&self` keeps it mapped.
        unsafe { core::ptr::copy(phys_to_virt(t.phys) as *const u8, buf.as_mut_ptr(), n) };
        Ok(n)
    }

    /// Copies `buf` to `va`, a writable page, up to the end of the page;
    /// the bytes copied. The caller marks them written.
    pub fn write(&self, va: u64, buf: &[u8]) -> Result<usize, Fault> {
        let t = self.translate(va).ok_or(Fault::NotMapped)?;
        if !t.writable {
            return Err(Fault::ReadOnly);
        }
        self.put(t, buf)
    }

    /// As `write`, whatever the page's protection (its owner filling a
    /// page the program may not write, as the vDSO's).
    pub fn fill(&mut self, va: u64, buf: &[u8]) -> Result<usize, Fault> {
        let t = self.translate(va).ok_or(Fault::NotMapped)?;
        self.put(t, buf)
    }

    fn put(&self, t: Translation, buf: &[u8]) -> Result<usize, Fault> {
        let n = (t.rest_of_page as usize).min(buf.len());
        // SAFETY: as in `read`.
        unsafe { core::ptr::copy(buf.as_ptr(), phys_to_virt(t.phys) as *mut u8, n) };
        Ok(n)
    }

    /// Copies from `from` in `src` to `to` in `dst` (writable), up to the
    /// end of either page; the bytes copied. `src` and `dst` may be one.
    pub fn copy(
        src: &UserSpace,
        from: u64,
        dst: &UserSpace,
        to: u64,
        len: u64,
    ) -> Result<u64, Fault> {
        let a = src.translate(from).ok_or(Fault::NotMapped)?;
        let b = dst.translate(to).ok_or(Fault::NotMapped)?;
        if !b.writable {
            return Err(Fault::ReadOnly);
        }
        let n = a.rest_of_page.min(b.rest_of_page).min(len);
        // SAFETY: both in frames their tables map (the invariant), each
        // with `rest_of_page` bytes to its end, kept mapped by the borrows.
        unsafe { copy(a.phys, b.phys, n as usize) };
        Ok(n)
    }

    /// A fork's copy of the page at `va` (of `size` bytes, from its start)
    /// into the same page of `child`, whatever its protection.
    pub fn copy_page_to(&self, va: u64, child: &mut UserSpace, size: u64) -> Result<(), Fault> {
        let a = self.translate(va).ok_or(Fault::NotMapped)?;
        let b = child.translate(va).ok_or(Fault::NotMapped)?;
        if a.rest_of_page < size || b.rest_of_page < size {
            return Err(Fault::Unaligned);
        }
        // SAFETY: as in `copy`; the child's page is its own frame.
        unsafe { copy(a.phys, b.phys, size as usize) };
        Ok(())
    }

    /// The 4-byte aligned word at `va` (a futex), shared with the
    /// program's threads: atomic access only, for as long as the borrow.
    pub fn atomic_u32(&self, va: u64) -> Result<&AtomicU32, Fault> {
        if !va.is_multiple_of(4) {
            return Err(Fault::Unaligned);
        }
        let t = self.translate(va).ok_or(Fault::NotMapped)?;
        // SAFETY: an aligned word in a frame these tables map (the
        // invariant), which stays mapped while `self` is borrowed; user
        // code accesses it concurrently, so only atomic access is offered.
        Ok(unsafe { AtomicU32::from_ptr(phys_to_virt(t.phys) as *mut u32) })
    }

    /// FXSAVE of the running thread's x87/SSE registers straight to `va`
    /// (16-byte aligned, 512 bytes in one writable page): a signal frame's
    /// FPU state without a staging copy.
    pub fn save_fpu_at(&self, va: u64) -> Result<(), Fault> {
        let t = self.translate(va).ok_or(Fault::NotMapped)?;
        if !t.writable {
            return Err(Fault::ReadOnly);
        }
        if !va.is_multiple_of(16) || t.rest_of_page < crate::user::FPU_STATE_SIZE as u64 {
            return Err(Fault::Unaligned);
        }
        // SAFETY: 512 bytes in one frame these tables map (checked above,
        // and the invariant), 16-byte aligned; FXSAVE stores plain bytes.
        unsafe { crate::user::fxsave_at(phys_to_virt(t.phys)) };
        Ok(())
    }
}

/// Copies `n` bytes between physical addresses in the direct map.
///
/// # Safety
/// Both ranges are direct-mapped RAM that nothing else owns as Rust
/// objects; they may overlap.
unsafe fn copy(from: u64, to: u64, n: usize) {
    // SAFETY: as the caller promises.
    unsafe { core::ptr::copy(phys_to_virt(from) as *const u8, phys_to_virt(to) as *mut u8, n) }
}
