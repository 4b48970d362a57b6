//! Physical memory: the frame allocator over the boot memory map, the kernel
//! heap carved from it, and the direct-map page tables. Frames leave hal
//! only as `frames::Frames`; the raw calls here are hal's own.

use core::sync::atomic::{AtomicBool, Ordering};
use lwk_logic::frames::{
    meta_words, FrameAllocator, FrameError, RemoveError, ShareError, FRAME_SIZE,
};
use lwk_logic::memmap::RangeSet;

use crate::lock::SpinLock;
use crate::{heap, paging, physmem};

static FRAMES: SpinLock<FrameAllocator> = SpinLock::new(FrameAllocator::new());

/// Below 1 MiB live the SMP trampoline and firmware data; never allocate there.
const LOW_RESERVED: u64 = 0x10_0000;
const MIN_HEAP: u64 = 16 << 20;
const MAX_HEAP: u64 = 256 << 20;

/// Sets up the frame allocator and the heap from the usable RAM, less the
/// `reserved` range (a co-kernel's shared area). The boot page tables map RAM
/// below `boot_mapped`.
pub(crate) fn init(ram: &RangeSet, reserved: (u64, u64), boot_mapped: u64) {
    let (img_start, img_end) = physmem::image_range();
    let mut usable = RangeSet::new();
    for r in ram.iter() {
        let _ = usable.add(r.start, r.end);
    }
    let _ = usable.remove(0, LOW_RESERVED);
    let _ = usable.remove(img_start, img_end);
    let _ = usable.remove(reserved.0, reserved.1);
    usable.align_inward(FRAME_SIZE);

    let mut frames = FRAMES.lock();
    // Low ranges keep their metadata at their own start; higher ones (not
    // yet mapped) get theirs from the low ranges.
    for r in usable.iter().filter(|r| r.end <= boot_mapped) {
        let n = (r.end - r.start) / FRAME_SIZE;
        let words = meta_words(n);
        let meta_frames = ((words as u64 * 8).div_ceil(FRAME_SIZE)).max(1);
        let meta = physmem::claim_for_allocator(r.start, words);
        frames.add_region(r.start, n, meta).expect("frame region");
        frames.reserve(r.start, meta_frames);
    }
    for r in usable.iter().filter(|r| r.end > boot_mapped) {
        let n = (r.end - r.start) / FRAME_SIZE;
        let words = meta_words(n);
        let meta_frames = (words as u64 * 8).div_ceil(FRAME_SIZE);
        let at = frames.alloc(meta_frames, 1).expect("memory for a frame bitmap");
        frames
            .add_region(r.start, n, physmem::claim_for_allocator(at, words))
            .expect("frame region");
    }
    // Whole frames: the heap is given exactly the frames taken for it (a
    // sixteenth of the free frames in bytes is not always whole frames, and
    // the heap then wrote into the next frame, which a program may have).
    let heap_frames =
        (frames.free_frames() / 16).clamp(MIN_HEAP / FRAME_SIZE, MAX_HEAP / FRAME_SIZE);
    let heap_size = heap_frames * FRAME_SIZE;
    let heap_at = frames
        .alloc(heap_frames, 512)
        .unwrap_or_else(|| crate::fatal!("no room for a {} MiB kernel heap", heap_size >> 20));
    drop(frames);
    heap::init(heap_at, heap_size as usize);
}

/// Builds the direct map of all RAM, the local APIC page and the SMP
/// trampoline page (outside RAM for a co-kernel), and switches to it.
pub(crate) fn build_page_tables(
    ram: &RangeSet,
    lapic_phys: u64,
    trampoline_phys: u64,
    allow_1g: bool,
) {
    let mut b = paging::Builder::new(|| alloc_zeroed_frames(1, 1).expect("memory for page tables"));
    for r in ram.iter() {
        b.map_ram(r.start, r.end, allow_1g);
    }
    if !ram.iter().any(|r| r.start <= trampoline_phys && trampoline_phys < r.end) {
        b.map_ram(trampoline_phys, trampoline_phys + FRAME_SIZE, false);
    }
    b.map_mmio(lapic_phys);
    b.finish();
    paging::activate_kernel_tables();
}

/// Frames at the start of a block of `len` bytes that hold its own
/// metadata (bitmap and holder counts).
fn meta_frames(len: u64) -> u64 {
    (meta_words(len / FRAME_SIZE) as u64 * 8).div_ceil(FRAME_SIZE)
}

/// Gives a block the direct map now maps to the allocator, its metadata in
/// its own first frames (blocks.rs).
pub(crate) fn add_region(phys: u64, len: u64) -> Result<(), FrameError> {
    let frames = len / FRAME_SIZE;
    let meta = physmem::claim_for_allocator(phys, meta_words(frames));
    let mut allocator = FRAMES.lock();
    allocator.add_region(phys, frames, meta)?;
    allocator.reserve(phys, meta_frames(len));
    Ok(())
}

/// Takes a block `add_region` added out of the allocator if none of its
/// frames is in use.
pub(crate) fn remove_region(phys: u64, len: u64) -> Result<(), RemoveError> {
    FRAMES.lock().remove_region(phys, meta_frames(len))
}

pub(crate) fn alloc_frames(count: u64, align: u64) -> Option<u64> {
    FRAMES.lock().alloc(count, align)
}

/// As `alloc_frames`, with the frames zeroed (page tables, user memory).
pub(crate) fn alloc_zeroed_frames(count: u64, align: u64) -> Option<u64> {
    let f = alloc_frames(count, align)?;
    // SAFETY: frames the allocator just handed out, direct-mapped RAM that
    // nothing else holds yet.
    unsafe {
        core::ptr::write_bytes(
            physmem::phys_to_virt(f) as *mut u8,
            0,
            (count * FRAME_SIZE) as usize,
        )
    };
    Some(f)
}

pub(crate) fn free_frames(phys: u64, count: u64) {
    FRAMES.lock().free(phys, count)
}

/// Whether any frame has a second holder, read without the lock (most
/// address spaces never share one, and their checks need not wait).
static ANY_SHARED: AtomicBool = AtomicBool::new(false);

/// One more holder of each of `count` allocated frames at `phys`.
pub(crate) fn share_frames(phys: u64, count: u64) -> Result<(), ShareError> {
    let mut frames = FRAMES.lock();
    frames.share(phys, count)?;
    ANY_SHARED.store(true, Ordering::Release);
    Ok(())
}

/// One holder of each lets go; frames nobody else holds are freed.
pub(crate) fn release_frames(phys: u64, count: u64) {
    let mut frames = FRAMES.lock();
    frames.release(phys, count);
    ANY_SHARED.store(frames.any_shared(), Ordering::Release);
}

/// True if the frame at `phys` has more than one holder.
pub(crate) fn is_shared(phys: u64) -> bool {
    FRAMES.lock().is_shared(phys)
}

/// True if any frame has more than one holder.
pub(crate) fn any_shared() -> bool {
    ANY_SHARED.load(Ordering::Acquire)
}

/// True if some frame of the range is the allocator's and free.
pub(crate) fn any_free(phys: u64, count: u64) -> bool {
    FRAMES.lock().any_free(phys, count)
}

/// (free, total) frames.
pub fn frame_counts() -> (u64, u64) {
    let f = FRAMES.lock();
    (f.free_frames(), f.total_frames())
}
