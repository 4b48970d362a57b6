//! The kernel heap: linked_list_allocator over frames the kernel gave it,
//! behind the interrupt-safe pmtlock.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::{null_mut, NonNull};
use linked_list_allocator::Heap;

use super::lock::IrqPmtLock;
use super::physmem::phys_to_virt;

type HeapLock = lock_api::Mutex<IrqPmtLock, Heap>;

pub struct KernelHeap(HeapLock);

#[global_allocator]
static HEAP: KernelHeap = KernelHeap(HeapLock::new(Heap::empty()));

// SAFETY: every allocation is served from the one heap under its lock, and
// freed memory goes back to that heap with its original layout.
unsafe impl GlobalAlloc for KernelHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        self.0.lock().allocate_first_fit(layout).map_or(null_mut(), |p| p.as_ptr())
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if let Some(p) = NonNull::new(ptr) {
            // SAFETY: `ptr` came from alloc() with this layout (GlobalAlloc contract).
            unsafe { self.0.lock().deallocate(p, layout) };
        }
    }
}

/// Gives the heap the physical range [phys, phys + size), once.
pub(crate) fn init(phys: u64, size: usize) {
    // SAFETY: the caller hands over frames reserved for the heap alone; they
    // are mapped at their direct-map address.
    unsafe { HEAP.0.lock().init(phys_to_virt(phys) as *mut u8, size) };
}

/// (used, free) bytes, for the self-tests.
pub fn usage() -> (usize, usize) {
    let h = HEAP.0.lock();
    (h.used(), h.free())
}
