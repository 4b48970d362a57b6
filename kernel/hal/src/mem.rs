//! Physical memory: the frame allocator over the boot memory map, the kernel
//! heap carved from it, and the direct-map page tables.

use lwk_logic::frames::{bitmap_words, FrameAllocator, FrameError, RemoveError, FRAME_SIZE};
use lwk_logic::memmap::RangeSet;

use crate::lent::{self, LendError};
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
    // Low ranges keep their bitmap at their own start; higher ones (not yet
    // mapped) get theirs from the low ranges.
    for r in usable.iter().filter(|r| r.end <= boot_mapped) {
        let n = (r.end - r.start) / FRAME_SIZE;
        let words = bitmap_words(n);
        let bitmap_frames = ((words as u64 * 8).div_ceil(FRAME_SIZE)).max(1);
        let bitmap = physmem::claim_for_allocator(r.start, words);
        frames.add_region(r.start, n, bitmap).expect("frame region");
        frames.reserve(r.start, bitmap_frames);
    }
    for r in usable.iter().filter(|r| r.end > boot_mapped) {
        let n = (r.end - r.start) / FRAME_SIZE;
        let words = bitmap_words(n);
        let bitmap_frames = (words as u64 * 8).div_ceil(FRAME_SIZE);
        let at = frames.alloc(bitmap_frames, 1).expect("memory for a frame bitmap");
        frames
            .add_region(r.start, n, physmem::claim_for_allocator(at, words))
            .expect("frame region");
    }
    let heap_size = (frames.free_frames() * FRAME_SIZE / 16).clamp(MIN_HEAP, MAX_HEAP);
    let heap_at = frames
        .alloc(heap_size / FRAME_SIZE, 512)
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

/// Why a block the host adds was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddBlockError {
    Map(LendError),
    Region(FrameError),
}

/// Frames at the start of a block of `len` bytes that hold its own bitmap.
fn bitmap_frames(len: u64) -> u64 {
    (bitmap_words(len / FRAME_SIZE) as u64 * 8).div_ceil(FRAME_SIZE)
}

/// Memory the host adds while the kernel runs (`atoll add --mem`):
/// mapped into the direct map and given to the frame allocator, with its
/// bitmap in its own first frames.
pub fn add_block(phys: u64, len: u64) -> Result<(), AddBlockError> {
    lent::map_block(phys, len, permanent_table).map_err(AddBlockError::Map)?;
    let frames = len / FRAME_SIZE;
    let bitmap = physmem::claim_for_allocator(phys, bitmap_words(frames));
    let mut allocator = FRAMES.lock();
    if let Err(e) = allocator.add_region(phys, frames, bitmap) {
        drop(allocator);
        lent::unmap_block(phys, len);
        return Err(AddBlockError::Region(e));
    }
    allocator.reserve(phys, bitmap_frames(len));
    Ok(())
}

/// Takes a block `add_block` added out of the allocator if none of its
/// frames is in use, and out of the direct map; the caller flushes every
/// CPU's TLB before the host takes it back.
pub fn remove_block(phys: u64, len: u64) -> Result<(), RemoveError> {
    FRAMES.lock().remove_region(phys, bitmap_frames(len))?;
    lent::unmap_block(phys, len);
    Ok(())
}

/// A page directory for a block's direct map, from the kernel heap (boot
/// memory, never given back), so that no block is held by another's table.
fn permanent_table() -> Option<u64> {
    #[repr(C, align(4096))]
    struct Table([u64; 512]);
    let t: &'static mut Table = alloc::boxed::Box::leak(alloc::boxed::Box::new(Table([0; 512])));
    Some(physmem::virt_to_phys(t as *mut Table as u64))
}

pub fn alloc_frames(count: u64, align: u64) -> Option<u64> {
    FRAMES.lock().alloc(count, align)
}

/// As `alloc_frames`, with the frames zeroed (page tables, user memory).
pub fn alloc_zeroed_frames(count: u64, align: u64) -> Option<u64> {
    let f = alloc_frames(count, align)?;
    physmem::zero_owned(f, (count * FRAME_SIZE) as usize);
    Some(f)
}

pub fn free_frames(phys: u64, count: u64) {
    FRAMES.lock().free(phys, count)
}

/// (free, total) frames.
pub fn frame_counts() -> (u64, u64) {
    let f = FRAMES.lock();
    (f.free_frames(), f.total_frames())
}
