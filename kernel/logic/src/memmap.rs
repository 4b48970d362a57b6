//! Range arithmetic for boot memory maps.
//!
//! Firmware memory maps come unsorted, overlapping and fragmented; the
//! kernel builds its view of usable RAM by adding the usable entries and
//! removing everything reserved, then rounding to frame boundaries.
//! [`RangeSet`] does that in a fixed array, without a heap.

/// Capacity of a [`RangeSet`].
pub const MAX_RANGES: usize = 64;

/// Half-open address range `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    /// First address in the range.
    pub start: u64,
    /// First address past the range.
    pub end: u64,
}

impl Range {
    const EMPTY: Range = Range { start: 0, end: 0 };

    fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// The operation would need more than [`MAX_RANGES`] disjoint ranges; the
/// set was left unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeSetFull;

/// A set of addresses stored as sorted, disjoint, non-adjacent ranges.
#[derive(Clone, Debug)]
pub struct RangeSet {
    ranges: [Range; MAX_RANGES],
    len: usize,
}

impl Default for RangeSet {
    fn default() -> Self {
        Self::new()
    }
}

impl RangeSet {
    /// The empty set.
    pub const fn new() -> Self {
        Self { ranges: [Range::EMPTY; MAX_RANGES], len: 0 }
    }

    /// Adds `[start, end)`, merging with overlapping or adjacent ranges.
    /// Empty ranges are ignored.
    pub fn add(&mut self, start: u64, end: u64) -> Result<(), RangeSetFull> {
        if start >= end {
            return Ok(());
        }
        // Ranges [first, past) touch the new one and merge into it.
        let first = self.ranges().iter().take_while(|r| r.end < start).count();
        let past = first + self.ranges()[first..].iter().take_while(|r| r.start <= end).count();
        let mut merged = Range { start, end };
        if first < past {
            merged.start = merged.start.min(self.ranges[first].start);
            merged.end = merged.end.max(self.ranges[past - 1].end);
        }
        self.splice(first, past, &[merged])
    }

    /// Removes `[start, end)`, cutting or splitting the ranges it touches.
    pub fn remove(&mut self, start: u64, end: u64) -> Result<(), RangeSetFull> {
        if start >= end {
            return Ok(());
        }
        // Ranges [first, past) overlap the removed one.
        let first = self.ranges().iter().take_while(|r| r.end <= start).count();
        let past = first + self.ranges()[first..].iter().take_while(|r| r.start < end).count();
        if first == past {
            return Ok(());
        }
        let mut keep = [Range::EMPTY; 2];
        let mut kept = 0;
        let (lo, hi) = (self.ranges[first], self.ranges[past - 1]);
        if lo.start < start {
            keep[kept] = Range { start: lo.start, end: start };
            kept += 1;
        }
        if hi.end > end {
            keep[kept] = Range { start: end, end: hi.end };
            kept += 1;
        }
        self.splice(first, past, &keep[..kept])
    }

    /// Replaces `ranges[from..to]` with `with`, or fails without change.
    fn splice(&mut self, from: usize, to: usize, with: &[Range]) -> Result<(), RangeSetFull> {
        let new_len = self.len - (to - from) + with.len();
        if new_len > MAX_RANGES {
            return Err(RangeSetFull);
        }
        // Move the tail into place, then fill the gap.
        self.ranges.copy_within(to..self.len, from + with.len());
        self.ranges[from..from + with.len()].copy_from_slice(with);
        self.len = new_len;
        Ok(())
    }

    fn ranges(&self) -> &[Range] {
        &self.ranges[..self.len]
    }

    /// The ranges, in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = Range> + '_ {
        self.ranges().iter().copied()
    }

    /// Total bytes covered.
    pub fn total(&self) -> u64 {
        self.iter().map(|r| r.len()).sum()
    }

    /// Whether every address of `[start, end)` is in the set (true for an
    /// empty range). Ranges are merged, so it must lie in a single one.
    pub fn contains(&self, start: u64, end: u64) -> bool {
        start >= end || self.iter().any(|r| r.start <= start && end <= r.end)
    }

    /// Shrinks every range to `align` boundaries (a power of two), dropping
    /// ranges with no whole aligned block. Used to keep only whole frames or
    /// large pages of usable memory.
    pub fn align_inward(&mut self, align: u64) {
        assert!(align.is_power_of_two(), "alignment must be a power of two");
        let mask = align - 1;
        let mut kept = 0;
        for i in 0..self.len {
            let r = self.ranges[i];
            let Some(start) = r.start.checked_add(mask).map(|s| s & !mask) else {
                continue;
            };
            let end = r.end & !mask;
            if start < end {
                self.ranges[kept] = Range { start, end };
                kept += 1;
            }
        }
        self.len = kept;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ranges: &[(u64, u64)]) -> RangeSet {
        let mut s = RangeSet::new();
        for &(a, b) in ranges {
            s.add(a, b).unwrap();
        }
        s
    }

    fn pairs(s: &RangeSet) -> Vec<(u64, u64)> {
        s.iter().map(|r| (r.start, r.end)).collect()
    }

    #[test]
    fn add_sorts_and_merges() {
        let s = set(&[(50, 60), (10, 20), (30, 40)]);
        assert_eq!(pairs(&s), [(10, 20), (30, 40), (50, 60)]);
        let mut s2 = s.clone();
        s2.add(15, 35).unwrap();
        assert_eq!(pairs(&s2), [(10, 40), (50, 60)]);
        s2.add(40, 50).unwrap();
        assert_eq!(pairs(&s2), [(10, 60)], "adjacent ranges merge");
        let mut s3 = s.clone();
        s3.add(0, 100).unwrap();
        assert_eq!(pairs(&s3), [(0, 100)]);
        let mut s4 = s.clone();
        s4.add(20, 30).unwrap();
        s4.add(60, 61).unwrap();
        s4.add(5, 5).unwrap();
        assert_eq!(pairs(&s4), [(10, 40), (50, 61)]);
        assert_eq!(s4.total(), 41);
    }

    #[test]
    fn remove_hole_splits() {
        let mut s = set(&[(0, 100)]);
        s.remove(40, 60).unwrap();
        assert_eq!(pairs(&s), [(0, 40), (60, 100)]);
        s.remove(0, 10).unwrap();
        s.remove(90, 200).unwrap();
        s.remove(200, 300).unwrap();
        assert_eq!(pairs(&s), [(10, 40), (60, 90)]);
        assert_eq!(s.total(), 60);
    }

    #[test]
    fn remove_spanning_several_ranges() {
        let mut s = set(&[(0, 10), (20, 30), (40, 50), (60, 70)]);
        s.remove(5, 45).unwrap();
        assert_eq!(pairs(&s), [(0, 5), (45, 50), (60, 70)]);
        s.remove(0, 70).unwrap();
        assert_eq!(pairs(&s), []);
        assert_eq!(s.total(), 0);
    }

    #[test]
    fn contains_needs_full_coverage() {
        let s = set(&[(0, 10), (10, 20), (30, 40)]);
        assert!(s.contains(0, 20));
        assert!(s.contains(32, 40));
        assert!(!s.contains(15, 35));
        assert!(!s.contains(40, 41));
        assert!(s.contains(25, 25));
    }

    #[test]
    fn align_inward_shrinks_and_drops() {
        let mut s =
            set(&[(0x500, 0x3800), (0x4100, 0x4f00), (0x6000, 0x8000), (u64::MAX - 5, u64::MAX)]);
        s.align_inward(0x1000);
        assert_eq!(pairs(&s), [(0x1000, 0x3000), (0x6000, 0x8000)]);
    }

    #[test]
    fn full_set_reports_and_stays_unchanged() {
        let mut s = RangeSet::new();
        for i in 0..MAX_RANGES as u64 {
            s.add(i * 10, i * 10 + 5).unwrap();
        }
        let before = pairs(&s);
        assert_eq!(s.add(1000, 1001), Err(RangeSetFull));
        assert_eq!(s.remove(1, 2), Err(RangeSetFull), "splitting needs a slot");
        assert_eq!(pairs(&s), before);
        s.add(5, 10).unwrap(); // merging frees a slot
        s.remove(1, 2).unwrap();
        assert_eq!(s.iter().count(), MAX_RANGES);
    }
}
