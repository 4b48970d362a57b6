//! Physical frame allocator over possibly non-contiguous memory regions.
//!
//! Each region owns a caller-provided bitmap (1 bit per 4 KiB frame, set =
//! used), so the allocator needs no heap and its metadata size is chosen by
//! whoever sets it up at boot. Regions are kept sorted by base address, which
//! makes "first fit" mean "lowest address that fits".

use crate::bitmap;

/// Size of one physical frame.
pub const FRAME_SIZE: u64 = 4096;
/// Maximum number of regions one allocator can manage.
pub const MAX_REGIONS: usize = 64;

/// Number of `u64` bitmap words needed to track `frames` frames.
pub fn bitmap_words(frames: u64) -> usize {
    frames.div_ceil(64) as usize
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
    /// The bitmap has fewer than [`bitmap_words`]`(frames)` words.
    BitmapTooSmall,
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
}

impl Default for FrameAllocator {
    fn default() -> Self {
        Self::new()
    }
}

impl FrameAllocator {
    /// An allocator with no memory.
    pub const fn new() -> Self {
        Self { regions: [const { None }; MAX_REGIONS], count: 0 }
    }

    fn iter(&self) -> impl Iterator<Item = &Region> + '_ {
        self.regions[..self.count].iter().flatten()
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut Region> + '_ {
        self.regions[..self.count].iter_mut().flatten()
    }

    /// Adds `frames` frames starting at `base`, all initially free.
    ///
    /// The first [`bitmap_words`]`(frames)` words of `bitmap` are
    /// overwritten. Bits past the last frame are marked used so that word
    /// scans never see them as free. An empty region is accepted and ignored.
    pub fn add_region(
        &mut self,
        base: u64,
        frames: u64,
        bitmap: &'static mut [u64],
    ) -> Result<(), FrameError> {
        if !base.is_multiple_of(FRAME_SIZE) {
            return Err(FrameError::Misaligned);
        }
        let end = frames
            .checked_mul(FRAME_SIZE)
            .and_then(|len| base.checked_add(len))
            .ok_or(FrameError::Misaligned)?;
        let words = bitmap_words(frames);
        if bitmap.len() < words {
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
        let bitmap = &mut bitmap[..words];
        bitmap.fill(0);
        bitmap::set_range(bitmap, frames, words as u64 * 64);

        let at = self.iter().take_while(|r| r.base < base).count();
        self.regions[at..=self.count].rotate_right(1);
        self.regions[at] = Some(Region { base, frames, free: frames, bitmap, low: 0 });
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
        bitmap::clear_range(r.bitmap, from, to);
        r.free += frames;
        r.low = r.low.min(from);
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
        Box::leak(vec![0u64; bitmap_words(frames)].into_boxed_slice())
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
