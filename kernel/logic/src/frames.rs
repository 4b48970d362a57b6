//! Physical frame allocator over possibly non-contiguous memory regions.
//!
//! Each region owns caller-provided metadata (`meta_words`): a bitmap (1 bit
//! per 4 KiB frame, set = used) and, per frame, how many holders it has
//! besides its first (16 bits each), so the allocator needs no heap and its
//! metadata size is chosen by whoever sets it up at boot. A frame is freed
//! when its last holder lets go (`release`). Regions are kept sorted by base
//! address, which makes "first fit" mean "lowest address that fits".

use crate::bitmap;

/// Size of one physical frame.
pub const FRAME_SIZE: u64 = 4096;
/// Maximum number of regions one allocator can manage.
pub const MAX_REGIONS: usize = 64;

/// Holders a frame may have besides its first.
pub const MAX_EXTRA_HOLDERS: u64 = u16::MAX as u64;

/// Number of `u64` bitmap words needed to track `frames` frames.
pub fn bitmap_words(frames: u64) -> usize {
    frames.div_ceil(64) as usize
}

/// Number of `u64` metadata words a region of `frames` frames needs: its
/// bitmap, then four 16-bit holder counts a word.
pub fn meta_words(frames: u64) -> usize {
    bitmap_words(frames) + frames.div_ceil(4) as usize
}

/// Why [`FrameAllocator::add_region`] refused a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// All [`MAX_REGIONS`] slots are in use.
    TooManyRegions,
    /// The region intersects one added earlier.
    Overlap,
    /// The base is not 4 KiB aligned, or the region runs past 2^64.
    Misaligned,
    /// The metadata has fewer than [`meta_words`]`(frames)` words.
    BitmapTooSmall,
}

/// Why [`FrameAllocator::share`] gave no more holders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareError {
    /// Some of the frames are not allocated, or not in one region.
    NotAllocated,
    /// Some frame has [`MAX_EXTRA_HOLDERS`] other holders already.
    TooManyHolders,
}

/// Why [`FrameAllocator::remove_region`] kept a region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoveError {
    /// No region starts there.
    NoSuchRegion,
    /// Some of its frames are allocated.
    InUse,
}

/// One contiguous run of physical frames and its usage bitmap.
struct Region {
    base: u64,
    frames: u64,
    free: u64,
    bitmap: &'static mut [u64],
    /// Holders of each frame besides its first, four 16-bit counts a word.
    extra: &'static mut [u64],
    /// Every frame below it is in use: searches start there (the kernel's
    /// heap and the oldest allocations fill the bottom of a region, which a
    /// search from 0 would step over every time).
    low: u64,
}

impl Region {
    fn end(&self) -> u64 {
        self.base + self.frames * FRAME_SIZE
    }

    /// Frame number (physical address / 4 KiB) of the region's first frame.
    fn first_pfn(&self) -> u64 {
        self.base / FRAME_SIZE
    }

    fn extra(&self, i: u64) -> u64 {
        (self.extra[(i / 4) as usize] >> (16 * (i % 4))) & 0xffff
    }

    fn set_extra(&mut self, i: u64, n: u64) {
        let shift = 16 * (i % 4);
        let word = &mut self.extra[(i / 4) as usize];
        *word = (*word & !(0xffff << shift)) | (n << shift);
    }

    /// Frees frames [from, to) of the region (indices), all allocated.
    fn free_indices(&mut self, from: u64, to: u64) {
        bitmap::clear_range(self.bitmap, from, to);
        self.free += to - from;
        self.low = self.low.min(from);
    }

    /// First-fit search for `count` free frames whose frame number is a
    /// multiple of `align`; returns the index within the region.
    fn find_run(&self, count: u64, align: u64) -> Option<u64> {
        let pfn = self.first_pfn();
        // Smallest index >= `from` whose physical frame number is aligned.
        let aligned_from = |from: u64| (pfn + from).next_multiple_of(align) - pfn;
        let mut start = aligned_from(self.low);
        loop {
            // Skip used frames a word at a time, then realign.
            let free = bitmap::first_clear(self.bitmap, start, self.frames)?;
            start = aligned_from(free);
            let end = start.checked_add(count)?;
            if end > self.frames {
                return None;
            }
            match bitmap::first_set(self.bitmap, start, end) {
                None => return Some(start),
                // No candidate can include `used`: move past it.
                Some(used) => start = aligned_from(used + 1),
            }
        }
    }
}

/// Allocator of contiguous, aligned runs of physical frames.
pub struct FrameAllocator {
    /// Regions sorted by base; only the first `count` are `Some`.
    regions: [Option<Region>; MAX_REGIONS],
    count: usize,
    /// Extra holders over all frames: while 0, `release` frees at once.
    extra_holders: u64,
}

impl Default for FrameAllocator {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameAllocator {
    /// An allocator with no memory.
    pub const fn new() -> Self {
        Self { regions: [const { None }; MAX_REGIONS], count: 0, extra_holders: 0 }
    }

    fn iter(&self) -> impl Iterator<Item = &Region> + '_ {
        self.regions[..self.count].iter().flatten()
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut Region> + '_ {
        self.regions[..self.count].iter_mut().flatten()
    }

    /// Adds `frames` frames starting at `base`, all initially free.
    ///
    /// The first [`meta_words`]`(frames)` words of `meta` are overwritten. Bits past the last frame are marked used so that word
    /// scans never see them as free. An empty region is accepted and ignored.
    pub fn add_region(
        &mut self,
        base: u64,
        frames: u64,
        meta: &'static mut [u64],
    ) -> Result<(), FrameError> {
        if !base.is_multiple_of(FRAME_SIZE) {
            return Err(FrameError::Misaligned);
        }
        let end = frames
            .checked_mul(FRAME_SIZE)
            .and_then(|len| base.checked_add(len))
            .ok_or(FrameError::Misaligned)?;
        let words = bitmap_words(frames);
        if meta.len() < meta_words(frames) {
            return Err(FrameError::BitmapTooSmall);
        }
        if frames == 0 {
            return Ok(());
        }
        if self.iter().any(|r| r.base < end && base < r.end()) {
            return Err(FrameError::Overlap);
        }
        if self.count == MAX_REGIONS {
            return Err(FrameError::TooManyRegions);
        }
        let (bitmap, extra) = meta[..meta_words(frames)].split_at_mut(words);
        bitmap.fill(0);
        extra.fill(0);
        bitmap::set_range(bitmap, frames, words as u64 * 64);

        let at = self.iter().take_while(|r| r.base < base).count();
        self.regions[at..=self.count].rotate_right(1);
        self.regions[at] = Some(Region { base, frames, free: frames, bitmap, extra, low: 0 });
        self.count += 1;
        Ok(())
    }

    /// Marks every frame touching `[phys, phys + frames * 4 KiB)` as used.
    ///
    /// For memory the allocator must never hand out (kernel image, its own
    /// bitmaps, firmware data). Reserving used frames again is harmless, and
    /// parts outside every region are ignored.
    pub fn reserve(&mut self, phys: u64, frames: u64) {
        let start = phys - phys % FRAME_SIZE;
        let end = phys.saturating_add(frames.saturating_mul(FRAME_SIZE));
        for r in self.iter_mut() {
            let lo = start.max(r.base);
            let hi = end.min(r.end());
            if lo >= hi {
                continue;
            }
            let from = (lo - r.base) / FRAME_SIZE;
            let to = (hi - r.base).div_ceil(FRAME_SIZE);
            let already = bitmap::count_set(r.bitmap, from, to);
            bitmap::set_range(r.bitmap, from, to);
            r.free -= (to - from) - already;
        }
    }

    /// Allocates `frames` contiguous frames whose physical start is a
    /// multiple of `align_frames * 4 KiB`; returns that address.
    ///
    /// First fit by address. `align_frames` must be a power of two; a
    /// request for zero frames returns `None`.
    pub fn alloc(&mut self, frames: u64, align_frames: u64) -> Option<u64> {
        assert!(align_frames.is_power_of_two(), "alignment must be a power of two");
        if frames == 0 {
            return None;
        }
        for r in self.iter_mut() {
            if r.free < frames {
                continue;
            }
            r.low = bitmap::first_clear(r.bitmap, r.low, r.frames).unwrap_or(r.frames);
            if let Some(index) = r.find_run(frames, align_frames) {
                bitmap::set_range(r.bitmap, index, index + frames);
                r.free -= frames;
                if index == r.low {
                    r.low = index + frames;
                }
                return Some(r.base + index * FRAME_SIZE);
            }
        }
        None
    }

    /// Takes out the region that starts at `base` (memory given back while
    /// the kernel runs) if no frame of it is in use but its first `own`
    /// (where a hot-added region keeps its own bitmap); its bitmap is then
    /// no longer referenced.
    pub fn remove_region(&mut self, base: u64, own: u64) -> Result<(), RemoveError> {
        let at = self.iter().position(|r| r.base == base).ok_or(RemoveError::NoSuchRegion)?;
        let r = self.regions[at].as_ref().ok_or(RemoveError::NoSuchRegion)?;
        let own = own.min(r.frames);
        let in_use = bitmap::count_set(r.bitmap, own, r.frames) > 0
            || bitmap::count_set(r.bitmap, 0, own) != own;
        if in_use {
            return Err(RemoveError::InUse);
        }
        self.regions[at] = None;
        self.regions[at..self.count].rotate_left(1);
        self.count -= 1;
        Ok(())
    }

    /// Returns `frames` frames starting at `phys` to the allocator.
    ///
    /// Panics if any of them is not currently allocated or the run is not
    /// inside one region: a double free is a bug that must be loud, not
    /// silently corrupt the free count.
    pub fn free(&mut self, phys: u64, frames: u64) {
        if frames == 0 {
            return;
        }
        assert!(phys.is_multiple_of(FRAME_SIZE), "freeing unaligned address {phys:#x}");
        let end = phys.checked_add(frames.saturating_mul(FRAME_SIZE));
        let region = self.iter_mut().find(|r| r.base <= phys && end.is_some_and(|e| e <= r.end()));
        let Some(r) = region else {
            panic!("freeing {frames} frames at {phys:#x} outside any region");
        };
        let from = (phys - r.base) / FRAME_SIZE;
        let to = from + frames;
        assert!(
            bitmap::count_set(r.bitmap, from, to) == frames,
            "double free: some of {frames} frames at {phys:#x} are not allocated"
        );
        r.free_indices(from, to);
    }

    /// The region holding all of [phys, phys + frames * 4 KiB), and the
    /// frames' indices in it.
    fn locate(&mut self, phys: u64, frames: u64) -> Option<(&mut Region, u64, u64)> {
        let end = phys.checked_add(frames.checked_mul(FRAME_SIZE)?)?;
        let r = self.iter_mut().find(|r| r.base <= phys && end <= r.end())?;
        let from = (phys - r.base) / FRAME_SIZE;
        Some((r, from, from + frames))
    }

    /// One more holder of each of `frames` allocated frames at `phys`; they
    /// are freed when every holder let go (`release`). Nothing changes on
    /// an error.
    pub fn share(&mut self, phys: u64, frames: u64) -> Result<(), ShareError> {
        if !phys.is_multiple_of(FRAME_SIZE) {
            return Err(ShareError::NotAllocated);
        }
        let (r, from, to) = self.locate(phys, frames).ok_or(ShareError::NotAllocated)?;
        if bitmap::count_set(r.bitmap, from, to) != frames {
            return Err(ShareError::NotAllocated);
        }
        if (from..to).any(|i| r.extra(i) == MAX_EXTRA_HOLDERS) {
            return Err(ShareError::TooManyHolders);
        }
        (from..to).for_each(|i| r.set_extra(i, r.extra(i) + 1));
        self.extra_holders += frames;
        Ok(())
    }

    /// One holder of each of `frames` frames at `phys` lets go: those it
    /// held alone are freed. Panics as `free` does.
    pub fn release(&mut self, phys: u64, frames: u64) {
        if self.extra_holders == 0 {
            return self.free(phys, frames);
        }
        assert!(phys.is_multiple_of(FRAME_SIZE), "releasing unaligned address {phys:#x}");
        let Some((r, from, to)) = self.locate(phys, frames) else {
            panic!("releasing {frames} frames at {phys:#x} outside any region");
        };
        assert!(
            bitmap::count_set(r.bitmap, from, to) == frames,
            "double free: some of {frames} frames at {phys:#x} are not allocated"
        );
        let (mut run, mut let_go) = (from, 0);
        for i in from..to {
            let extra = r.extra(i);
            if extra == 0 {
                continue;
            }
            // Another holder keeps frame i: free the run before it.
            r.set_extra(i, extra - 1);
            let_go += 1;
            if run < i {
                r.free_indices(run, i);
            }
            run = i + 1;
        }
        if run < to {
            r.free_indices(run, to);
        }
        self.extra_holders -= let_go;
    }

    /// True if the frame at `phys` has more than one holder.
    pub fn is_shared(&mut self, phys: u64) -> bool {
        self.extra_holders != 0
            && self.locate(phys - phys % FRAME_SIZE, 1).is_some_and(|(r, i, _)| r.extra(i) > 0)
    }

    /// True if some frame of [phys, phys + frames * 4 KiB) is in a region
    /// and free (parts outside every region do not count).
    pub fn any_free(&self, phys: u64, frames: u64) -> bool {
        let end = phys.saturating_add(frames.saturating_mul(FRAME_SIZE));
        self.iter().any(|r| {
            let (lo, hi) = (phys.max(r.base), end.min(r.end()));
            let (from, to) = ((lo - r.base) / FRAME_SIZE, (hi - r.base).div_ceil(FRAME_SIZE));
            lo < hi && bitmap::count_set(r.bitmap, from, to) < to - from
        })
    }

    /// True if some frame has more than one holder.
    pub fn any_shared(&self) -> bool {
        self.extra_holders != 0
    }

    /// Frames currently free, over all regions.
    pub fn free_frames(&self) -> u64 {
        self.iter().map(|r| r.free).sum()
    }

    /// Frames managed, over all regions (free or not).
    pub fn total_frames(&self) -> u64 {
        self.iter().map(|r| r.frames).sum()
    }

    /// `(base, frames)` of each region, in address order.
    pub fn regions(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.iter().map(|r| (r.base, r.frames))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn leak_bitmap(frames: u64) -> &'static mut [u64] {
        Box::leak(vec![0u64; meta_words(frames)].into_boxed_slice())
    }

    #[test]
    fn a_shared_frame_is_freed_by_its_last_holder() {
        let mut a = with_regions(&[(0x10_0000, 16)]);
        let p = a.alloc(4, 1).unwrap();
        a.share(p + FRAME_SIZE, 2).unwrap();
        a.share(p + 2 * FRAME_SIZE, 1).unwrap();
        assert!(a.is_shared(p + FRAME_SIZE + 5) && !a.is_shared(p));
        // The first holder lets go of all four: only 0 and 3 were its alone.
        a.release(p, 4);
        assert_eq!(a.free_frames(), 14);
        assert_eq!(a.alloc(1, 1), Some(p), "frame 0 is free");
        a.release(p + FRAME_SIZE, 2);
        assert_eq!(a.free_frames(), 14, "frame 1 freed, frame 2 still held");
        assert!(!a.is_shared(p + 2 * FRAME_SIZE) && !a.any_shared());
        a.release(p + 2 * FRAME_SIZE, 1);
        a.free(p, 1);
        assert_eq!(a.free_frames(), 16);
    }

    #[test]
    fn free_frames_are_found_in_a_range_and_outside_ones_ignored() {
        let mut a = with_regions(&[(0x10_0000, 8)]);
        let p = a.alloc(8, 1).unwrap();
        assert!(!a.any_free(0, 0x200), "all allocated, the rest outside");
        a.free(p + 7 * FRAME_SIZE, 1);
        assert!(a.any_free(p + 7 * FRAME_SIZE, 1) && a.any_free(0, 0x200));
        assert!(!a.any_free(p, 7));
    }

    #[test]
    fn sharing_free_or_foreign_frames_is_refused_and_changes_nothing() {
        let mut a = with_regions(&[(0x10_0000, 8), (0x20_0000, 8)]);
        let p = a.alloc(2, 1).unwrap();
        assert_eq!(a.share(p, 3), Err(ShareError::NotAllocated));
        assert_eq!(a.share(0x1f_f000, 1), Err(ShareError::NotAllocated));
        assert_eq!(a.share(0x10_7000, 2), Err(ShareError::NotAllocated), "spans two regions");
        assert_eq!(a.share(p + 1, 1), Err(ShareError::NotAllocated));
        assert!(!a.any_shared());
        for _ in 0..MAX_EXTRA_HOLDERS {
            a.share(p + FRAME_SIZE, 1).unwrap();
        }
        assert_eq!(a.share(p, 2), Err(ShareError::TooManyHolders));
        assert!(!a.is_shared(p), "nothing changed");
        for _ in 0..MAX_EXTRA_HOLDERS {
            a.release(p + FRAME_SIZE, 1);
        }
        a.release(p, 2);
        assert_eq!(a.free_frames(), 16);
    }

    #[test]
    fn a_region_is_removed_only_when_nothing_but_its_bitmap_is_used() {
        let mut a = with_regions(&[(0x10_0000, 64), (0x80_0000, 512)]);
        a.reserve(0x80_0000, 1); // its bitmap, at its start
        let f = a.alloc(8, 1).unwrap();
        assert!(f < 0x80_0000, "first fit takes the low region");
        let big = a.alloc(100, 1).unwrap();
        assert!(big >= 0x80_0000);
        assert_eq!(a.remove_region(0x80_0000, 1), Err(RemoveError::InUse));
        a.free(big, 100);
        assert_eq!(a.remove_region(0x90_0000, 1), Err(RemoveError::NoSuchRegion));
        assert_eq!(a.total_frames(), 576);
        assert_eq!(a.remove_region(0x80_0000, 1), Ok(()));
        assert_eq!(a.total_frames(), 64);
        assert_eq!(a.free_frames(), 56);
        assert!(a.alloc(100, 1).is_none(), "its frames are gone");
        // Added again (a block given back and taken once more), it works.
        a.add_region(0x80_0000, 512, leak_bitmap(512)).unwrap();
        assert!(a.alloc(100, 1).is_some());
        assert_eq!(a.remove_region(0x10_0000, 0), Err(RemoveError::InUse));
    }

    fn with_regions(regions: &[(u64, u64)]) -> FrameAllocator {
        let mut a = FrameAllocator::new();
        for &(base, frames) in regions {
            a.add_region(base, frames, leak_bitmap(frames)).unwrap();
        }
        a
    }

    #[test]
    fn bitmap_word_counts() {
        assert_eq!(bitmap_words(0), 0);
        assert_eq!(bitmap_words(1), 1);
        assert_eq!(bitmap_words(64), 1);
        assert_eq!(bitmap_words(65), 2);
    }

    #[test]
    fn alloc_free_accounting() {
        let mut a = with_regions(&[(0x10_0000, 100)]);
        assert_eq!((a.total_frames(), a.free_frames()), (100, 100));
        let x = a.alloc(1, 1).unwrap();
        let y = a.alloc(10, 1).unwrap();
        assert_eq!(x, 0x10_0000);
        assert_eq!(y, 0x10_1000);
        assert_eq!(a.free_frames(), 89);
        a.free(x, 1);
        assert_eq!(a.free_frames(), 90);
        assert_eq!(a.alloc(1, 1), Some(x), "first fit reuses the hole");
        a.free(y, 10);
        a.free(x, 1);
        assert_eq!(a.free_frames(), 100);
        assert_eq!(a.alloc(0, 1), None);
    }

    #[test]
    fn two_mib_aligned_runs() {
        // 16 MiB starting at an unaligned 4 KiB boundary.
        let mut a = with_regions(&[(MIB + 0x3000, 4096)]);
        let small = a.alloc(1, 1).unwrap();
        assert_eq!(small, MIB + 0x3000);
        let big = a.alloc(512, 512).unwrap();
        assert_eq!(big, 2 * MIB);
        let big2 = a.alloc(512, 512).unwrap();
        assert_eq!(big2, 4 * MIB);
        assert_eq!(a.alloc(3, 4).unwrap() % 0x4000, 0);
        a.free(big, 512);
        assert_eq!(a.alloc(512, 512), Some(big));
    }

    #[test]
    fn non_contiguous_regions_are_sorted_and_used_in_order() {
        let mut a = with_regions(&[(0x800_0000, 8), (0x1000, 4), (0x40_0000, 2)]);
        let regions: Vec<_> = a.regions().collect();
        assert_eq!(regions, [(0x1000, 4), (0x40_0000, 2), (0x800_0000, 8)]);
        assert_eq!(a.total_frames(), 14);
        assert_eq!(a.alloc(3, 1), Some(0x1000));
        assert_eq!(a.alloc(3, 1), Some(0x800_0000), "no region before fits 3 frames");
        assert_eq!(a.alloc(2, 1), Some(0x40_0000));
        assert_eq!(a.alloc(1, 1), Some(0x4000));
        assert_eq!(a.alloc(6, 1), None, "runs never span regions");
        assert_eq!(a.alloc(5, 1), Some(0x800_3000));
        assert_eq!(a.free_frames(), 0);
        assert_eq!(a.alloc(1, 1), None);
    }

    #[test]
    fn add_region_errors() {
        let mut a = with_regions(&[(0x10_0000, 16)]);
        assert_eq!(a.add_region(0x10_0800, 1, leak_bitmap(1)), Err(FrameError::Misaligned));
        assert_eq!(a.add_region(0x10_f000, 2, leak_bitmap(2)), Err(FrameError::Overlap));
        assert_eq!(a.add_region(0xf_f000, 2, leak_bitmap(2)), Err(FrameError::Overlap));
        assert_eq!(a.add_region(0x20_0000, 65, leak_bitmap(64)), Err(FrameError::BitmapTooSmall));
        assert_eq!(a.add_region(u64::MAX - 0xfff, 2, leak_bitmap(2)), Err(FrameError::Misaligned));
        assert_eq!(a.add_region(0xf_f000, 1, leak_bitmap(1)), Ok(()), "adjacent is fine");
        for i in 2..MAX_REGIONS as u64 {
            a.add_region(i << 30, 1, leak_bitmap(1)).unwrap();
        }
        assert_eq!(a.add_region(1 << 50, 1, leak_bitmap(1)), Err(FrameError::TooManyRegions));
        assert_eq!(a.regions().count(), MAX_REGIONS);
    }

    #[test]
    fn reserve_marks_used_and_ignores_outside() {
        let mut a = with_regions(&[(0x10_0000, 16), (0x20_0000, 16)]);
        // Unaligned start touching frames 0..=2 of the first region, plus
        // memory below and between regions that must be ignored.
        a.reserve(0xf_0000, 0x13);
        assert_eq!(a.free_frames(), 29);
        a.reserve(0x10_0000, 2);
        assert_eq!(a.free_frames(), 29, "reserving twice changes nothing");
        a.reserve(0x1f_f000, 3);
        assert_eq!(a.free_frames(), 27);
        assert_eq!(a.alloc(1, 1), Some(0x10_3000));
        a.reserve(0, u64::MAX);
        assert_eq!(a.free_frames(), 0);
    }

    #[test]
    #[should_panic(expected = "double free")]
    fn double_free_panics() {
        let mut a = with_regions(&[(0, 8)]);
        let p = a.alloc(2, 1).unwrap();
        a.free(p, 2);
        a.free(p, 2);
    }

    #[test]
    #[should_panic(expected = "outside any region")]
    fn free_outside_region_panics() {
        let mut a = with_regions(&[(0, 8)]);
        a.free(0x10_0000, 1);
    }

    /// Tiny xorshift64 PRNG so the stress test needs no external crate.
    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Reference model: one bool per frame, brute-force first fit.
    struct Model {
        regions: Vec<(u64, Vec<bool>)>,
    }

    impl Model {
        fn first_fit(&self, count: u64, align: u64) -> Option<u64> {
            for (base, used) in &self.regions {
                let n = used.len() as u64;
                for i in 0..n {
                    let phys = base + i * FRAME_SIZE;
                    if !(phys / FRAME_SIZE).is_multiple_of(align) || i + count > n {
                        continue;
                    }
                    if (i..i + count).all(|j| !used[j as usize]) {
                        return Some(phys);
                    }
                }
            }
            None
        }

        fn mark(&mut self, phys: u64, count: u64, value: bool) {
            let (base, used) = self
                .regions
                .iter_mut()
                .find(|(b, u)| *b <= phys && phys < b + u.len() as u64 * FRAME_SIZE)
                .unwrap();
            let first = (phys - *base) / FRAME_SIZE;
            for j in first..first + count {
                assert_ne!(used[j as usize], value);
                used[j as usize] = value;
            }
        }

        fn free(&self) -> u64 {
            self.regions.iter().map(|(_, u)| u.iter().filter(|x| !**x).count() as u64).sum()
        }
    }

    #[test]
    fn randomized_against_model() {
        let layout = [(0x3000, 300), (0x20_0000, 1500), (0x100_0000, 70), (0x400_0000, 1024)];
        let mut a = with_regions(&layout);
        let mut model =
            Model { regions: layout.iter().map(|&(b, n)| (b, vec![false; n as usize])).collect() };
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        let mut live: Vec<(u64, u64)> = Vec::new();
        for step in 0..20_000 {
            if live.is_empty() || rng.below(100) < 55 {
                let count = match rng.below(10) {
                    0 => 1 + rng.below(600),
                    1..=3 => 1 + rng.below(64),
                    _ => 1 + rng.below(8),
                };
                let align = 1 << rng.below(10);
                let expected = model.first_fit(count, align);
                let got = a.alloc(count, align);
                assert_eq!(got, expected, "step {step}: alloc({count}, {align})");
                if let Some(p) = got {
                    model.mark(p, count, true);
                    live.push((p, count));
                }
            } else {
                let (p, count) = live.swap_remove(rng.below(live.len() as u64) as usize);
                a.free(p, count);
                model.mark(p, count, false);
            }
            assert_eq!(a.free_frames(), model.free());
        }
        for (p, count) in live.drain(..) {
            a.free(p, count);
        }
        assert_eq!(a.free_frames(), a.total_frames());
    }
}
