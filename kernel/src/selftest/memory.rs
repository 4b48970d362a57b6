//! Frame allocator, heap and page tables.

use alloc::boxed::Box;
use alloc::vec::Vec;
use lwk_logic::paging_plan::PageSize;

use super::helpers::TestResult;
use crate::ensure;
use hal::frames::Frames;
use hal::mem;
use hal::{paging, physmem};

pub fn frame_allocator() -> TestResult {
    let (free0, _) = mem::frame_counts();
    let big = Frames::alloc(512, 512).ok_or("no 2 MiB run")?;
    ensure!(big.phys() % (2 << 20) == 0, "2 MiB run at {:#x} is not 2 MiB aligned", big.phys());
    let small: Vec<Frames> = (0..64).filter_map(|_| Frames::alloc(1, 1)).collect();
    ensure!(small.len() == 64, "only {} single frames", small.len());
    let mut sorted: Vec<u64> = small.iter().map(Frames::phys).collect();
    sorted.sort();
    sorted.dedup();
    ensure!(sorted.len() == 64, "a frame was handed out twice");
    ensure!(
        sorted.iter().all(|&f| f + 4096 <= big.phys() || f >= big.phys() + (2 << 20)),
        "overlap with the 2 MiB run"
    );
    let (free1, _) = mem::frame_counts();
    ensure!(free1 == free0 - 512 - 64, "free count {} after allocating 576 of {}", free1, free0);
    // A second hold keeps the frames after the first lets go.
    let again = big.share().ok_or("no second hold")?;
    ensure!(big.is_shared() && again.phys() == big.phys(), "the hold is not shared");
    drop(big);
    ensure!(mem::frame_counts().0 == free1, "frames freed while held");
    ensure!(!again.is_shared(), "one holder is left");
    drop(again);
    drop(small);
    ensure!(mem::frame_counts().0 == free0, "frames leaked");
    Ok(())
}

/// memcpy and memset (hal::string), both ways they can run, for every
/// length to 200 bytes at every alignment of source and destination.
pub fn copy_and_fill() -> TestResult {
    let pattern = |i: usize| (i * 7 + 3) as u8;
    let src: Vec<u8> = (0..256).map(pattern).collect();
    let before = hal::string::use_fast_strings(false);
    let mut result = Ok(());
    for fast in [false, true] {
        hal::string::use_fast_strings(fast);
        result = result.and_then(|()| check_copies(&src, pattern));
    }
    hal::string::use_fast_strings(before);
    result
}

fn check_copies(src: &[u8], pattern: impl Fn(usize) -> u8) -> TestResult {
    let mut dst = [0u8; 256];
    for len in 0..=200 {
        for from in 0..8 {
            for to in 0..8 {
                dst.fill(0xee);
                dst[to..to + len].copy_from_slice(&src[from..from + len]);
                let right = dst.iter().enumerate().all(|(i, &b)| {
                    b == if (to..to + len).contains(&i) { pattern(from + i - to) } else { 0xee }
                });
                ensure!(right, "copy of {} bytes from offset {} to offset {}", len, from, to);
                dst[to..to + len].fill(0x5a);
                let right = dst
                    .iter()
                    .enumerate()
                    .all(|(i, &b)| b == if (to..to + len).contains(&i) { 0x5a } else { 0xee });
                ensure!(right, "fill of {} bytes at offset {}", len, to);
            }
        }
    }
    Ok(())
}

pub fn kernel_heap() -> TestResult {
    let (used0, _) = hal::heap::usage();
    {
        let big: Vec<u64> = (0..(1 << 17)).collect();
        ensure!(big.iter().sum::<u64>() == (1u64 << 17) * ((1 << 17) - 1) / 2, "bad sum");
        let boxes: Vec<Box<[u8; 200]>> = (0..1000).map(|i| Box::new([i as u8; 200])).collect();
        ensure!(boxes.iter().enumerate().all(|(i, b)| b[199] == i as u8), "box contents");
    }
    let (used1, _) = hal::heap::usage();
    ensure!(used1 == used0, "heap use went from {} to {} bytes", used0, used1);
    Ok(())
}

pub fn direct_map() -> TestResult {
    let (img, _) = physmem::image_range();
    let heap_obj = Box::new(7u64);
    let heap_virt = &*heap_obj as *const u64 as u64;
    // Small pages belong only at ragged edges: standalone 1 MiB (usable RAM
    // starts there), in an enclave the borrowed trampoline page. The image
    // and the heap are inside large-page territory.
    let ragged = if crate::boot::enclave().is_some() {
        crate::boot::info().trampoline.phys
    } else {
        0x10_0000
    };
    for (phys, large) in [(img, true), (physmem::virt_to_phys(heap_virt), true), (ragged, false)] {
        let virt = physmem::phys_to_virt(phys);
        let (got, size) =
            paging::translate(virt).ok_or(alloc::format!("{:#x} not mapped", virt))?;
        ensure!(got == phys, "{:#x} maps to {:#x}, not {:#x}", virt, got, phys);
        ensure!(!large || size != PageSize::Size4K, "RAM at {:#x} mapped with 4 KiB pages", phys);
    }
    ensure!(paging::translate(0x40_0000).is_none(), "the lower half must stay unmapped");
    Ok(())
}
