//! Page tables of a user address space (x86-64, four levels), over table
//! memory the caller provides. User memory is mapped with 2 MiB pages where a
//! whole aligned 2 MiB is one mapping, 4 KiB pages elsewhere; a 2 MiB page
//! that an unmap or protection change cuts into is split into 4 KiB pages
//! first. The page tables own the user frames: unmapping hands each frame
//! back through a callback.
//!
//! The host's mirror walks these tables while they change, and sets DIRTY
//! in a leaf it maps writable (compare-and-swap against what it read). So
//! a leaf that holds a frame is changed here by compare-and-swap too, never
//! by a read and a plain write that could lose that mark; and a table taken
//! out of the tree is handed to the caller (`Unlinked`) to free only when
//! no walk can still be in it.

/// Size of a small page.
pub const PAGE_SIZE: u64 = 4096;
/// Size of a large page.
pub const LARGE_PAGE_SIZE: u64 = 2 << 20;
/// Entries per table.
const ENTRIES: usize = 512;

/// Entry is present.
pub const PRESENT: u64 = 1 << 0;
/// Writes allowed.
pub const WRITABLE: u64 = 1 << 1;
/// Ring 3 may access.
pub const USER: u64 = 1 << 2;
/// A 2 MiB leaf in a page directory.
pub const HUGE: u64 = 1 << 7;
/// Written to since mapped or last cleaned: set by the CPU, and by the
/// host's mirror when it maps a page writable; kept by protect.
pub const DIRTY: u64 = 1 << 6;
/// Software bit: a not-present leaf (PROT_NONE) that still owns its frame.
pub const KEEP: u64 = 1 << 9;
/// Software bit: a leaf mapping memory the address space does not own
/// (`map_lent`): unmapping hands nothing back, and nothing here changes
/// or zeroes its frame.
pub const LENT: u64 = 1 << 10;
/// Instruction fetches fault.
pub const NO_EXECUTE: u64 = 1 << 63;
const ADDR_MASK: u64 = 0x000f_ffff_ffff_f000;
const TABLE_FLAGS: u64 = PRESENT | WRITABLE | USER;
/// Entries of the lower half of the PML4 (user space).
const USER_PML4_ENTRIES: usize = 256;

/// Where page tables live: 4 KiB frames addressed by physical address.
pub trait TableMemory {
    /// Reads entry `index` of the table at `table`.
    fn read(&self, table: u64, index: usize) -> u64;
    /// Writes entry `index` of the table at `table`.
    fn write(&mut self, table: u64, index: usize, value: u64);
    /// Writes `new` to entry `index` if it still holds `current`; else
    /// returns what it holds.
    fn compare_exchange(
        &mut self,
        table: u64,
        index: usize,
        current: u64,
        new: u64,
    ) -> Result<(), u64>;
    /// A zeroed frame for a new table, or None when memory is out.
    fn new_table(&mut self) -> Option<u64>;
    /// Gives back a table frame no entry points at any more.
    fn free_table(&mut self, table: u64);
}

/// Access a mapping allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// Any access at all (false: PROT_NONE).
    pub read: bool,
    /// Writes.
    pub write: bool,
    /// Instruction fetches.
    pub exec: bool,
}

impl Access {
    /// No access (PROT_NONE).
    pub const NONE: Access = Access { read: false, write: false, exec: false };

    /// Leaf-entry flags for this access.
    pub fn leaf_flags(self) -> u64 {
        if !(self.read || self.write || self.exec) {
            return KEEP;
        }
        PRESENT
            | USER
            | if self.write { WRITABLE } else { 0 }
            | if self.exec { 0 } else { NO_EXECUTE }
    }
}

/// Why a mapping failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapError {
    /// No frame for a page table.
    NoMemory,
    /// Something is mapped there already.
    Occupied,
}

/// A translated user address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Translation {
    /// Physical address of the byte.
    pub phys: u64,
    /// Writes allowed.
    pub writable: bool,
    /// Instruction fetches allowed.
    pub executable: bool,
    /// Bytes from `phys` to the end of its page.
    pub rest_of_page: u64,
    /// Its page's size (4 KiB or 2 MiB).
    pub page_size: u64,
    /// Memory the address space does not own (`LENT`).
    pub lent: bool,
}

/// A page table `map` took out of the tree (a table of small pages, all
/// unmapped, replaced by a 2 MiB page): the caller frees its frame once no
/// CPU and no walk of the host's can still be in it.
#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub struct Unlinked(pub Option<u64>);

/// Sets entry `index` of `table` to `new(entry)`, retrying while the host
/// marks it DIRTY meanwhile; returns the entry replaced.
fn update(mem: &mut impl TableMemory, table: u64, index: usize, new: impl Fn(u64) -> u64) -> u64 {
    let mut entry = mem.read(table, index);
    loop {
        let want = new(entry);
        if want == entry {
            return entry;
        }
        match mem.compare_exchange(table, index, entry, want) {
            Ok(()) => return entry,
            Err(now) => entry = now,
        }
    }
}

/// Table indices (PML4, PDPT, PD, PT) of a virtual address.
fn indices(va: u64) -> [usize; 4] {
    [
        (va >> 39) as usize & 511,
        (va >> 30) as usize & 511,
        (va >> 21) as usize & 511,
        (va >> 12) as usize & 511,
    ]
}

/// First address of the next `size`-aligned block above `va`.
fn next_boundary(va: u64, size: u64) -> u64 {
    (va | (size - 1)).wrapping_add(1)
}

/// `clean`'s zeroing of a written page, unless it is lent: out of line,
/// so that the test for a clean page stays one instruction (merged with
/// the LENT test it cost two more a page, 2048 for a thread's stack).
#[inline(never)]
fn zero_owned(zero: &mut impl FnMut(u64, u64), entry: u64, phys: u64, len: u64) {
    if entry & LENT == 0 {
        zero(phys, len)
    }
}

fn holds_frame(entry: u64) -> bool {
    entry & (PRESENT | KEEP) != 0
}

/// A user address space's root table and the operations on it.
pub struct UserPageTable {
    root: u64,
}

impl UserPageTable {
    /// A new, empty lower half whose upper half repeats `kernel_root`'s.
    pub fn new(mem: &mut impl TableMemory, kernel_root: u64) -> Option<Self> {
        let root = mem.new_table()?;
        for i in USER_PML4_ENTRIES..ENTRIES {
            let e = mem.read(kernel_root, i);
            mem.write(root, i, e);
        }
        Some(UserPageTable { root })
    }

    /// Physical address of the PML4 (for CR3).
    pub fn root(&self) -> u64 {
        self.root
    }

    /// Table below entry `index` of `table`, made if absent.
    fn child(mem: &mut impl TableMemory, table: u64, index: usize) -> Result<u64, MapError> {
        let e = mem.read(table, index);
        if e & PRESENT != 0 {
            return Ok(e & ADDR_MASK);
        }
        let fresh = mem.new_table().ok_or(MapError::NoMemory)?;
        mem.write(table, index, fresh | TABLE_FLAGS);
        Ok(fresh)
    }

    /// Maps one page: 2 MiB when `large` (both addresses aligned), else 4 KiB.
    pub fn map(
        &mut self,
        mem: &mut impl TableMemory,
        va: u64,
        phys: u64,
        large: bool,
        access: Access,
    ) -> Result<Unlinked, MapError> {
        self.map_leaf(mem, va, phys, large, access.leaf_flags())
    }

    /// As `map`, for memory the address space does not own (`LENT`).
    pub fn map_lent(
        &mut self,
        mem: &mut impl TableMemory,
        va: u64,
        phys: u64,
        large: bool,
        access: Access,
    ) -> Result<Unlinked, MapError> {
        self.map_leaf(mem, va, phys, large, access.leaf_flags() | LENT)
    }

    fn map_leaf(
        &mut self,
        mem: &mut impl TableMemory,
        va: u64,
        phys: u64,
        large: bool,
        flags: u64,
    ) -> Result<Unlinked, MapError> {
        if self.root == 0 {
            return Err(MapError::NoMemory);
        }
        let [i4, i3, i2, i1] = indices(va);
        let pdpt = Self::child(mem, self.root, i4)?;
        let pd = Self::child(mem, pdpt, i3)?;
        if large {
            debug_assert!(
                va.is_multiple_of(LARGE_PAGE_SIZE) && phys.is_multiple_of(LARGE_PAGE_SIZE)
            );
            let e = mem.read(pd, i2);
            let mut unlinked = None;
            if e & PRESENT != 0
                && e & HUGE == 0
                && (0..ENTRIES).all(|i| mem.read(e & ADDR_MASK, i) == 0)
            {
                // A table of small pages all unmapped since: make room.
                unlinked = Some(e & ADDR_MASK);
            } else if e != 0 {
                return Err(MapError::Occupied);
            }
            mem.write(pd, i2, phys | flags | HUGE);
            return Ok(Unlinked(unlinked));
        }
        if mem.read(pd, i2) & HUGE != 0 {
            return Err(MapError::Occupied);
        }
        let pt = Self::child(mem, pd, i2)?;
        if mem.read(pt, i1) != 0 {
            return Err(MapError::Occupied);
        }
        mem.write(pt, i1, phys | flags);
        Ok(Unlinked(None))
    }

    /// Where `va` leads, if it is mapped and accessible.
    pub fn translate(&self, mem: &impl TableMemory, va: u64) -> Option<Translation> {
        if self.root == 0 {
            return None;
        }
        let [i4, i3, i2, i1] = indices(va);
        let e4 = mem.read(self.root, i4);
        if e4 & PRESENT == 0 || i4 >= USER_PML4_ENTRIES {
            return None;
        }
        let e3 = mem.read(e4 & ADDR_MASK, i3);
        if e3 & PRESENT == 0 {
            return None;
        }
        let e2 = mem.read(e3 & ADDR_MASK, i2);
        if e2 & PRESENT == 0 {
            return None;
        }
        let (leaf, size) = if e2 & HUGE != 0 {
            (e2, LARGE_PAGE_SIZE)
        } else {
            (mem.read(e2 & ADDR_MASK, i1), PAGE_SIZE)
        };
        if leaf & (PRESENT | USER) != PRESENT | USER {
            return None;
        }
        let offset = va & (size - 1);
        Some(Translation {
            phys: (leaf & ADDR_MASK & !(size - 1)) + offset,
            writable: leaf & WRITABLE != 0,
            executable: leaf & NO_EXECUTE == 0,
            rest_of_page: size - offset,
            page_size: size,
            lent: leaf & LENT != 0,
        })
    }

    /// The first page at or above `va` and below `end` that `translate`
    /// finds, skipping whole tables that are absent and reading one word
    /// per empty small page (a fork walks its parent's reserved ranges,
    /// mostly holes, this way).
    pub fn next_mapped(&self, mem: &impl TableMemory, mut va: u64, end: u64) -> Option<u64> {
        const ACCESSIBLE: u64 = PRESENT | USER;
        if self.root == 0 {
            return None;
        }
        while va < end {
            let [i4, i3, i2, i1] = indices(va);
            if i4 >= USER_PML4_ENTRIES {
                return None;
            }
            let e4 = mem.read(self.root, i4);
            if e4 & PRESENT == 0 {
                va = next_boundary(va, 1 << 39);
                continue;
            }
            let e3 = mem.read(e4 & ADDR_MASK, i3);
            if e3 & PRESENT == 0 {
                va = next_boundary(va, 1 << 30);
                continue;
            }
            let e2 = mem.read(e3 & ADDR_MASK, i2);
            if e2 & ACCESSIBLE == ACCESSIBLE && e2 & HUGE != 0 {
                return Some(va);
            }
            if e2 & PRESENT != 0 && e2 & HUGE == 0 {
                let block = va & !(LARGE_PAGE_SIZE - 1);
                let found =
                    (i1..512).find(|&i| mem.read(e2 & ADDR_MASK, i) & ACCESSIBLE == ACCESSIBLE);
                if let Some(i) = found {
                    let at = (block + i as u64 * PAGE_SIZE).max(va);
                    return (at < end).then_some(at);
                }
            }
            va = next_boundary(va, LARGE_PAGE_SIZE);
        }
        None
    }

    /// The leaf entry for `va` (0 if none) and its page size.
    fn leaf(&self, mem: &impl TableMemory, va: u64) -> (u64, u64) {
        if self.root == 0 {
            return (0, LARGE_PAGE_SIZE);
        }
        let [i4, i3, i2, i1] = indices(va);
        let e4 = mem.read(self.root, i4);
        if e4 & PRESENT == 0 || i4 >= USER_PML4_ENTRIES {
            return (0, PAGE_SIZE);
        }
        let e3 = mem.read(e4 & ADDR_MASK, i3);
        if e3 & PRESENT == 0 {
            return (0, PAGE_SIZE);
        }
        let e2 = mem.read(e3 & ADDR_MASK, i2);
        if e2 & HUGE != 0 || e2 & PRESENT == 0 {
            return (e2, LARGE_PAGE_SIZE);
        }
        (mem.read(e2 & ADDR_MASK, i1), PAGE_SIZE)
    }

    /// True if the page at `va` has memory (accessible or PROT_NONE).
    pub fn has_frame(&self, mem: &impl TableMemory, va: u64) -> bool {
        holds_frame(self.leaf(mem, va).0)
    }

    /// True if no page in [start, end) has memory.
    pub fn is_empty(&self, mem: &impl TableMemory, start: u64, end: u64) -> bool {
        let mut va = start;
        while va < end {
            let (entry, size) = self.leaf(mem, va);
            if holds_frame(entry) {
                return false;
            }
            va = next_boundary(
                va,
                if entry == 0 && size == LARGE_PAGE_SIZE { size } else { PAGE_SIZE },
            );
        }
        true
    }

    /// Turns the 2 MiB leaf at `pd[index]` into a table of 512 small pages.
    fn split(mem: &mut impl TableMemory, pd: u64, index: usize) -> Result<(), MapError> {
        let mut e = mem.read(pd, index);
        let pt = mem.new_table().ok_or(MapError::NoMemory)?;
        loop {
            let base = e & ADDR_MASK & !(LARGE_PAGE_SIZE - 1);
            let flags = e & !ADDR_MASK & !HUGE;
            for i in 0..ENTRIES {
                mem.write(pt, i, (base + i as u64 * PAGE_SIZE) | flags);
            }
            match mem.compare_exchange(pd, index, e, pt | TABLE_FLAGS) {
                Ok(()) => return Ok(()),
                Err(now) => e = now, // marked DIRTY meanwhile: copy that too
            }
        }
    }

    /// The page directory covering `va`, or the next address worth looking
    /// at when there is none.
    fn page_directory(&self, mem: &impl TableMemory, va: u64) -> Result<u64, u64> {
        let [i4, i3, _, _] = indices(va);
        let e4 = mem.read(self.root, i4);
        if e4 & PRESENT == 0 || i4 >= USER_PML4_ENTRIES {
            return Err(next_boundary(va, 1 << 39));
        }
        let e3 = mem.read(e4 & ADDR_MASK, i3);
        if e3 & PRESENT == 0 {
            return Err(next_boundary(va, 1 << 30));
        }
        Ok(e3 & ADDR_MASK)
    }

    /// Visits every leaf holding a frame in [start, end), splitting 2 MiB
    /// pages the range only partly covers: sets it to `new(entry, size)`,
    /// then tells `done(old entry, size)`.
    fn for_each_leaf(
        &mut self,
        mem: &mut impl TableMemory,
        start: u64,
        end: u64,
        new: impl Fn(u64, u64) -> u64,
        mut done: impl FnMut(u64, u64),
    ) -> Result<(), MapError> {
        if self.root == 0 {
            return Ok(());
        }
        let mut va = start;
        while va < end {
            let [_, _, i2, i1] = indices(va);
            let pd = match self.page_directory(mem, va) {
                Ok(pd) => pd,
                Err(next) => {
                    va = next;
                    continue;
                }
            };
            let e2 = mem.read(pd, i2);
            if e2 == 0 {
                va = next_boundary(va, LARGE_PAGE_SIZE);
                continue;
            }
            if e2 & HUGE != 0 {
                if va.is_multiple_of(LARGE_PAGE_SIZE) && end - va >= LARGE_PAGE_SIZE {
                    let old = update(mem, pd, i2, |e| new(e, LARGE_PAGE_SIZE));
                    done(old, LARGE_PAGE_SIZE);
                    va += LARGE_PAGE_SIZE;
                    continue;
                }
                Self::split(mem, pd, i2)?;
                continue;
            }
            let pt = e2 & ADDR_MASK;
            let e1 = mem.read(pt, i1);
            if holds_frame(e1) {
                let old = update(mem, pt, i1, |e| new(e, PAGE_SIZE));
                done(old, PAGE_SIZE);
            }
            va += PAGE_SIZE;
        }
        Ok(())
    }

    /// Unmaps [start, end); `free(phys, bytes)` gets each frame back
    /// (not those of `LENT` leaves).
    pub fn unmap(
        &mut self,
        mem: &mut impl TableMemory,
        start: u64,
        end: u64,
        mut free: impl FnMut(u64, u64),
    ) -> Result<(), MapError> {
        self.for_each_leaf(
            mem,
            start,
            end,
            |_, _| 0,
            |entry, size| {
                if entry & LENT == 0 {
                    free(entry & ADDR_MASK & !(size - 1), size)
                }
            },
        )
    }

    /// Gives [start, end) the access `access`; absent pages stay absent.
    pub fn protect(
        &mut self,
        mem: &mut impl TableMemory,
        start: u64,
        end: u64,
        access: Access,
    ) -> Result<(), MapError> {
        let flags = access.leaf_flags();
        self.for_each_leaf(
            mem,
            start,
            end,
            |entry, size| {
                let huge = if size == LARGE_PAGE_SIZE { HUGE } else { 0 };
                (entry & (ADDR_MASK | DIRTY | LENT)) | flags | huge
            },
            |_, _| {},
        )
    }

    /// MADV_DONTNEED without zeroing what was never written: for every
    /// dirty page in [start, end) but lent ones, `zero(phys, bytes)` gets the part inside
    /// the range; a page wholly inside is marked clean again. Nothing is
    /// split or freed. The caller flushes TLBs afterwards, so that the next
    /// write marks the page again.
    pub fn clean(
        &mut self,
        mem: &mut impl TableMemory,
        start: u64,
        end: u64,
        mut zero: impl FnMut(u64, u64),
    ) {
        // The mark goes before the zeroing: a write the host makes after
        // that marks the page again.
        self.walk_leaves(
            mem,
            start,
            end,
            |entry, whole| if whole { entry & !DIRTY } else { entry },
            |old, size, page, from, to| {
                if old & DIRTY != 0 {
                    zero_owned(
                        &mut zero,
                        old,
                        (old & ADDR_MASK & !(size - 1)) + (from - page),
                        to - from,
                    );
                }
            },
        );
    }

    /// Tells `visit(page, frame, size, writable)` of every page in
    /// [start, end) that holds a frame it owns (not `LENT`), PROT_NONE
    /// ones included; changes nothing.
    pub fn for_each_frame(
        &mut self,
        mem: &mut impl TableMemory,
        start: u64,
        end: u64,
        mut visit: impl FnMut(u64, u64, u64, bool),
    ) {
        self.walk_leaves(
            mem,
            start,
            end,
            |entry, _| entry,
            |old, size, page, _, _| {
                if old & LENT == 0 {
                    visit(page, old & ADDR_MASK & !(size - 1), size, old & WRITABLE != 0)
                }
            },
        );
    }

    /// Points the 4 KiB page at `va` to `frame`, keeping its access and
    /// marks; returns the frame it held (None: no 4 KiB page holds one
    /// there, and nothing changed). The caller flushes TLBs afterwards.
    pub fn replace_frame(
        &mut self,
        mem: &mut impl TableMemory,
        va: u64,
        frame: u64,
    ) -> Option<u64> {
        let (pt, i1) = self.small_leaf(mem, va)?;
        let old = update(mem, pt, i1, |e| (e & !ADDR_MASK) | (frame & ADDR_MASK));
        Some(old & ADDR_MASK)
    }

    /// The frame the 4 KiB page at `va` holds, PROT_NONE ones included
    /// (None: no 4 KiB page holds one there).
    pub fn small_frame(&self, mem: &impl TableMemory, va: u64) -> Option<u64> {
        let (pt, i1) = self.small_leaf(mem, va)?;
        Some(mem.read(pt, i1) & ADDR_MASK)
    }

    /// (table, index) of the 4 KiB leaf at `va`, if it holds a frame it
    /// owns (not `LENT`).
    fn small_leaf(&self, mem: &impl TableMemory, va: u64) -> Option<(u64, usize)> {
        if self.root == 0 {
            return None;
        }
        let [_, _, i2, i1] = indices(va);
        let e2 = mem.read(self.page_directory(mem, va).ok()?, i2);
        if e2 & PRESENT == 0 || e2 & HUGE != 0 {
            return None;
        }
        let pt = e2 & ADDR_MASK;
        let e1 = mem.read(pt, i1);
        (holds_frame(e1) && e1 & LENT == 0).then_some((pt, i1))
    }

    /// Marks the pages of [start, end) written (the kernel wrote them
    /// through its own mapping, which sets no mark).
    pub fn mark_dirty(&mut self, mem: &mut impl TableMemory, start: u64, end: u64) {
        self.walk_leaves(mem, start, end, |entry, _| entry | DIRTY, |_, _, _, _, _| {});
    }

    /// Visits the leaves holding frames in [start, end) without splitting:
    /// sets each to `new(entry, whole)`, `whole` if the range covers its
    /// page, then tells `done(old entry, size, page, from, to)`, where
    /// [from, to) is the part of the page at `page` inside the range.
    fn walk_leaves(
        &mut self,
        mem: &mut impl TableMemory,
        start: u64,
        end: u64,
        new: impl Fn(u64, bool) -> u64,
        mut done: impl FnMut(u64, u64, u64, u64, u64),
    ) {
        if self.root == 0 {
            return;
        }
        let mut va = start;
        while va < end {
            let [_, _, i2, i1] = indices(va);
            let pd = match self.page_directory(mem, va) {
                Ok(pd) => pd,
                Err(next) => {
                    va = next;
                    continue;
                }
            };
            let e2 = mem.read(pd, i2);
            if e2 & HUGE != 0 || e2 == 0 {
                let page = va & !(LARGE_PAGE_SIZE - 1);
                let to = end.min(page + LARGE_PAGE_SIZE);
                if holds_frame(e2) {
                    let whole = va == page && to == page + LARGE_PAGE_SIZE;
                    let old = update(mem, pd, i2, |e| new(e, whole));
                    done(old, LARGE_PAGE_SIZE, page, va, to);
                }
                va = to;
                continue;
            }
            // The rest of this page table's pages in the range, without
            // walking down from the root for each (the tables above stay
            // as they are: `&mut self`).
            let pt = e2 & ADDR_MASK;
            let stop = end.min(next_boundary(va, LARGE_PAGE_SIZE));
            let mut i1 = i1;
            while va < stop {
                let entry = mem.read(pt, i1);
                let page = va & !(PAGE_SIZE - 1);
                let to = stop.min(page + PAGE_SIZE);
                if holds_frame(entry) {
                    let whole = va == page && to == page + PAGE_SIZE;
                    let old = update(mem, pt, i1, |e| new(e, whole));
                    done(old, PAGE_SIZE, page, va, to);
                }
                va = to;
                i1 += 1;
            }
        }
    }

    /// Frees every user frame it owns and every table, the root last; the table is
    /// empty (and maps nothing) afterwards.
    pub fn destroy(&mut self, mem: &mut impl TableMemory, mut free: impl FnMut(u64, u64)) {
        if self.root == 0 {
            return;
        }
        for i4 in 0..USER_PML4_ENTRIES {
            let e4 = mem.read(self.root, i4);
            if e4 & PRESENT == 0 {
                continue;
            }
            let pdpt = e4 & ADDR_MASK;
            for i3 in 0..ENTRIES {
                let e3 = mem.read(pdpt, i3);
                if e3 & PRESENT == 0 {
                    continue;
                }
                let pd = e3 & ADDR_MASK;
                for i2 in 0..ENTRIES {
                    let e2 = mem.read(pd, i2);
                    if e2 & HUGE != 0 {
                        if e2 & LENT == 0 {
                            free(e2 & ADDR_MASK & !(LARGE_PAGE_SIZE - 1), LARGE_PAGE_SIZE);
                        }
                    } else if e2 & PRESENT != 0 {
                        let pt = e2 & ADDR_MASK;
                        for i1 in 0..ENTRIES {
                            let e1 = mem.read(pt, i1);
                            if holds_frame(e1) && e1 & LENT == 0 {
                                free(e1 & ADDR_MASK, PAGE_SIZE);
                            }
                        }
                        mem.free_table(pt);
                    }
                }
                mem.free_table(pd);
            }
            mem.free_table(pdpt);
        }
        mem.free_table(self.root);
        self.root = 0;
    }
}

#[cfg(test)]
mod tests;
