//! Choosing page sizes to map a physical range (x86-64 4-level paging).
//!
//! Large pages save page-table memory and TLB entries, but a 2 MiB or 1 GiB
//! page needs both its physical and its virtual address aligned to its
//! size. [`plan`] picks, at every step, the largest page that is allowed.

/// x86-64 page sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageSize {
    /// 4 KiB page, mapped by a page-table (PT) entry.
    Size4K,
    /// 2 MiB page, mapped by a page-directory (PD) entry.
    Size2M,
    /// 1 GiB page, mapped by a PDPT entry (needs CPU support).
    Size1G,
}

impl PageSize {
    /// Size of the page in bytes.
    pub const fn bytes(self) -> u64 {
        match self {
            PageSize::Size4K => 1 << 12,
            PageSize::Size2M => 1 << 21,
            PageSize::Size1G => 1 << 30,
        }
    }
}

/// One page to map: `virt -> phys` with the given size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chunk {
    /// Virtual address of the page.
    pub virt: u64,
    /// Physical address of the page.
    pub phys: u64,
    /// Page size; both addresses are aligned to it.
    pub size: PageSize,
}

/// Rounds `x` down to a multiple of `a` (a power of two).
pub fn align_down(x: u64, a: u64) -> u64 {
    debug_assert!(a.is_power_of_two());
    x & !(a - 1)
}

/// Rounds `x` up to a multiple of `a` (a power of two). Panics on overflow.
pub fn align_up(x: u64, a: u64) -> u64 {
    debug_assert!(a.is_power_of_two());
    align_down(x.checked_add(a - 1).expect("align_up overflows u64"), a)
}

/// Iterator over the pages that map a physical range; see [`plan`].
#[derive(Clone, Debug)]
pub struct Plan {
    next: u64,
    end: u64,
    virt_offset: u64,
    allow_1g: bool,
}

impl Iterator for Plan {
    type Item = Chunk;

    fn next(&mut self) -> Option<Chunk> {
        if self.next >= self.end {
            return None;
        }
        let phys = self.next;
        let virt = phys.wrapping_add(self.virt_offset);
        let candidates = [PageSize::Size1G, PageSize::Size2M, PageSize::Size4K];
        let size = candidates
            .into_iter()
            .filter(|s| self.allow_1g || *s != PageSize::Size1G)
            .find(|s| {
                let b = s.bytes();
                phys.is_multiple_of(b) && virt.is_multiple_of(b) && self.end - phys >= b
            })?;
        self.next = phys + size.bytes();
        Some(Chunk { virt, phys, size })
    }
}

/// Pages mapping `[align_down(phys_start, 4K), align_up(phys_end, 4K))` at
/// `virt = phys + virt_offset` (wrapping), greedily using the largest page
/// size that both addresses are aligned to and that fits before the end.
/// 1 GiB pages are only used with `allow_1g`.
pub fn plan(phys_start: u64, phys_end: u64, virt_offset: u64, allow_1g: bool) -> Plan {
    let small = PageSize::Size4K.bytes();
    let end = phys_end
        .checked_add(small - 1)
        .map_or(align_down(u64::MAX, small), |e| align_down(e, small));
    Plan { next: align_down(phys_start, small), end, virt_offset, allow_1g }
}

/// `[pml4, pdpt, pd, pt]` table indices of a virtual address.
pub fn table_indices(virt: u64) -> [usize; 4] {
    let index = |shift: u32| ((virt >> shift) & 0x1ff) as usize;
    [index(39), index(30), index(21), index(12)]
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;
    const MIB2: u64 = 2 << 20;
    const HIGH_HALF: u64 = 0xffff_8000_0000_0000;

    /// Asserts the chunks tile `[start, end)` exactly, in order, with each
    /// chunk aligned on both sides; returns counts of (4K, 2M, 1G) pages.
    fn check_tiling(chunks: &[Chunk], start: u64, end: u64, offset: u64) -> (usize, usize, usize) {
        let mut at = start;
        let mut counts = (0, 0, 0);
        for c in chunks {
            assert_eq!(c.phys, at, "gap or overlap at {at:#x}");
            assert_eq!(c.virt, c.phys.wrapping_add(offset));
            assert_eq!(c.phys % c.size.bytes(), 0);
            assert_eq!(c.virt % c.size.bytes(), 0);
            at += c.size.bytes();
            match c.size {
                PageSize::Size4K => counts.0 += 1,
                PageSize::Size2M => counts.1 += 1,
                PageSize::Size1G => counts.2 += 1,
            }
        }
        assert_eq!(at, end);
        counts
    }

    #[test]
    fn aligned_4g_with_and_without_1g_pages() {
        let with: Vec<_> = plan(0, 4 * GIB, HIGH_HALF, true).collect();
        assert_eq!(with.len(), 4);
        assert!(with.iter().all(|c| c.size == PageSize::Size1G));
        assert_eq!(check_tiling(&with, 0, 4 * GIB, HIGH_HALF), (0, 0, 4));

        let without: Vec<_> = plan(0, 4 * GIB, HIGH_HALF, false).collect();
        assert_eq!(without.len(), 2048);
        assert_eq!(check_tiling(&without, 0, 4 * GIB, HIGH_HALF), (0, 2048, 0));
    }

    #[test]
    fn unaligned_range_mixes_sizes() {
        // Up to 0x4020_0000 no 1 GiB page fits: [0, 1G) starts before the
        // range, [1G, 2G) ends after it.
        let chunks: Vec<_> = plan(0x9f000, 0x4020_0000, 0, true).collect();
        let counts = check_tiling(&chunks, 0x9f000, 0x4020_0000, 0);
        assert_eq!(counts, ((0x20_0000 - 0x9f000) / 4096, 511 + 1, 0));

        // Extending to 2G + 2M + 4K exercises all three sizes.
        let end = 2 * GIB + MIB2 + 0x1000;
        let chunks: Vec<_> = plan(0x9f000, end, HIGH_HALF, true).collect();
        let counts = check_tiling(&chunks, 0x9f000, end, HIGH_HALF);
        assert_eq!(counts, ((0x20_0000 - 0x9f000) / 4096 + 1, 511 + 1, 1));
        assert_eq!(chunks.iter().find(|c| c.size == PageSize::Size1G).unwrap().phys, GIB);
    }

    #[test]
    fn unaligned_bounds_are_rounded_outward() {
        let chunks: Vec<_> = plan(0x1234, 0x3001, 0, true).collect();
        assert_eq!(check_tiling(&chunks, 0x1000, 0x4000, 0), (3, 0, 0));
        assert_eq!(plan(0x5000, 0x5000, 0, true).count(), 0);
    }

    #[test]
    fn virtual_alignment_limits_page_size() {
        // Physically 1G-aligned but shifted by 4 KiB virtually: 4K only.
        let chunks: Vec<_> = plan(GIB, GIB + 4 * MIB2, 0x1000, true).collect();
        assert_eq!(check_tiling(&chunks, GIB, GIB + 4 * MIB2, 0x1000), (2048, 0, 0));
        // Shifted by 2 MiB: 2M pages but never 1G.
        let chunks: Vec<_> = plan(0, 2 * GIB, MIB2, true).collect();
        assert_eq!(check_tiling(&chunks, 0, 2 * GIB, MIB2), (0, 1024, 0));
    }

    #[test]
    fn end_near_top_of_address_space() {
        let chunks: Vec<_> = plan(u64::MAX - 0x2fff, u64::MAX, 0, true).collect();
        assert_eq!(check_tiling(&chunks, u64::MAX - 0x2fff, u64::MAX - 0xfff, 0), (2, 0, 0));
    }

    #[test]
    fn indices_and_alignment_helpers() {
        assert_eq!(table_indices(HIGH_HALF), [256, 0, 0, 0]);
        assert_eq!(table_indices(0xffff_ffff_ffff_f000), [511, 511, 511, 511]);
        assert_eq!(table_indices(GIB + MIB2 * 3 + 0x5000 + 0x123), [0, 1, 3, 5]);
        assert_eq!(align_down(0x1fff, 0x1000), 0x1000);
        assert_eq!(align_up(0x1001, 0x1000), 0x2000);
        assert_eq!(align_up(0x2000, 0x1000), 0x2000);
        assert_eq!(PageSize::Size2M.bytes(), MIB2);
    }
}
