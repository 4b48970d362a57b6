//! A program's page tables and the memory they map. Only hal walks the
//! tables, and the kernel reads and writes a program's memory only through
//! a `UserSpace` it borrows: a frame is reached through the leaf that maps
//! it, and the borrow keeps that leaf (and so the frame) in place for as
//! long as the access lasts.
//!
//! Invariant: every frame a `UserSpace`'s leaves map is RAM in the direct
//! map, held by the tables until `unmap`, `replace_frame` or `destroy`
//! hands it back (which take `&mut self`). Frames are still passed in as
//! addresses (`map`, `replace_frame`): until they are typed, those two
//! trust the mm layer to give frames it owns.

use core::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use lwk_logic::user_pages::{
    Access, MapError, TableMemory, Translation, Unlinked, UserPageTable, PAGE_SIZE,
};

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

    /// Maps `frame` at `va` (see the invariant above).
    pub fn map(
        &mut self,
        va: u64,
        frame: u64,
        large: bool,
        access: Access,
    ) -> Result<Unlinked, MapError> {
        self.pages.map(&mut Tables, va, frame, large, access)
    }

    pub fn unmap(
        &mut self,
        start: u64,
        end: u64,
        free: impl FnMut(u64, u64),
    ) -> Result<(), MapError> {
        self.pages.unmap(&mut Tables, start, end, free)
    }

    pub fn protect(&mut self, start: u64, end: u64, access: Access) -> Result<(), MapError> {
        self.pages.protect(&mut Tables, start, end, access)
    }

    pub fn for_each_frame(&mut self, start: u64, end: u64, visit: impl FnMut(u64, u64, u64, bool)) {
        self.pages.for_each_frame(&mut Tables, start, end, visit)
    }

    pub fn mark_dirty(&mut self, start: u64, end: u64) {
        self.pages.mark_dirty(&mut Tables, start, end)
    }

    /// Frees every frame (through `free`) and every table; no CPU may have
    /// them loaded (every thread left them first).
    pub fn destroy(&mut self, free: impl FnMut(u64, u64)) {
        assert!(!self.loaded_anywhere(), "page tables freed while a CPU has them loaded");
        self.pages.destroy(&mut Tables, free)
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

    /// Points the 4 KiB page at `va` to `frame` (see `map`); returns the
    /// frame it held, which the caller now owns.
    pub fn replace_frame(&mut self, va: u64, frame: u64) -> Option<u64> {
        self.pages.replace_frame(&mut Tables, va, frame)
    }

    /// As `replace_frame`, with the old frame's bytes copied to `frame`
    /// first (so that no CPU sees the new frame before it holds them).
    pub fn replace_frame_copying(&mut self, va: u64, frame: u64) -> Option<u64> {
        let old = self.pages.small_frame(&Tables, va)?;
        // SAFETY: `old` is a frame these tables map (the invariant), and
        // `frame` one `map` could be given (its contract); distinct frames.
        unsafe { copy(old, frame, PAGE_SIZE as usize) };
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
