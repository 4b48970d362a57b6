//! A program's address space: which ranges are reserved (for placing new
//! mappings) and the page tables, which own the memory. Memory is
//! populated and zeroed when it is mapped (no demand paging), with 2 MiB
//! pages wherever a whole aligned 2 MiB is covered; the one exception is
//! the main stack below its first contents, which gets memory when first
//! touched (`GrowsDown`). PROT_NONE reservations
//! get memory only when they become accessible. Ranges that map a file
//! MAP_SHARED hold the enclave's one copy of its pages (shared_file.rs),
//! which they never free themselves; XEMEM attachments map frames that
//! are not the program's at all (xemem.rs): lent leaves, never freed here.
//! A fork shares read-only 4 KiB pages with its child (each address space
//! holds the frame, `hal::frames`); a page gets a frame of its own before
//! it is written or zeroed. A frame is freed when its last holder (a
//! leaf, a shared file, an XEMEM pin) lets go.

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::sync::Arc;
use alloc::vec::Vec;
use atoll_abi::{MMAP_BASE, USER_END, USER_START};
use hal::frames::{Frames, HostPages};
use hal::user_space::{Root, UserSpace};
use lwk_logic::maps::{Backing, Maps};
use lwk_logic::user_pages::{Access, MapError, Translation, LARGE_PAGE_SIZE, PAGE_SIZE};

use lwk_logic::errno::*;

use super::pins;
use super::shared_file::{self, FileKey, SharedFile};

/// Holds to let go of once no CPU can still reach the frames (after a TLB
/// shootdown).
pub type Freed = Vec<Frames>;

/// mmap's placement flags.
#[derive(Clone, Copy, Default)]
pub struct MapHow {
    /// MAP_FIXED: exactly at the hint, replacing what is there.
    pub fixed: bool,
    /// MAP_FIXED_NOREPLACE: exactly at the hint, or EEXIST.
    pub noreplace: bool,
    /// MAP_STACK: 4 KiB pages only.
    pub small_pages: bool,
}

pub struct AddressSpace {
    pages: UserSpace,
    /// Reserved ranges, start -> end.
    ranges: BTreeMap<u64, u64>,
    brk_start: u64,
    brk: u64,
    /// The heap is mapped up to here (a 2 MiB boundary past `brk`).
    heap_end: u64,
    /// Large mappings made so far, for their colour (see `place`).
    large_mappings: u64,
    /// Ranges mapped with 4 KiB pages only (thread stacks, MAP_STACK):
    /// their dirty marks are per 4 KiB, so a dead thread's stack is zeroed
    /// only where it was used.
    small_only: BTreeMap<u64, u64>,
    /// Ranges that map a shared file's pages, start -> SharedRange.
    shared: BTreeMap<u64, SharedRange>,
    /// Frames let go of at exit (`detach_shared`), freed with the rest.
    deferred: Freed,
    /// Page tables taken out of the tree, to free once no CPU and no walk
    /// of the host's mirror can still be in them (`take_unlinked`).
    unlinked: Freed,
    /// XEMEM attachments, start -> Attached.
    attached: BTreeMap<u64, Attached>,
    /// What /proc/<pid>/maps shows: each mapping's access and what it maps.
    maps: Maps,
    /// The part of the main stack that has no memory yet, if any.
    grows: Option<GrowsDown>,
    /// Changes that took translations away or narrowed them, so far: a core
    /// may keep the old ones until the shootdown that follows each
    /// (memory.rs: a new mapping over such addresses waits for it).
    removals: u64,
}

/// A region whose memory comes on first touch, from the touched page up to
/// what it has (the main stack below its first contents): [bottom, low)
/// has none yet. A fork copies, and a start zeroes, only what is used.
#[derive(Clone, Copy)]
struct GrowsDown {
    bottom: u64,
    low: u64,
    access: Access,
}

/// [its start, end) maps frames of XEMEM attachment `id`.
#[derive(Clone, Copy)]
struct Attached {
    end: u64,
    id: u64,
    writable: bool,
}

const LARGE_FRAMES: u64 = LARGE_PAGE_SIZE / PAGE_SIZE;

/// [its start, end) maps the file's pages from `first_page` on, 4 KiB each.
#[derive(Clone)]
struct SharedRange {
    end: u64,
    file: Arc<SharedFile>,
    first_page: u64,
    write_back: Option<WriteBack>,
}

/// Where a writable shared mapping's pages go back to on Linux (msync,
/// munmap, the program's end): a descriptor of the file that the program's
/// `atoll run` keeps for it, and the file's size when it was mapped (pages
/// past it are not written, so the file does not grow).
#[derive(Clone, Copy)]
pub struct WriteBack {
    pub fd: u64,
    pub file_size: u64,
}

/// Which pages of which file a shared mapping maps, and where they go back.
pub struct FilePages {
    pub key: FileKey,
    pub first_page: u64,
    pub write_back: Option<WriteBack>,
}

/// One piece to write back: `len` bytes at `va` to the file behind `fd`
/// at `offset`.
pub struct WriteBackPiece {
    pub va: u64,
    pub len: u64,
    pub fd: u64,
    pub offset: u64,
}

/// Removes [start, end) from a set of ranges, splitting any it cuts.
fn cut(ranges: &mut BTreeMap<u64, u64>, start: u64, end: u64) {
    let cut: Vec<(u64, u64)> =
        ranges.range(..end).filter(|(_, &e)| e > start).map(|(&s, &e)| (s, e)).collect();
    for (s, e) in cut {
        ranges.remove(&s);
        if s < start {
            ranges.insert(s, start);
        }
        if e > end {
            ranges.insert(end, e);
        }
    }
}

pub fn page_up(x: u64) -> u64 {
    (x + PAGE_SIZE - 1) & !(PAGE_SIZE - 1)
}

fn map_errno(e: MapError) -> Errno {
    if e == MapError::NoMemory {
        ENOMEM
    } else {
        EEXIST
    }
}

fn in_user_range(start: u64, len: u64) -> bool {
    start >= USER_START && len <= USER_END - start
}

impl AddressSpace {
    pub fn new(brk_start: u64) -> Result<Self, Errno> {
        let pages = UserSpace::new().ok_or(ENOMEM)?;
        Ok(AddressSpace {
            pages,
            ranges: BTreeMap::new(),
            brk_start,
            brk: brk_start,
            heap_end: brk_start,
            large_mappings: 0,
            small_only: BTreeMap::new(),
            shared: BTreeMap::new(),
            deferred: Freed::new(),
            unlinked: Freed::new(),
            grows: None,
            attached: BTreeMap::new(),
            maps: Maps::new(),
            removals: 0,
        })
    }

    /// Bytes reserved for the program (every mapping is populated at once).
    pub fn mapped_bytes(&self) -> u64 {
        let to_come = self.grows.map_or(0, |g| g.low - g.bottom);
        self.ranges.iter().map(|(s, e)| e - s).sum::<u64>() - to_come
    }

    /// Reserves [start, start+len) for memory on first touch, from the
    /// top down (`grow_to`); one such region per address space.
    pub fn map_on_demand(&mut self, start: u64, len: u64, access: Access) -> Result<(), Errno> {
        let end = start.checked_add(len).ok_or(EINVAL)?;
        let aligned = start.is_multiple_of(PAGE_SIZE) && len.is_multiple_of(PAGE_SIZE);
        if !aligned || len == 0 || !in_user_range(start, len) || !self.is_free(start, end) {
            return Err(EINVAL);
        }
        if self.grows.is_some() || !access.write || access.exec {
            return Err(EINVAL);
        }
        self.reserve(start, end);
        self.maps.set(start, end, access, false, Backing::Stack);
        // Grown a page at a time: 4 KiB pages, so the copies stay small.
        self.small_only.insert(start, end);
        self.grows = Some(GrowsDown { bottom: start, low: end, access });
        Ok(())
    }

    /// Gives the on-demand region memory from `va`'s page up to what it
    /// has; false if `va` is not in its part without memory.
    pub fn grow_to(&mut self, va: u64) -> Result<bool, Errno> {
        let Some(g) = self.grows.filter(|g| (g.bottom..g.low).contains(&va)) else {
            return Ok(false);
        };
        // From the top down, so that what has memory stays one range
        // [low, top) even when memory runs out halfway.
        let mut low = g.low;
        while low > va {
            let result = self.populate(low - PAGE_SIZE, low, g.access);
            if result.is_ok() {
                low -= PAGE_SIZE;
            }
            self.grows = Some(GrowsDown { low, ..g });
            result?;
        }
        Ok(true)
    }

    /// [bottom, low) of the on-demand region's part without memory, or an
    /// empty range.
    pub fn still_to_grow(&self) -> (u64, u64) {
        self.grows.map_or((0, 0), |g| (g.bottom, g.low))
    }

    /// Before a change to [start, end): the on-demand region it touches
    /// gets all its memory and is an ordinary one from then on (a program
    /// rarely changes its main stack; this keeps every other path as it is).
    fn settle_on_demand(&mut self, start: u64, end: u64) -> Result<(), Errno> {
        let Some(g) = self.grows.filter(|g| start < g.low && g.bottom < end) else {
            return Ok(());
        };
        self.grows = None;
        self.populate(g.bottom, g.low, g.access)
    }

    pub fn tables(&self) -> Root {
        self.pages.tables()
    }

    /// [start, end) maps `backing` (from its start), for /proc/<pid>/maps.
    pub fn label(&mut self, start: u64, end: u64, shared: bool, backing: &Backing) {
        self.maps.label(start, end, shared, backing);
    }

    /// The mappings as /proc/<pid>/maps shows them.
    pub fn maps(&self) -> &Maps {
        &self.maps
    }

    /// The kernel wrote [start, end) through its own mapping: the pages
    /// count as written (see `zero`).
    pub fn mark_written(&mut self, start: u64, end: u64) {
        self.pages.mark_dirty(start, end);
    }

    pub fn translate(&self, va: u64) -> Option<Translation> {
        self.pages.translate(va)
    }

    /// The page tables, for reading and writing the program's memory.
    pub fn user(&self) -> &UserSpace {
        &self.pages
    }

    /// Writes `bytes` at `va` whatever the pages' protection (pages the
    /// program cannot write itself, as the vDSO's), marking them written.
    pub fn fill(&mut self, va: u64, bytes: &[u8]) -> Result<(), Errno> {
        let mut done = 0;
        while done < bytes.len() {
            done += self.pages.fill(va + done as u64, &bytes[done..]).map_err(|_| EFAULT)?;
        }
        self.pages.mark_dirty(va, va + bytes.len() as u64);
        Ok(())
    }

    fn is_free(&self, start: u64, end: u64) -> bool {
        // The last range starting below `end` must end at or before `start`.
        self.ranges.range(..end).next_back().is_none_or(|(_, &e)| e <= start)
    }

    fn reserve(&mut self, start: u64, end: u64) {
        self.ranges.insert(start, end);
    }

    /// Removes [start, end) from the reserved ranges (and the small-page
    /// ones), splitting any range it cuts.
    fn unreserve(&mut self, start: u64, end: u64) {
        cut(&mut self.ranges, start, end);
        cut(&mut self.small_only, start, end);
    }

    fn small_pages_only(&self, va: u64) -> bool {
        self.small_only.range(..=va).next_back().is_some_and(|(_, &e)| e > va)
    }

    /// Gives [start, end) memory wherever it has none, with `access`.
    fn populate(&mut self, start: u64, end: u64, access: Access) -> Result<(), Errno> {
        let mut va = start;
        while va < end {
            let whole_large = va.is_multiple_of(LARGE_PAGE_SIZE)
                && end - va >= LARGE_PAGE_SIZE
                && !self.small_pages_only(va);
            if whole_large && self.pages.is_empty(va, va + LARGE_PAGE_SIZE) {
                if let Some(f) = Frames::alloc_zeroed(LARGE_FRAMES, LARGE_FRAMES) {
                    self.map_page(va, f, access)?;
                    va += LARGE_PAGE_SIZE;
                    continue;
                }
            }
            if !self.pages.has_frame(va) {
                let f = Frames::alloc_zeroed(1, 1).ok_or(ENOMEM)?;
                self.map_page(va, f, access)?;
            }
            va += PAGE_SIZE;
        }
        Ok(())
    }

    /// Maps one page (2 MiB for 512 frames); a table it takes out of the
    /// tree waits in `unlinked`. On an error the frames are let go of.
    fn map_page(&mut self, va: u64, frames: Frames, access: Access) -> Result<(), Errno> {
        let table = self.pages.map(va, frames, access).map_err(map_errno)?;
        self.unlinked.extend(table);
        Ok(())
    }

    /// The page tables taken out of the tree since the last call: the
    /// caller frees them as it frees unmapped frames (after a shootdown,
    /// and after the delegated calls that may still walk them).
    pub fn take_unlinked(&mut self) -> Freed {
        core::mem::take(&mut self.unlinked)
    }

    /// Maps [start, start+len) with memory (a launch region, or mmap).
    pub fn map_fixed(&mut self, start: u64, len: u64, access: Access) -> Result<(), Errno> {
        if !in_user_range(start, len) || !start.is_multiple_of(PAGE_SIZE) || len == 0 {
            return Err(EINVAL);
        }
        let end = start + page_up(len);
        self.reserve(start, end);
        self.maps.set(start, end, access, false, Backing::Anonymous);
        if access == Access::NONE {
            return Ok(());
        }
        let r = self.populate(start, end, access);
        if r.is_err() {
            let mut freed = Freed::new();
            self.unmap(start, end - start, &mut freed);
            drop(freed);
        }
        r
    }

    /// A free range for `len` bytes at or above the mmap base. Large
    /// mappings start a "colour" of 4 KiB pages past a 2 MiB boundary, a
    /// different one each time, so arrays that are used together (STREAM's
    /// a[i], b[i], c[i]) do not share the same offset within their 2 MiB
    /// pages and collide in direct-mapped or set-associative caches and
    /// TLBs; their inner 2 MiB pages stay 2 MiB pages.
    fn place(&mut self, len: u64) -> Option<u64> {
        let (align, colour) = if len >= LARGE_PAGE_SIZE {
            self.large_mappings += 1;
            (LARGE_PAGE_SIZE, (self.large_mappings * 37 % 64) * PAGE_SIZE)
        } else {
            (PAGE_SIZE, 0)
        };
        self.free_range(len, align, colour)
    }

    /// The lowest free range for `len` bytes at or above the mmap base
    /// that starts `colour` bytes past a multiple of `align`.
    fn free_range(&self, len: u64, align: u64, colour: u64) -> Option<u64> {
        let fits = |start: u64| start + colour;
        let mut candidate = MMAP_BASE;
        for (&s, &e) in self.ranges.range(MMAP_BASE..) {
            if s >= fits(candidate) + len {
                break;
            }
            candidate = (e + align - 1) & !(align - 1);
        }
        let at = fits(candidate);
        (at + len <= USER_END).then_some(at)
    }

    /// mmap of anonymous memory; `fixed` maps exactly at `hint`, replacing
    /// what is there (its frames go to `freed`).
    pub fn mmap(
        &mut self,
        hint: u64,
        len: u64,
        access: Access,
        how: MapHow,
        freed: &mut Freed,
    ) -> Result<u64, Errno> {
        let MapHow { fixed, noreplace, small_pages } = how;
        let len = page_up(len);
        if len == 0 {
            return Err(EINVAL);
        }
        let at = if fixed || noreplace {
            if !hint.is_multiple_of(PAGE_SIZE) || !in_user_range(hint, len) {
                return Err(if fixed { EINVAL } else { ENOMEM });
            }
            if !self.is_free(hint, hint + len) {
                if noreplace {
                    return Err(EEXIST);
                }
                self.unmap(hint, len, freed);
            }
            hint
        } else if hint != 0
            && hint.is_multiple_of(PAGE_SIZE)
            && in_user_range(hint, len)
            && self.is_free(hint, hint + len)
        {
            hint
        } else {
            self.place(len).ok_or(ENOMEM)?
        };
        if small_pages {
            self.small_only.insert(at, at + len);
        }
        self.map_fixed(at, len, access)?;
        Ok(at)
    }

    pub fn removals(&self) -> u64 {
        self.removals
    }

    /// munmap: frames go to `freed`, to be released after the shootdown.
    pub fn unmap(&mut self, start: u64, len: u64, freed: &mut Freed) {
        self.removals += 1;
        let end = start.saturating_add(page_up(len)).min(USER_END);
        // Out of memory: the pages that got none stay reserved without,
        // and fault (only if the program touches what it did not unmap).
        let _ = self.settle_on_demand(start, end);
        self.unshare(start, end, freed);
        self.unattach(start, end);
        self.unreserve(start, end);
        self.maps.remove(start, end);
        // Page-table frames are only ever short of memory when splitting a
        // 2 MiB page; then the whole 2 MiB goes (still inside the range's
        // reservation rules, as the split only happens at its edges).
        if self.pages.unmap(start, end, |f| freed.push(f)).is_err() {
            let (a, b) = (
                start & !(LARGE_PAGE_SIZE - 1),
                (end + LARGE_PAGE_SIZE - 1) & !(LARGE_PAGE_SIZE - 1),
            );
            let _ = self.pages.unmap(a, b, |f| freed.push(f));
        }
    }

    /// The end of the shared range that holds `va`, if one does.
    fn shared_end(&self, va: u64) -> Option<u64> {
        self.shared.range(..=va).next_back().map(|(_, r)| r.end).filter(|&end| end > va)
    }

    /// The shared ranges that overlap [start, end), clipped to it.
    fn shared_in(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let hits = self.shared.range(..end).filter(|(_, r)| r.end > start);
        hits.map(|(&s, r)| (s.max(start), r.end.min(end))).collect()
    }

    /// Makes [at, at + len), just mapped with 4 KiB pages that hold the
    /// bytes of file `from.key` from page `from.first_page` on, map the enclave's
    /// shared copy of those pages: where the enclave has a page already it
    /// replaces this one (whose frame goes to `freed`); the others become
    /// the enclave's copy.
    pub fn share(
        &mut self,
        at: u64,
        len: u64,
        from: FilePages,
        access: Access,
        freed: &mut Freed,
    ) -> Result<(), Errno> {
        let FilePages { key, first_page, write_back } = from;
        // A fork may have shared these pages meanwhile (another thread made
        // them read-only): the file's copy must be a frame of this space.
        self.own_pages(at, at + len, false, freed)?;
        let pages = (at..at + len).step_by(PAGE_SIZE as usize);
        let mine: Vec<Frames> = pages
            .clone()
            .map(|va| self.pages.share_frame(va))
            .collect::<Option<_>>()
            .ok_or(EFAULT)?;
        let file = shared_file::open(key);
        self.removals += 1;
        let range = SharedRange { end: at + len, file: file.clone(), first_page, write_back };
        self.shared.insert(at, range);
        for ((i, va), mine) in pages.enumerate().zip(mine) {
            let mine_at = mine.phys();
            let frame = match file.hold(first_page + i as u64, mine) {
                Ok(frame) => frame,
                Err(e) => {
                    // Only the pages held so far are this range's to let go.
                    (0..i as u64).for_each(|j| file.release(first_page + j));
                    self.shared.remove(&at);
                    return Err(e);
                }
            };
            if frame.phys() != mine_at {
                let _ = self.pages.unmap(va, va + PAGE_SIZE, |f| freed.push(f));
                // The page table is there: mapping one page cannot fail.
                let _ = self.map_page(va, frame, access);
            }
        }
        self.maps.protect(at, at + len, access);
        self.pages.protect(at, at + len, access).map_err(|_| ENOMEM)
    }

    /// What of [start, end) goes back to files on Linux: the writable
    /// shared file pages, up to each file's size when it was mapped.
    pub fn write_backs(&self, start: u64, end: u64) -> Vec<WriteBackPiece> {
        let hits = self.shared.range(..end).filter(|(_, r)| r.end > start);
        hits.filter_map(|(&s, r)| {
            let wb = r.write_back?;
            let va = s.max(start);
            let offset = r.first_page * PAGE_SIZE + (va - s);
            let len = (r.end.min(end) - va).min(wb.file_size.saturating_sub(offset));
            (len > 0).then_some(WriteBackPiece { va, len, fd: wb.fd, offset })
        })
        .collect()
    }

    /// The descriptors kept for writing back the shared ranges that
    /// overlap [start, end).
    pub fn write_back_fds(&self, start: u64, end: u64) -> BTreeSet<u64> {
        let hits = self.shared.range(..end).filter(|(_, r)| r.end > start);
        hits.filter_map(|(_, r)| r.write_back.map(|wb| wb.fd)).collect()
    }

    /// The file mapped by the shared range that starts at `start`, and its
    /// end (shmdt finds its segment by it).
    pub fn shared_at(&self, start: u64) -> Option<(FileKey, u64)> {
        self.shared.get(&start).map(|r| (r.file.key(), r.end))
    }

    /// Maps the enclave's pages of file `key` (all of them there, as a
    /// System V segment's are) at [at, at + len), reserved and empty.
    pub fn share_reserved(
        &mut self,
        at: u64,
        len: u64,
        key: FileKey,
        access: Access,
    ) -> Result<(), Errno> {
        let file = shared_file::find(key).ok_or(EIDRM)?;
        let pages = len / PAGE_SIZE;
        let mut frames = Vec::with_capacity(pages as usize);
        for i in 0..pages {
            match file.hold_existing(i) {
                Ok(Some(f)) => frames.push(f),
                held => {
                    // Removed meanwhile (or too many holders): let go of
                    // what was held.
                    (0..i).for_each(|j| file.release(j));
                    return Err(held.err().unwrap_or(EIDRM));
                }
            }
        }
        self.shared
            .insert(at, SharedRange { end: at + len, file, first_page: 0, write_back: None });
        self.maps.protect(at, at + len, access);
        for (i, frame) in frames.into_iter().enumerate() {
            let va = at + i as u64 * PAGE_SIZE;
            self.map_page(va, frame, access).map_err(|_| ENOMEM)?;
        }
        Ok(())
    }

    /// Unmaps the shared-file pages in [start, end); a page's frame goes to
    /// `freed` when no mapping in the enclave holds it any more.
    fn unshare(&mut self, start: u64, end: u64, freed: &mut Freed) {
        let hits: Vec<(u64, SharedRange)> = self
            .shared
            .range(..end)
            .filter(|(_, r)| r.end > start)
            .map(|(&s, r)| (s, r.clone()))
            .collect();
        for (s, r) in hits {
            self.shared.remove(&s);
            let (a, b) = (s.max(start), r.end.min(end));
            // 4 KiB pages only: nothing to split, so this cannot fail. The
            // leaves' holds wait for the shootdown; the file's may go now.
            let _ = self.pages.unmap(a, b, |f| freed.push(f));
            for va in (a..b).step_by(PAGE_SIZE as usize) {
                r.file.release(r.first_page + (va - s) / PAGE_SIZE);
            }
            if let Some(id) = super::sysv_shm::segment_of(r.file.key()) {
                super::sysv_shm::forget_if_unused(id);
            }
            if s < a {
                self.shared.insert(s, SharedRange { end: a, ..r.clone() });
            }
            if b < r.end {
                let first_page = r.first_page + (b - s) / PAGE_SIZE;
                self.shared.insert(b, SharedRange { end: r.end, first_page, ..r });
            }
        }
    }

    /// mprotect: memory that becomes accessible is populated first, and
    /// pages that become writable get frames of their own (the frames they
    /// shared go to `freed`).
    pub fn protect(
        &mut self,
        start: u64,
        len: u64,
        access: Access,
        freed: &mut Freed,
    ) -> Result<(), Errno> {
        self.removals += 1;
        let end = start.checked_add(page_up(len)).ok_or(ENOMEM)?;
        if !start.is_multiple_of(PAGE_SIZE) || !in_user_range(start, end - start) {
            return Err(EINVAL);
        }
        if !self.is_covered(start, end) {
            return Err(ENOMEM);
        }
        self.settle_on_demand(start, end)?;
        let read_only = self.attached.range(..end).any(|(_, a)| a.end > start && !a.writable);
        if access.write && read_only {
            return Err(EACCES);
        }
        if access.write {
            self.own_pages(start, end, false, freed)?;
        }
        if access != Access::NONE {
            self.populate(start, end, access)?;
        }
        self.pages.protect(start, end, access).map_err(|_| ENOMEM)?;
        self.maps.protect(start, end, access);
        Ok(())
    }

    /// True if every byte of [start, end) is reserved.
    pub fn is_covered(&self, start: u64, end: u64) -> bool {
        let mut at = start;
        for (&s, &e) in self.ranges.range(..end) {
            if e <= at {
                continue;
            }
            if s > at {
                return false;
            }
            at = e;
            if at >= end {
                return true;
            }
        }
        at >= end
    }

    /// Access of the page at `va` (mremap keeps it).
    fn access_at(&self, va: u64) -> Access {
        match self.translate(va) {
            Some(t) => Access { read: true, write: t.writable, exec: true },
            None => Access::NONE,
        }
    }

    /// brk: grows or shrinks the heap; returns the new break (or the old
    /// one when the request cannot be met, as Linux does).
    pub fn brk(&mut self, want: u64, freed: &mut Freed) -> u64 {
        if want < self.brk_start || want > USER_END {
            return self.brk;
        }
        let new_end = (want + LARGE_PAGE_SIZE - 1) & !(LARGE_PAGE_SIZE - 1);
        let heap_end = self.heap_end.max(self.brk_start);
        if new_end > heap_end {
            if !self.is_free(heap_end, new_end) {
                return self.brk;
            }
            let rw = Access { read: true, write: true, exec: false };
            if self.map_fixed(heap_end, new_end - heap_end, rw).is_err() {
                return self.brk;
            }
            self.maps.label(heap_end, new_end, false, &Backing::Heap);
            self.heap_end = new_end;
        } else if new_end < heap_end && new_end >= self.brk_start {
            let from = new_end.max(page_up(self.brk_start));
            self.unmap(from, heap_end - from, freed);
            self.heap_end = from;
        }
        self.brk = want;
        want
    }

    /// mremap without MREMAP_FIXED: shrink in place, grow in place when the
    /// space after is free, else move (with MREMAP_MAYMOVE) by copying.
    pub fn mremap(
        &mut self,
        old: u64,
        old_len: u64,
        new_len: u64,
        may_move: bool,
        freed: &mut Freed,
    ) -> Result<u64, Errno> {
        let (old_len, new_len) = (page_up(old_len), page_up(new_len));
        if !old.is_multiple_of(PAGE_SIZE)
            || new_len == 0
            || !in_user_range(old, old_len.max(new_len))
        {
            return Err(EINVAL);
        }
        if !self.is_covered(old, old + old_len) {
            return Err(EFAULT);
        }
        self.settle_on_demand(old, old + old_len.max(new_len))?;
        if !self.shared_in(old, old + old_len).is_empty() || self.attached_in(old, old + old_len) {
            // Moving or growing a shared file mapping is not supported.
            return Err(EINVAL);
        }
        if new_len <= old_len {
            self.unmap(old + new_len, old_len - new_len, freed);
            return Ok(old);
        }
        // The old mapping's access as asked for (the page tables have no
        // "not executable" for what the program never made executable).
        let access = self.maps.at(old).map_or_else(|| self.access_at(old), |(_, m)| m.access);
        // What the old mapping maps, from its start: the grown or moved one goes on with it.
        let backing = self.maps.at(old).map(|(s, m)| (m.shared, m.backing.advanced(old - s)));
        if self.is_free(old + old_len, old + new_len) {
            self.map_fixed(old + old_len, new_len - old_len, access)?;
            self.merge(old, old + new_len);
            if let Some((shared, b)) = backing {
                self.maps.label(old, old + new_len, shared, &b);
            }
            return Ok(old);
        }
        if !may_move {
            return Err(ENOMEM);
        }
        let rw = Access { read: true, write: true, exec: false };
        let to = self.mmap(0, new_len, rw, MapHow::default(), freed)?;
        self.copy(old, to, old_len);
        self.pages.mark_dirty(to, to + old_len);
        self.pages.protect(to, to + new_len, access).map_err(|_| ENOMEM)?;
        self.maps.protect(to, to + new_len, access);
        if let Some((shared, b)) = backing {
            self.maps.label(to, to + new_len, shared, &b);
        }
        self.unmap(old, old_len, freed);
        Ok(to)
    }

    fn merge(&mut self, start: u64, end: u64) {
        self.unreserve(start, end);
        self.reserve(start, end);
    }

    /// Copies user memory to other user memory, page piece by page piece.
    fn copy(&self, from: u64, to: u64, len: u64) {
        let mut done = 0;
        while done < len {
            let copied =
                UserSpace::copy(&self.pages, from + done, &self.pages, to + done, len - done);
            // A page with no memory (PROT_NONE) stays as it is.
            done += copied.unwrap_or(PAGE_SIZE);
        }
    }

    /// madvise(MADV_DONTNEED): the range reads as zero afterwards. Only
    /// pages written since they were mapped or last zeroed are zeroed (a
    /// thread's 8 MiB stack is mostly untouched); the caller flushes TLBs
    /// and the host's mirror so that later writes mark pages again.
    /// Shared file pages keep their bytes (as the file would); a page that
    /// shares its frame with another address space gets a zeroed frame of
    /// its own (the old one goes to `freed`). ENOMEM when one cannot (the
    /// enclave is out of memory): the rest of the range stays as it was.
    pub fn zero(&mut self, start: u64, len: u64, freed: &mut Freed) -> Result<(), Errno> {
        let end = start.saturating_add(page_up(len)).min(USER_END);
        self.own_pages(start, end, true, freed)?;
        let mut at = start;
        let mut keep = self.shared_in(start, end);
        keep.extend(
            self.attached
                .range(..end)
                .filter(|(_, a)| a.end > start)
                .map(|(&s, a)| (s.max(start), a.end.min(end))),
        );
        keep.sort_unstable();
        for (s, e) in keep.into_iter().chain([(end, end)]) {
            if at < s {
                self.pages.zero_written(at, s);
            }
            at = at.max(e);
        }
        Ok(())
    }

    /// Gives each 4 KiB page of [start, end) whose frame another address
    /// space may hold too (a fork shared it) a frame of its own: a copy, or
    /// zeroed if `zeroed`. The old frames go to `freed` (their other
    /// holders keep them). Shared files' and XEMEM attachments' pages are
    /// meant to be shared and stay as they are.
    pub fn own_pages(
        &mut self,
        start: u64,
        end: u64,
        zeroed: bool,
        freed: &mut Freed,
    ) -> Result<(), Errno> {
        for (va, _) in self.shared_pages(start, end) {
            let frame = if zeroed { Frames::alloc_zeroed(1, 1) } else { Frames::alloc(1, 1) };
            let frame = frame.ok_or(ENOMEM)?;
            let replaced = if zeroed {
                self.pages.replace_frame(va, frame)
            } else {
                self.pages.replace_frame_copying(va, frame)
            };
            // Err cannot happen under the lock (the walk just saw it); the
            // new frame then goes with it.
            let Ok(old) = replaced else { continue };
            freed.push(old);
            // Cores and the host's mirror must drop the old translation.
            self.removals += 1;
        }
        Ok(())
    }

    /// The (address, frame) of each page of [start, end) that `own_pages`
    /// would give a frame of its own.
    pub fn shared_pages(&mut self, start: u64, end: u64) -> Vec<(u64, u64)> {
        // Only read-only 4 KiB pages are shared (some may be PROT_NONE now);
        // a pin's hold is not a fork's.
        let mut pages = self.pages.shared_pages(start, end);
        pages.retain(|&(va, frame)| {
            self.shared_end(va).or_else(|| self.attached_end(va)).is_none()
                && !pins::is_pinned(frame)
        });
        pages
    }

    /// A forked child's address space before its pages are copied in
    /// (`copy_pages_to`): the same reserved ranges, no memory yet.
    pub fn fork_shell(&self) -> Result<AddressSpace, Errno> {
        let mut child = AddressSpace::new(self.brk_start)?;
        child.brk = self.brk;
        child.heap_end = self.heap_end;
        child.large_mappings = self.large_mappings;
        child.small_only = self.small_only.clone();
        child.ranges = self.ranges.clone();
        child.grows = self.grows;
        child.maps = self.maps.clone();
        // Attachments are not inherited: the child has the range, empty.
        for (&s, a) in &self.attached {
            child.maps.set(s, a.end, Access::NONE, false, Backing::Anonymous);
        }
        Ok(child)
    }

    /// A forked child that will never run gives back the memory its copy
    /// got so far, at once (the copy ran out of memory, and the parent goes
    /// on); its page tables go when it is freed. No thread or call of its
    /// ever used these pages, so nothing need be waited for.
    pub fn drop_pages(&mut self) {
        let mut freed = Freed::new();
        self.grows = None;
        self.unmap(USER_START, USER_END - USER_START, &mut freed);
        drop(freed);
    }

    /// Gives `child` (a `fork_shell` of this space) a copy of every page
    /// (same sizes and protections, each page's bytes copied), except that
    /// shared file pages are the same pages in both, and so are read-only
    /// 4 KiB pages until one of the two writes or zeroes its page
    /// (`own_pages`). PROT_NONE pages come
    /// back zeroed when made accessible, as untouched ones would. ENOMEM
    /// when the enclave runs out: `child` then holds part of the pages,
    /// which its release lets go.
    pub fn copy_pages_to(&self, child: &mut AddressSpace, share: bool) -> Result<(), Errno> {
        // The heap above the break, which brk maps up to a 2 MiB boundary
        // and the program has not asked for: the child starts without it, as
        // on Linux, where nothing is mapped there, and brk maps it again if
        // the child's heap grows (most of a small program's pages).
        let tail = self.heap_tail();
        if tail.0 < tail.1 {
            child.unreserve(tail.0, tail.1);
            child.maps.remove(tail.0, tail.1);
            child.heap_end = tail.0;
        }
        self.share_file_pages_with(child)?;
        self.copy_private_pages_to(child, tail, share)
    }

    /// [page above the break, heap end), from a 2 MiB boundary if a 2 MiB
    /// page holds the break.
    fn heap_tail(&self) -> (u64, u64) {
        let mut from = page_up(self.brk.max(self.brk_start));
        if self.translate(from).is_some_and(|t| t.page_size == LARGE_PAGE_SIZE) {
            from = from.next_multiple_of(LARGE_PAGE_SIZE);
        }
        (from, self.heap_end.max(from))
    }

    /// The shared file pages, the same frames in `child` (a `fork_shell`).
    fn share_file_pages_with(&self, child: &mut AddressSpace) -> Result<(), Errno> {
        for (&start, r) in &self.shared {
            let pages = (start..r.end).step_by(PAGE_SIZE as usize);
            let indices = pages.clone().map(|va| r.first_page + (va - start) / PAGE_SIZE);
            let mut frames: Vec<Option<Frames>> = Vec::new();
            for i in indices {
                match r.file.hold_existing(i) {
                    Ok(frame) => frames.push(frame),
                    Err(e) => {
                        // Let go of what was held: the child has no range here.
                        let held = frames.iter().enumerate().filter(|(_, f)| f.is_some());
                        held.for_each(|(j, _)| r.file.release(r.first_page + j as u64));
                        return Err(e);
                    }
                }
            }
            // Every page is held before any is mapped: the child's release
            // lets each go once, whatever fails below. The parent writes
            // these frames back to the file; the child does not again.
            child.shared.insert(start, SharedRange { write_back: None, ..r.clone() });
            for (va, frame) in pages.zip(frames) {
                let Some(frame) = frame else { continue };
                let access = self.translate(va).map_or(Access::NONE, |t| Access {
                    read: true,
                    write: t.writable,
                    exec: t.executable,
                });
                child.map_page(va, frame, access).map_err(|_| ENOMEM)?;
            }
        }
        Ok(())
    }

    /// The walk of `copy_pages_to`: read-only 4 KiB pages are shared with
    /// `child` if `share` (each space then holds the frame), the others
    /// copied.
    fn copy_private_pages_to(
        &self,
        child: &mut AddressSpace,
        skip: (u64, u64),
        share: bool,
    ) -> Result<(), Errno> {
        for (&start, &end) in &self.ranges {
            let mut va = start;
            while va < end {
                if (skip.0..skip.1).contains(&va) {
                    va = skip.1;
                    continue;
                }
                if let Some(end) = self.shared_end(va).or_else(|| self.attached_end(va)) {
                    // Attachments are not inherited: the child's range is empty.
                    va = end;
                    continue;
                }
                let Some(t) = self.translate(va) else {
                    va = self.pages.next_mapped(va, end).unwrap_or(end);
                    continue;
                };
                let size = t.page_size;
                let access = Access { read: true, write: t.writable, exec: t.executable };
                let frame = t.phys & !(PAGE_SIZE - 1);
                // A read-only page is made writable only after it gets a
                // frame of its own; an exported one may be written by
                // whoever attached it.
                let shareable =
                    share && size == PAGE_SIZE && !t.writable && !pins::is_pinned(frame);
                let held = if shareable { self.pages.share_frame(va) } else { None };
                if let Some(held) = held {
                    let page = va & !(PAGE_SIZE - 1);
                    child.map_page(page, held, access).map_err(|_| ENOMEM)?;
                    // It holds data: MADV_DONTNEED must zero (own) it.
                    child.pages.mark_dirty(page, page + PAGE_SIZE);
                    va = page + PAGE_SIZE;
                    continue;
                }
                let frames = size / PAGE_SIZE;
                // Every byte is copied over: no need to zero it first.
                let frame = Frames::alloc(frames, frames).ok_or(ENOMEM)?;
                let page = va & !(size - 1);
                child.map_page(page, frame, access)?;
                self.pages.copy_page_to(page, &mut child.pages, size).map_err(|_| EFAULT)?;
                child.pages.mark_dirty(page, page + size);
                va = page + size;
            }
        }
        Ok(())
    }

    /// Maps `runs` (in order) as XEMEM attachment `id`: at `hint` if given
    /// (it must be free), else where the runs' 2 MiB pieces can be 2 MiB
    /// pages. They are lent leaves: never freed here.
    pub fn attach(
        &mut self,
        hint: u64,
        len: u64,
        runs: &[HostPages],
        access: Access,
        id: u64,
    ) -> Result<u64, Errno> {
        let phase = runs.first().map_or(0, |r| r.phys() % LARGE_PAGE_SIZE);
        let at = if hint != 0 {
            let free = hint.is_multiple_of(PAGE_SIZE)
                && in_user_range(hint, len)
                && self.is_free(hint, hint + len);
            free.then_some(hint).ok_or(EINVAL)?
        } else {
            self.free_range(len, LARGE_PAGE_SIZE, phase).ok_or(ENOMEM)?
        };
        self.reserve(at, at + len);
        self.maps.set(at, at + len, access, true, Backing::Xemem);
        self.attached.insert(at, Attached { end: at + len, id, writable: access.write });
        let mut va = at;
        for run in runs {
            let mut off = 0;
            while off < run.len() {
                let phys = run.phys() + off;
                let large = va.is_multiple_of(LARGE_PAGE_SIZE)
                    && phys.is_multiple_of(LARGE_PAGE_SIZE)
                    && run.len() - off >= LARGE_PAGE_SIZE;
                let mapped = self.pages.map_lent(va, run, off, large, access);
                let Ok(table) = mapped else {
                    self.unmap(at, len, &mut Freed::new());
                    return Err(ENOMEM);
                };
                self.unlinked.extend(table);
                let step = if large { LARGE_PAGE_SIZE } else { PAGE_SIZE };
                (va, off) = (va + step, off + step);
            }
        }
        Ok(at)
    }

    /// Unmaps the attachment that starts at `start`: its id.
    pub fn detach(&mut self, start: u64) -> Option<u64> {
        let a = *self.attached.get(&start)?;
        self.unmap(start, a.end - start, &mut Freed::new());
        Some(a.id)
    }

    /// Unmaps every piece of attachment `id` (revoked by the host); false
    /// if it has none here.
    pub fn revoke(&mut self, id: u64) -> bool {
        self.removals += 1;
        let mine: Vec<(u64, u64)> =
            self.attached.iter().filter(|(_, a)| a.id == id).map(|(&s, a)| (s, a.end)).collect();
        for &(s, e) in &mine {
            self.unattach(s, e);
            self.maps.protect(s, e, Access::NONE);
        }
        !mine.is_empty()
    }

    fn attached_end(&self, va: u64) -> Option<u64> {
        self.attached.range(..=va).next_back().map(|(_, a)| a.end).filter(|&end| end > va)
    }

    fn attached_in(&self, start: u64, end: u64) -> bool {
        self.attached.range(..end).any(|(_, a)| a.end > start)
    }

    /// Drops the attachments' page-table entries in [start, end), keeping
    /// their frames, and what is left of each outside it.
    fn unattach(&mut self, start: u64, end: u64) {
        let hits: Vec<(u64, Attached)> = self
            .attached
            .range(..end)
            .filter(|(_, a)| a.end > start)
            .map(|(&s, &a)| (s, a))
            .collect();
        for (s, a) in hits {
            self.attached.remove(&s);
            let (lo, hi) = (s.max(start), a.end.min(end));
            // A 2 MiB page cut at the edge is split first; lent leaves hand
            // nothing back.
            let _ = self.pages.unmap(lo, hi, drop);
            if s < lo {
                self.attached.insert(s, Attached { end: lo, ..a });
            }
            if hi < a.end {
                self.attached.insert(hi, a);
            }
        }
    }

    /// A hold on every frame of [start, start + len), as runs of
    /// contiguous frames (EFAULT if a page has none of its own).
    pub fn hold_range(&self, start: u64, len: u64) -> Result<Vec<Frames>, Errno> {
        self.pages.share_range(start, len).map_err(|_| EFAULT)
    }

    /// At the program's end: its shared pages are no longer its own (a
    /// System V segment counts one attach fewer, as on Linux at exit); the
    /// frames nobody holds any more are freed with the rest, once the host
    /// has let go of its mirror.
    pub fn detach_shared(&mut self) {
        let mut freed = core::mem::take(&mut self.deferred);
        self.unshare(USER_START, USER_END, &mut freed);
        self.deferred = freed;
        // An ended program's maps file is empty, as on Linux.
        self.maps = Maps::new();
    }

    /// Frees everything, every frame and table; maps nothing afterwards.
    /// Panics (a contained LWK crash) rather than free tables a CPU still
    /// runs on, which would reset the whole machine.
    pub fn release(&mut self) {
        assert!(
            !self.pages.loaded_anywhere(),
            "page tables at {:#x} freed while a CPU still has them loaded",
            self.pages.tables().phys()
        );
        let mut freed = core::mem::take(&mut self.deferred);
        freed.append(&mut self.unlinked);
        self.unshare(USER_START, USER_END, &mut freed);
        self.unattach(USER_START, USER_END);
        drop(freed);
        self.pages.destroy(drop);
        self.ranges.clear();
        self.maps = Maps::new();
    }
}
