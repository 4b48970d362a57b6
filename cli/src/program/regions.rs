//! The memory regions IOC_RUN asks the LWK for: the program's segments and
//! its loader's (a dynamic program's), rounded out to whole pages, plus the
//! main stack (memory on demand below its first contents); and where brk
//! starts: past the program, as on Linux.

use super::elf::Segment;
use atoll_abi::{
    Region, MAX_REGIONS, MMAP_BASE, PROT_READ, PROT_WRITE, REGION_LOADER, REGION_ON_DEMAND, REGION_PROGRAM,
    REGION_STACK, STACK_SIZE, STACK_TOP, USER_START,
};

pub const PAGE: u64 = 4096;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Page aligned, increasing, never overlapping; the stack is last (two
    /// regions once `with_stack_in_use` has split it).
    pub regions: Vec<Region>,
    /// The first page above every segment: the program's heap grows from here.
    pub brk_start: u64,
}

/// The program area: segments must lie here. Above MMAP_BASE the LWK places
/// anonymous mappings, and the stack is at the top.
pub const PROGRAM_END: u64 = MMAP_BASE;

pub fn stack_region() -> Region {
    Region { flags: REGION_STACK, ..region(STACK_TOP - STACK_SIZE, STACK_TOP, PROT_READ | PROT_WRITE) }
}

/// The regions for the program's `segments` and its loader's `interp`
/// (any order), each segment's pages rounded out. Segments that share a
/// page become one region with the union of their protections; regions
/// that merely touch merge only when their protections are the same, so
/// that read-only and executable pages keep their protection. Each region
/// says whose file it maps, from which offset (for /proc/<pid>/maps).
pub fn layout(segments: &[Segment], interp: &[Segment]) -> Result<Layout, String> {
    let mut spans = Vec::with_capacity(segments.len() + interp.len());
    let program = segments.iter().map(|s| (s, REGION_PROGRAM));
    for (s, file) in program.chain(interp.iter().map(|s| (s, REGION_LOADER))) {
        let start = s.addr & !(PAGE - 1);
        let end = s.addr.checked_add(s.memsz).and_then(page_up);
        match end {
            Some(end) if start >= USER_START && end <= PROGRAM_END => {
                let offset = s.offset.saturating_sub(s.addr - start);
                spans.push((start, end, s.prot, file, offset))
            }
            _ => {
                return Err(format!(
                    "has a segment ({}) at {:#x}-{:#x}, outside the area where an enclave loads programs \
                     ({USER_START:#x}-{PROGRAM_END:#x})",
                    s.index,
                    s.addr,
                    s.addr.saturating_add(s.memsz)
                ))
            }
        }
    }
    spans.sort_unstable();

    let mut regions: Vec<Region> = Vec::new();
    for (start, end, prot, flags, offset) in spans {
        match regions.last_mut() {
            Some(last) if start < last.start + last.size || (start == last.start + last.size && prot == last.prot) => {
                last.size = end.max(last.start + last.size) - last.start;
                last.prot |= prot;
            }
            _ => regions.push(Region { flags, offset, ..region(start, end, prot) }),
        }
    }
    let brk_start = segments.iter().filter_map(|s| page_up(s.addr + s.memsz)).max().unwrap_or(USER_START);

    // Two more for the stack (see `with_stack_in_use`).
    if regions.len() + 2 > MAX_REGIONS {
        return Err(format!(
            "needs {} memory regions for its segments; an enclave program can have at most {}",
            regions.len(),
            MAX_REGIONS - 2
        ));
    }
    regions.push(stack_region());
    Ok(Layout { regions, brk_start })
}

impl Layout {
    /// The stack's first contents start at `sp`: memory from that page up,
    /// the rest of the stack on demand (the LWK gives it when touched, so
    /// a start zeroes, and a fork copies, only what the program uses).
    pub fn with_stack_in_use(mut self, sp: u64) -> Self {
        let in_use = sp & !(PAGE - 1);
        let stack = self.regions.pop().expect("the stack region is last");
        debug_assert_eq!(stack, stack_region());
        if in_use > stack.start {
            let lower = Region { flags: REGION_ON_DEMAND | REGION_STACK, ..region(stack.start, in_use, stack.prot) };
            let upper = Region { flags: REGION_STACK, ..region(in_use, STACK_TOP, stack.prot) };
            self.regions.extend([lower, upper]);
        } else {
            self.regions.push(stack);
        }
        self
    }
}

fn page_up(addr: u64) -> Option<u64> {
    addr.checked_add(PAGE - 1).map(|a| a & !(PAGE - 1))
}

fn region(start: u64, end: u64, prot: u32) -> Region {
    Region { start, size: end - start, prot, flags: 0, offset: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atoll_abi::{PROT_EXEC, USER_END};

    const R: u32 = PROT_READ;
    const RW: u32 = PROT_READ | PROT_WRITE;
    const RX: u32 = PROT_READ | PROT_EXEC;

    fn seg(index: usize, addr: u64, memsz: u64, prot: u32) -> Segment {
        Segment { index, offset: 0, filesz: 0, addr, memsz, prot }
    }

    fn spans(layout: &Layout) -> Vec<(u64, u64, u32)> {
        layout.regions.iter().map(|r| (r.start, r.start + r.size, r.prot)).collect()
    }

    #[test]
    fn a_static_program() {
        // gcc -static: headers, text, rodata, data+bss (data starts mid-page).
        let l = layout(
            &[
                seg(0, 0x40_0000, 0x518, R),
                seg(1, 0x40_1000, 0x7_7bf1, RX),
                seg(2, 0x47_9000, 0x2_6f86, R),
                seg(3, 0x4a_06d8, 0xb3c8, RW),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(
            spans(&l),
            vec![
                (0x40_0000, 0x40_1000, R),
                (0x40_1000, 0x47_9000, RX),
                (0x47_9000, 0x4a_0000, R),
                (0x4a_0000, 0x4a_c000, RW),
                (STACK_TOP - STACK_SIZE, STACK_TOP, RW),
            ]
        );
        assert_eq!(l.brk_start, 0x4a_c000);
    }

    #[test]
    fn merges_shared_pages_and_equal_neighbours() {
        // Text and data share page 0x401000 and merge (RWX); the next data
        // page touches them but keeps its own protection. Given out of order.
        let l = layout(
            &[
                seg(2, 0x40_1800, 0x1000, RW),
                seg(0, 0x40_0000, 0x1100, RX),
                seg(3, 0x40_3000, 0x10, RW),
                seg(4, 0x40_8000, 0x10, R),
            ],
            &[],
        )
        .unwrap();
        assert_eq!(
            spans(&l)[..3],
            [(0x40_0000, 0x40_3000, RX | RW), (0x40_3000, 0x40_4000, RW), (0x40_8000, 0x40_9000, R)]
        );
        assert_eq!(l.brk_start, 0x40_9000);

        // One segment inside another.
        let l = layout(&[seg(0, 0x40_0000, 0x5000, R), seg(1, 0x40_1000, 0x10, RX)], &[]).unwrap();
        assert_eq!(spans(&l)[..1], [(0x40_0000, 0x40_5000, RX)]);
        // Touching with the same protection.
        let l = layout(&[seg(0, 0x40_0000, 0x1000, RW), seg(1, 0x40_1000, 0x1000, RW)], &[]).unwrap();
        assert_eq!(spans(&l)[..1], [(0x40_0000, 0x40_2000, RW)]);
    }

    #[test]
    fn pie_bias_is_already_in_the_addresses() {
        let base = atoll_abi::PIE_BASE;
        let l = layout(&[seg(0, base, 0x8020, R), seg(1, base + 0x9000, 0x10, RX)], &[]).unwrap();
        assert_eq!(spans(&l)[..2], [(base, base + 0x9000, R), (base + 0x9000, base + 0xa000, RX)]);
        assert_eq!(l.brk_start, base + 0xa000);
    }

    #[test]
    fn refuses_out_of_range() {
        for (addr, memsz) in [
            (0, 0x1000),
            (0x1_0000, 0x1000),
            (USER_START - 1, 2),
            (PROGRAM_END - 0x1000, 0x1001),
            (PROGRAM_END, 0x1000),
            (STACK_TOP - STACK_SIZE, 0x1000),
            (USER_END, 0x1000),
            (u64::MAX - 0x10, 0x20),
        ] {
            let e = layout(&[seg(3, addr, memsz, R)], &[]).unwrap_err();
            assert!(e.contains("segment (3)") && e.contains("outside the area"), "{addr:#x}: {e}");
        }
        assert!(layout(&[seg(0, USER_START, 0x1000, R)], &[]).is_ok());
        assert!(layout(&[seg(0, PROGRAM_END - 0x1000, 0x1000, R)], &[]).is_ok());
    }

    #[test]
    fn a_dynamic_program_and_its_loader() {
        // The loader's regions come in too; brk starts past the program.
        let base = atoll_abi::PIE_BASE;
        let interp = crate::program::elf::INTERP_BASE;
        let l = layout(&[seg(0, base, 0x3000, RX)], &[seg(0, interp, 0x2000, RX), seg(1, interp + 0x3000, 0x10, RW)])
            .unwrap();
        assert_eq!(
            spans(&l)[..3],
            [(base, base + 0x3000, RX), (interp, interp + 0x2000, RX), (interp + 0x3000, interp + 0x4000, RW)]
        );
        assert_eq!(l.brk_start, base + 0x3000);
        let files: Vec<u32> = l.regions.iter().map(|r| r.flags).collect();
        assert_eq!(files, [REGION_PROGRAM, REGION_LOADER, REGION_LOADER, REGION_STACK]);
    }

    #[test]
    fn a_region_starts_at_its_segment_page_in_the_file() {
        let s = Segment { offset: 0x2345, filesz: 0x100, ..seg(0, 0x40_1345, 0x100, RX) };
        let l = layout(&[s], &[]).unwrap();
        assert_eq!((l.regions[0].start, l.regions[0].offset), (0x40_1000, 0x2000));
    }

    #[test]
    fn counts_regions() {
        let apart = |n: usize| (0..n).map(|i| seg(i, 0x40_0000 + 0x2000 * i as u64, 0x10, R)).collect::<Vec<_>>();
        assert_eq!(layout(&apart(MAX_REGIONS - 2), &[]).unwrap().regions.len(), MAX_REGIONS - 1);
        assert!(layout(&apart(MAX_REGIONS - 1), &[]).unwrap_err().contains("at most 14"));
    }

    #[test]
    fn the_stack_below_its_contents_is_on_demand() {
        let l = layout(&[seg(0, 0x40_0000, 0x10, R)], &[]).unwrap().with_stack_in_use(STACK_TOP - 0x1234);
        let [.., lower, upper] = &l.regions[..] else { panic!("{:?}", l.regions) };
        assert_eq!(
            (lower.start, lower.size, lower.flags),
            (STACK_TOP - STACK_SIZE, STACK_SIZE - 0x2000, REGION_ON_DEMAND | REGION_STACK)
        );
        assert_eq!((upper.start, upper.size, upper.flags), (STACK_TOP - 0x2000, 0x2000, REGION_STACK));
        assert_eq!((lower.prot, upper.prot), (PROT_READ | PROT_WRITE, PROT_READ | PROT_WRITE));
    }

    #[test]
    fn regions_are_aligned_sorted_and_disjoint() {
        // Pseudo-random segments: whatever merges, the result obeys the ABI.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2000 {
            let segs: Vec<Segment> = (0..6)
                .map(|i| seg(i, 0x40_0000 + next() % 0x1_0000, next() % 0x4000 + 1, (next() % 7 + 1) as u32))
                .collect();
            let l = layout(&segs, &[]).unwrap();
            for pair in l.regions.windows(2) {
                assert!(pair[0].start + pair[0].size <= pair[1].start);
            }
            for r in &l.regions {
                assert!(r.start % PAGE == 0 && r.size % PAGE == 0 && r.size > 0);
            }
            for s in &segs {
                let inside = l.regions.iter().find(|r| r.start <= s.addr && s.addr + s.memsz <= r.start + r.size);
                assert!(inside.is_some_and(|r| r.prot & s.prot == s.prot), "{s:?} not covered");
            }
            assert!(l.regions[..l.regions.len() - 1].iter().all(|r| r.start + r.size <= l.brk_start));
        }
    }
}
