//! The kernel heap: talc over frames the kernel gave it, behind the
//! interrupt-safe pmtlock. Talc keeps its free blocks in bins by size, so
//! taking and freeing one costs the same however many holes the heap has:
//! the first-fit list it replaces walked every hole below the block, and
//! an enclave's thread create + join slowed down run after run as its holes
//! grew (2.5x over eight runs of 2,500 threads).

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::{null_mut, NonNull};
use talc::{ErrOnOom, Span, Talc};

use super::lock::IrqPmtLock;
use super::physmem::phys_to_virt;

type HeapLock = lock_api::Mutex<IrqPmtLock, Talc<ErrOnOom>>;

pub struct KernelHeap(HeapLock);

#[global_allocator]
static HEAP: KernelHeap = KernelHeap(HeapLock::new(Talc::new(ErrOnOom)));

// SAFETY: every allocation is served from the one heap under its lock, and
// freed memory goes back to it with the layout it was taken with
// (GlobalAlloc's contract on the caller).
unsafe impl GlobalAlloc for KernelHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: GlobalAlloc's callers never ask for zero bytes.
        unsafe { self.0.lock().malloc(layout) }.map_or(null_mut(), |p| p.as_ptr())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some(p) = NonNull::new(ptr) else { return };
        // SAFETY: `ptr` came from alloc() with this layout.
        unsafe { self.0.lock().free(p, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Some(p) = NonNull::new(ptr) else { return null_mut() };
        let mut heap = self.0.lock();
        // SAFETY: `ptr` came from alloc() with `layout`; new_size is not 0
        // (GlobalAlloc's contract); in place where talc can.
        unsafe {
            if new_size >= layout.size() {
                heap.grow(p, layout, new_size).map_or(null_mut(), |p| p.as_ptr())
            } else {
                heap.shrink(p, layout, new_size);
                ptr
            }
        }
    }
}

/// Gives the heap the physical range [phys, phys + size), once.
pub(crate) fn init(phys: u64, size: usize) {
    let base = phys_to_virt(phys) as *mut u8;
    // SAFETY: the caller hands over frames reserved for the heap alone; they
    // are mapped at their direct-map address.
    let claimed = unsafe { HEAP.0.lock().claim(Span::from_base_size(base, size)) };
    assert!(claimed.is_ok(), "kernel heap: {size} bytes at {phys:#x} too small to claim");
}

/// (used, free) bytes, for the self-tests.
pub fn usage() -> (usize, usize) {
    let heap = HEAP.0.lock();
    let c = heap.get_counters();
    (c.allocated_bytes, c.available_bytes)
}
