use super::*;
use std::collections::HashMap;

/// Tables in a hash map; frames handed out from a counter.
struct FakeMemory {
    tables: HashMap<u64, [u64; 512]>,
    next: u64,
    freed_tables: Vec<u64>,
    fail_after: Option<usize>,
    /// The host's mirror marking every leaf written just before each
    /// compare-and-swap here (the race it must survive).
    host_marks: bool,
}

impl FakeMemory {
    fn new() -> Self {
        let mut m = FakeMemory {
            tables: HashMap::new(),
            next: 0x100_0000,
            freed_tables: vec![],
            fail_after: None,
            host_marks: false,
        };
        // A "kernel" PML4 with one upper-half entry.
        m.tables.insert(0x1000, [0; 512]);
        m.tables.get_mut(&0x1000).unwrap()[300] = 0xabc003;
        m
    }
}

impl TableMemory for FakeMemory {
    fn read(&self, table: u64, index: usize) -> u64 {
        self.tables[&table][index]
    }
    fn write(&mut self, table: u64, index: usize, value: u64) {
        self.tables.get_mut(&table).expect("write to a table that does not exist")[index] = value;
    }
    fn compare_exchange(
        &mut self,
        table: u64,
        index: usize,
        current: u64,
        new: u64,
    ) -> Result<(), u64> {
        let now = self.read(table, index);
        if self.host_marks && now & PRESENT != 0 {
            self.write(table, index, now | DIRTY);
        }
        match self.read(table, index) {
            now if now == current => {
                self.write(table, index, new);
                Ok(())
            }
            now => Err(now),
        }
    }
    fn new_table(&mut self) -> Option<u64> {
        if let Some(n) = self.fail_after.as_mut() {
            if *n == 0 {
                return None;
            }
            *n -= 1;
        }
        self.next += 0x1000;
        self.tables.insert(self.next, [0; 512]);
        Some(self.next)
    }
    fn free_table(&mut self, table: u64) {
        assert!(self.tables.remove(&table).is_some(), "table freed twice");
        self.freed_tables.push(table);
    }
}

const RW: Access = Access { read: true, write: true, exec: false };
const RO: Access = Access { read: true, write: false, exec: false };

#[test]
fn new_table_shares_the_kernel_half_only() {
    let mut m = FakeMemory::new();
    let pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(m.read(pt.root(), 300), 0xabc003);
    assert!((0..256).all(|i| m.read(pt.root(), i) == 0));
}

#[test]
fn small_and_large_pages_translate_with_offsets() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(pt.map(&mut m, 0x40_1000, 0x5000_0000, false, RO), Ok(Unlinked(None)));
    assert_eq!(pt.map(&mut m, 0x20_0000_0000, 0x6000_0000, true, RW), Ok(Unlinked(None)));
    let t = pt.translate(&m, 0x40_1234).unwrap();
    assert_eq!((t.phys, t.writable, t.rest_of_page), (0x5000_0234, false, 0x1000 - 0x234));
    let t = pt.translate(&m, 0x20_0012_3456).unwrap();
    assert_eq!((t.phys, t.writable), (0x6012_3456, true));
    assert_eq!(t.rest_of_page, LARGE_PAGE_SIZE - 0x12_3456);
    assert!(pt.translate(&m, 0x40_2000).is_none());
    assert!(pt.translate(&m, 0xffff_8000_0000_0000).is_none(), "kernel half is not user memory");
}

#[test]
fn mapping_twice_is_refused() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(pt.map(&mut m, 0x20_0000, 0x20_0000, true, RW), Ok(Unlinked(None)));
    assert_eq!(pt.map(&mut m, 0x20_0000, 0x40_0000, true, RW), Err(MapError::Occupied));
    assert_eq!(pt.map(&mut m, 0x20_1000, 0x1000, false, RW), Err(MapError::Occupied));
}

#[test]
fn out_of_table_memory_is_an_error_not_a_panic() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    m.fail_after = Some(1);
    assert_eq!(pt.map(&mut m, 0x40_0000, 0x1000, false, RW), Err(MapError::NoMemory));
}

#[test]
fn partial_unmap_splits_a_large_page_and_frees_exactly_the_cut() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(pt.map(&mut m, 0x4000_0000, 0x8000_0000, true, RW), Ok(Unlinked(None)));
    let mut freed = vec![];
    pt.unmap(&mut m, 0x4000_1000, 0x4000_3000, |p, s| freed.push((p, s))).unwrap();
    assert_eq!(freed, vec![(0x8000_1000, 4096), (0x8000_2000, 4096)]);
    assert_eq!(pt.translate(&m, 0x4000_0010).unwrap().phys, 0x8000_0010);
    assert!(pt.translate(&m, 0x4000_1000).is_none());
    assert!(pt.translate(&m, 0x4000_2fff).is_none());
    assert_eq!(pt.translate(&m, 0x4000_3000).unwrap().phys, 0x8000_3000);
    assert_eq!(pt.translate(&m, 0x401f_f000).unwrap().phys, 0x801f_f000);
}

#[test]
fn whole_large_pages_are_freed_whole() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    for i in 0..3u64 {
        pt.map(
            &mut m,
            0x4000_0000 + i * LARGE_PAGE_SIZE,
            0x8000_0000 + i * LARGE_PAGE_SIZE,
            true,
            RW,
        )
        .unwrap()
        .0
        .ok_or(())
        .unwrap_err();
    }
    let mut freed = vec![];
    pt.unmap(&mut m, 0x4000_0000, 0x4000_0000 + 3 * LARGE_PAGE_SIZE, |p, s| freed.push((p, s)))
        .unwrap();
    assert_eq!(freed.len(), 3);
    assert!(freed.iter().all(|&(_, s)| s == LARGE_PAGE_SIZE));
}

#[test]
fn protect_changes_access_and_prot_none_keeps_the_frame() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(pt.map(&mut m, 0x4000_0000, 0x8000_0000, true, RW), Ok(Unlinked(None)));
    pt.protect(&mut m, 0x4000_0000, 0x4000_1000, Access::NONE).unwrap();
    assert!(pt.translate(&m, 0x4000_0000).is_none(), "guard page is inaccessible");
    pt.protect(&mut m, 0x4000_2000, 0x4000_3000, RO).unwrap();
    assert!(!pt.translate(&m, 0x4000_2000).unwrap().writable);
    assert!(pt.translate(&m, 0x4000_3000).unwrap().writable);
    // The PROT_NONE page's frame still comes back on unmap.
    let mut freed = vec![];
    pt.unmap(&mut m, 0x4000_0000, 0x4020_0000, |p, s| freed.push((p, s))).unwrap();
    assert_eq!(freed.len(), 512);
    assert_eq!(freed[0], (0x8000_0000, 4096));
}

#[test]
fn protect_whole_large_page_keeps_it_large() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(pt.map(&mut m, 0x4000_0000, 0x8000_0000, true, RW), Ok(Unlinked(None)));
    pt.protect(&mut m, 0x4000_0000, 0x4020_0000, RO).unwrap();
    let t = pt.translate(&m, 0x4010_0000).unwrap();
    assert_eq!((t.phys, t.writable, t.rest_of_page), (0x8010_0000, false, 0x10_0000));
}

#[test]
fn destroy_returns_every_frame_and_table() {
    let mut m = FakeMemory::new();
    let tables_before = m.tables.len();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(pt.map(&mut m, 0x40_0000, 0x1_0000, false, RO), Ok(Unlinked(None)));
    assert_eq!(pt.map(&mut m, 0x40_1000, 0x1_1000, false, Access::NONE), Ok(Unlinked(None)));
    assert_eq!(
        pt.map(&mut m, 0x3fff_ffe0_0000 - LARGE_PAGE_SIZE, 0x4000_0000, true, RW),
        Ok(Unlinked(None))
    );
    assert_eq!(pt.map(&mut m, 0x1000_0000_0000, 0x4020_0000, true, RW), Ok(Unlinked(None)));
    pt.unmap(&mut m, 0x1000_0000_1000, 0x1000_0000_2000, |_, _| {}).unwrap();
    let mut freed = 0u64;
    pt.destroy(&mut m, |_, s| freed += s);
    assert!(pt.translate(&m, 0x40_0000).is_none(), "a destroyed table maps nothing");
    pt.destroy(&mut m, |_, _| panic!("destroyed twice"));
    assert_eq!(freed, 2 * 4096 + LARGE_PAGE_SIZE + (LARGE_PAGE_SIZE - 4096));
    assert_eq!(m.tables.len(), tables_before, "every table was freed");
}

#[test]
fn prot_none_is_not_present_and_exec_clears_nx() {
    assert_eq!(Access::NONE.leaf_flags() & PRESENT, 0);
    let rx = Access { read: true, write: false, exec: true };
    assert_eq!(rx.leaf_flags() & NO_EXECUTE, 0);
    assert_ne!(RW.leaf_flags() & NO_EXECUTE, 0);
}

#[test]
fn emptiness_and_frames_are_seen_per_page() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert!(pt.is_empty(&m, 0x4000_0000, 0x4040_0000));
    assert_eq!(pt.map(&mut m, 0x4020_3000, 0x9000, false, Access::NONE), Ok(Unlinked(None)));
    assert!(pt.has_frame(&m, 0x4020_3000), "PROT_NONE pages still have memory");
    assert!(!pt.has_frame(&m, 0x4020_4000));
    assert!(pt.is_empty(&m, 0x4000_0000, 0x4020_0000));
    assert!(!pt.is_empty(&m, 0x4020_0000, 0x4040_0000));
    assert_eq!(pt.map(&mut m, 0x4060_0000, 0x20_0000, true, RW), Ok(Unlinked(None)));
    assert!(!pt.is_empty(&m, 0x4060_0000, 0x4080_0000));
    assert!(pt.has_frame(&m, 0x407f_f000));
}

#[test]
fn a_large_page_replaces_an_emptied_table_of_small_ones() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(pt.map(&mut m, 0x4000_1000, 0x9000, false, RW), Ok(Unlinked(None)));
    let tables = m.tables.len();
    pt.unmap(&mut m, 0x4000_1000, 0x4000_2000, |_, _| {}).unwrap();
    let unlinked = pt.map(&mut m, 0x4000_0000, 0x20_0000, true, RW).unwrap();
    let table = unlinked.0.expect("the empty table is handed back");
    assert_eq!(m.tables.len(), tables, "not freed: a walk may still be in it");
    assert!((0..512).all(|i| m.read(table, i) == 0));
    m.free_table(table);
    assert_eq!(pt.translate(&m, 0x4000_1000).unwrap().phys, 0x20_1000);
    // A table that still maps something is not replaced.
    assert_eq!(pt.map(&mut m, 0x4040_3000, 0xa000, false, RW), Ok(Unlinked(None)));
    assert_eq!(pt.map(&mut m, 0x4040_0000, 0x40_0000, true, RW), Err(MapError::Occupied));
}

/// What the CPU does on a write: marks the leaf mapping `va` dirty.
fn write_to(m: &mut FakeMemory, pt: &UserPageTable, va: u64) {
    let [i4, i3, i2, i1] = indices(va);
    let pdpt = m.read(pt.root(), i4) & ADDR_MASK;
    let pd = m.read(pdpt, i3) & ADDR_MASK;
    let e2 = m.read(pd, i2);
    if e2 & HUGE != 0 {
        m.write(pd, i2, e2 | DIRTY);
    } else {
        let e1 = m.read(e2 & ADDR_MASK, i1);
        m.write(e2 & ADDR_MASK, i1, e1 | DIRTY);
    }
}

#[test]
fn clean_zeroes_only_written_pages_and_marks_them_clean() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    let base = 0x4000_0000;
    for i in 0..4 {
        assert_eq!(
            pt.map(&mut m, base + i * PAGE_SIZE, 0x800_0000 + i * PAGE_SIZE, false, RW),
            Ok(Unlinked(None))
        );
    }
    assert_eq!(pt.map(&mut m, base + LARGE_PAGE_SIZE, 0x1000_0000, true, RW), Ok(Unlinked(None)));
    write_to(&mut m, &pt, base + PAGE_SIZE);
    write_to(&mut m, &pt, base + 3 * PAGE_SIZE + 8);
    write_to(&mut m, &pt, base + LARGE_PAGE_SIZE + 5);

    // The range cuts page 3 and the large page: both zeroed in the range
    // only, and stay dirty (their other parts may hold data).
    let mut zeroed = vec![];
    let end = base + LARGE_PAGE_SIZE + 0x3000;
    pt.clean(&mut m, base, base + 3 * PAGE_SIZE + 0x800, |p, n| zeroed.push((p, n)));
    pt.clean(&mut m, base + LARGE_PAGE_SIZE, end, |p, n| zeroed.push((p, n)));
    assert_eq!(zeroed, vec![(0x800_1000, PAGE_SIZE), (0x800_3000, 0x800), (0x1000_0000, 0x3000)]);

    // Page 1 is clean now: a second pass zeroes only what is still marked.
    zeroed.clear();
    pt.clean(&mut m, base, base + 2 * LARGE_PAGE_SIZE, |p, n| zeroed.push((p, n)));
    assert_eq!(zeroed, vec![(0x800_3000, PAGE_SIZE), (0x1000_0000, LARGE_PAGE_SIZE)]);
    zeroed.clear();
    pt.clean(&mut m, base, base + 2 * LARGE_PAGE_SIZE, |p, n| zeroed.push((p, n)));
    assert!(zeroed.is_empty(), "{zeroed:x?}");
}

#[test]
fn protect_keeps_the_dirty_mark() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(pt.map(&mut m, 0x4000_0000, 0x800_0000, false, RW), Ok(Unlinked(None)));
    write_to(&mut m, &pt, 0x4000_0000);
    pt.protect(&mut m, 0x4000_0000, 0x4000_1000, RO).unwrap();
    pt.protect(&mut m, 0x4000_0000, 0x4000_1000, Access::NONE).unwrap();
    let mut zeroed = vec![];
    pt.clean(&mut m, 0x4000_0000, 0x4000_1000, |p, n| zeroed.push((p, n)));
    assert_eq!(zeroed, vec![(0x800_0000, PAGE_SIZE)]);
}

#[test]
fn a_mark_the_host_sets_meanwhile_is_kept() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(pt.map(&mut m, 0x4000_0000, 0x800_0000, false, RW), Ok(Unlinked(None)));
    assert_eq!(pt.map(&mut m, 0x4020_0000, 0x1000_0000, true, RW), Ok(Unlinked(None)));
    m.host_marks = true;
    pt.protect(&mut m, 0x4000_0000, 0x4000_1000, RO).unwrap();
    // Part of the large page: it is split, and every small page keeps it.
    pt.protect(&mut m, 0x4020_0000, 0x4020_1000, RO).unwrap();
    m.host_marks = false;
    let mut zeroed = vec![];
    pt.clean(&mut m, 0x4000_0000, 0x4000_1000, |p, n| zeroed.push((p, n)));
    pt.clean(&mut m, 0x4020_0000, 0x4040_0000, |p, n| zeroed.push((p, n)));
    assert_eq!(zeroed.len(), 1 + 512, "{zeroed:x?}");
    assert_eq!(zeroed[0], (0x800_0000, PAGE_SIZE));
    assert_eq!(zeroed[512], (0x1000_0000 + 511 * PAGE_SIZE, PAGE_SIZE));
}

#[test]
fn next_mapped_skips_holes_of_every_size() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    assert_eq!(pt.next_mapped(&m, 0, 1 << 47), None);
    let _ = pt.map(&mut m, 0x40_3000, 0x5000_0000, false, RO).unwrap();
    let _ = pt.map(&mut m, 0x40_5000, 0x5000_1000, false, RW).unwrap();
    let _ = pt.map(&mut m, 0x40_6000, 0x5000_2000, false, Access::NONE).unwrap();
    let _ = pt.map(&mut m, 0x20_0000_0000, 0x6000_0000, true, RW).unwrap();
    let _ = pt.map(&mut m, 0x7fff_ffff_f000, 0x5000_3000, false, RW).unwrap();
    assert_eq!(pt.next_mapped(&m, 0, 1 << 47), Some(0x40_3000));
    assert_eq!(pt.next_mapped(&m, 0x40_3000, 1 << 47), Some(0x40_3000));
    assert_eq!(pt.next_mapped(&m, 0x40_3001, 1 << 47), Some(0x40_3001));
    assert_eq!(pt.next_mapped(&m, 0x40_4000, 1 << 47), Some(0x40_5000));
    // PROT_NONE pages are not mapped for translate either.
    assert_eq!(pt.next_mapped(&m, 0x40_6000, 1 << 47), Some(0x20_0000_0000));
    assert_eq!(pt.next_mapped(&m, 0x20_0010_0000, 1 << 47), Some(0x20_0010_0000));
    assert_eq!(pt.next_mapped(&m, 0x20_0020_0000, 1 << 47), Some(0x7fff_ffff_f000));
    assert_eq!(pt.next_mapped(&m, 0x40_4000, 0x40_5000), None, "end is exclusive");
    assert_eq!(pt.next_mapped(&m, 0x7fff_ffff_f000, 1 << 47), Some(0x7fff_ffff_f000));
    for va in [0x40_3000u64, 0x40_5000, 0x20_0000_0000, 0x7fff_ffff_f000] {
        assert!(pt.translate(&m, va).is_some());
    }
}

#[test]
fn replace_frame_keeps_access_and_marks_of_small_pages_only() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    let _ = pt.map(&mut m, 0x40_3000, 0x5000_0000, false, RO).unwrap();
    let _ = pt.map(&mut m, 0x40_4000, 0x5000_1000, false, Access::NONE).unwrap();
    let _ = pt.map(&mut m, 0x20_0000_0000, 0x6000_0000, true, RO).unwrap();
    write_to(&mut m, &pt, 0x40_3000);
    assert_eq!(pt.replace_frame(&mut m, 0x40_3000, 0x7000_0000), Some(0x5000_0000));
    let t = pt.translate(&m, 0x40_3123).unwrap();
    assert_eq!((t.phys, t.writable, t.executable), (0x7000_0123, false, false));
    let mut zeroed = vec![];
    pt.clean(&mut m, 0x40_3000, 0x40_4000, |p, n| zeroed.push((p, n)));
    assert_eq!(zeroed, vec![(0x7000_0000, PAGE_SIZE)], "the dirty mark stays");
    // A PROT_NONE page keeps its frame, so it can be found and replaced too.
    assert_eq!(pt.small_frame(&m, 0x40_4123), Some(0x5000_1000));
    assert_eq!(pt.replace_frame(&mut m, 0x40_4000, 0x7000_1000), Some(0x5000_1000));
    assert!(pt.translate(&m, 0x40_4000).is_none());
    assert_eq!(pt.replace_frame(&mut m, 0x40_5000, 0x7000_2000), None, "nothing mapped");
    let mut seen = vec![];
    let _ = pt.map(&mut m, 0x40_5000, 0x7000_3000, false, RW).unwrap();
    pt.for_each_frame(&mut m, 0, 1 << 47, |va, f, size, w| seen.push((va, f, size, w)));
    let expect = [
        (0x40_3000, 0x7000_0000, PAGE_SIZE, false),
        (0x40_4000, 0x7000_1000, PAGE_SIZE, false),
        (0x40_5000, 0x7000_3000, PAGE_SIZE, true),
        (0x20_0000_0000, 0x6000_0000, LARGE_PAGE_SIZE, false),
    ];
    assert_eq!(seen, expect);
    assert_eq!(pt.replace_frame(&mut m, 0x20_0000_0000, 0x7000_2000), None, "a 2 MiB page");
    assert_eq!(pt.small_frame(&m, 0x20_0000_0000), None, "a 2 MiB page");
    assert_eq!(pt.small_frame(&m, 0x40_6000), None, "nothing mapped");
    assert_eq!(pt.translate(&m, 0x20_0000_0000).unwrap().phys, 0x6000_0000);
}

#[test]
fn clean_crosses_from_one_page_table_to_the_next() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    // Small pages on both sides of a 2 MiB boundary (two page tables).
    let edge = 0x4020_0000;
    for (i, va) in
        [edge - 2 * PAGE_SIZE, edge - PAGE_SIZE, edge, edge + PAGE_SIZE].into_iter().enumerate()
    {
        let frame = 0x800_0000 + i as u64 * PAGE_SIZE;
        assert_eq!(pt.map(&mut m, va, frame, false, RW), Ok(Unlinked(None)));
        write_to(&mut m, &pt, va);
    }
    let mut zeroed = vec![];
    pt.clean(&mut m, edge - 2 * PAGE_SIZE + 0x100, edge + PAGE_SIZE + 0x10, |p, n| {
        zeroed.push((p, n))
    });
    let expect = [
        (0x800_0100, PAGE_SIZE - 0x100),
        (0x800_1000, PAGE_SIZE),
        (0x800_2000, PAGE_SIZE),
        (0x800_3000, 0x10),
    ];
    assert_eq!(zeroed, expect);
    // The pages cut stay marked, the whole ones are clean.
    zeroed.clear();
    pt.clean(&mut m, 0, 1 << 47, |p, n| zeroed.push((p, n)));
    assert_eq!(zeroed, vec![(0x800_0000, PAGE_SIZE), (0x800_3000, PAGE_SIZE)]);
    let mut seen = vec![];
    pt.for_each_frame(&mut m, edge - PAGE_SIZE, edge + PAGE_SIZE, |va, f, _, _| seen.push((va, f)));
    assert_eq!(seen, vec![(edge - PAGE_SIZE, 0x800_1000), (edge, 0x800_2000)]);
}

#[test]
fn lent_leaves_are_never_handed_back_changed_or_zeroed() {
    let mut m = FakeMemory::new();
    let mut pt = UserPageTable::new(&mut m, 0x1000).unwrap();
    let (lent, own) = (0x3fe0_0000, 0x4020_0000);
    assert_eq!(pt.map_lent(&mut m, lent, 0x9000_0000, true, RW), Ok(Unlinked(None)));
    assert_eq!(pt.map_lent(&mut m, own - PAGE_SIZE, 0x9100_0000, false, RW), Ok(Unlinked(None)));
    assert_eq!(pt.map(&mut m, own, 0x800_0000, false, RW), Ok(Unlinked(None)));
    write_to(&mut m, &pt, lent + 0x20_0000 - 8);
    write_to(&mut m, &pt, own - PAGE_SIZE);
    assert_eq!(pt.translate(&m, lent + 0x10).unwrap().phys, 0x9000_0010);
    let mut zeroed = vec![];
    pt.clean(&mut m, lent, own + PAGE_SIZE, |p, n| zeroed.push((p, n)));
    assert!(zeroed.is_empty(), "lent memory is not zeroed: {zeroed:x?}");
    let mut seen = vec![];
    pt.for_each_frame(&mut m, lent, own + PAGE_SIZE, |va, f, _, _| seen.push((va, f)));
    assert_eq!(seen, vec![(own, 0x800_0000)]);
    assert_eq!(pt.replace_frame(&mut m, own - PAGE_SIZE, 0x7000_0000), None);
    // Protection and a split keep the mark.
    pt.protect(&mut m, lent, lent + PAGE_SIZE, Access::NONE).unwrap();
    let mut freed = vec![];
    pt.unmap(&mut m, lent, own + PAGE_SIZE, |p, s| freed.push((p, s))).unwrap();
    assert_eq!(freed, vec![(0x800_0000, PAGE_SIZE)], "only the frame it owns");
    assert_eq!(pt.map_lent(&mut m, lent, 0x9000_0000, false, RW), Ok(Unlinked(None)));
    pt.destroy(&mut m, |p, s| freed.push((p, s)));
    assert_eq!(freed.len(), 1);
}
