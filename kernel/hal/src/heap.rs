//! The kernel heap: linked_list_allocator over frames the kernel gave it,
//! behind the interrupt-safe pmtlock, with the small blocks freed kept by
//! size for the next allocation of their size. A first-fit list walks every
//! hole below the one it takes, and frees walk them too to keep the list in
//! order, so its cost follows how the heap happens to be laid out: a fork
//! makes and frees about 220 small blocks, and a layout with a few more
//! small holes low in the heap cost it 2% (issue 40). A kept block is
//! taken and given back in a few instructions, whatever the layout.

use core::alloc::{GlobalAlloc, Layout};
use core::ptr::{null_mut, NonNull};
use linked_list_allocator::Heap;

use super::lock::IrqPmtLock;
use super::physmem::phys_to_virt;

/// Block sizes kept: multiples of GRAIN up to CLASSES * GRAIN bytes, for
/// alignments up to ALIGN, the heap's own (a kept block's first word links
/// it to the next).
const GRAIN: usize = 16;
const ALIGN: usize = 8;
const CLASSES: usize = 32;
/// At most this many bytes are kept; beyond, frees go back to the heap, as
/// do all kept blocks when the heap cannot serve an allocation.
const KEPT_MAX: usize = 256 << 10;

struct Pool {
    heap: Heap,
    /// Per size class, the address of the first kept block (0: none).
    kept: [usize; CLASSES],
    kept_bytes: usize,
}

type HeapLock = lock_api::Mutex<IrqPmtLock, Pool>;

pub struct KernelHeap(HeapLock);

#[global_allocator]
static HEAP: KernelHeap =
    KernelHeap(HeapLock::new(Pool { heap: Heap::empty(), kept: [0; CLASSES], kept_bytes: 0 }));

/// The size class of `layout`, if its blocks are kept.
fn class_of(layout: Layout) -> Option<usize> {
    let size = layout.size().max(1);
    (size <= CLASSES * GRAIN && layout.align() <= ALIGN).then(|| size.div_ceil(GRAIN) - 1)
}

/// The layout every block of class `c` is taken from the heap with.
fn class_layout(c: usize) -> Layout {
    // ALIGN is a power of two and the size a multiple of it: always valid.
    Layout::from_size_align((c + 1) * GRAIN, ALIGN).unwrap_or(Layout::new::<[u64; 2]>())
}

impl Pool {
    fn take(&mut self, layout: Layout) -> *mut u8 {
        if let Ok(p) = self.heap.allocate_first_fit(layout) {
            return p.as_ptr();
        }
        if self.kept_bytes == 0 {
            return null_mut();
        }
        self.give_back_kept();
        self.heap.allocate_first_fit(layout).map_or(null_mut(), |p| p.as_ptr())
    }

    fn give_back_kept(&mut self) {
        for c in 0..CLASSES {
            while self.kept[c] != 0 {
                let block = self.kept[c];
                // SAFETY: a kept block is a live block of class c's layout,
                // taken from this heap, whose first word links the next.
                unsafe {
                    self.kept[c] = *(block as *const usize);
                    self.heap.deallocate(NonNull::new_unchecked(block as *mut u8), class_layout(c));
                }
            }
        }
        self.kept_bytes = 0;
    }
}

// SAFETY: every allocation is served from the one heap under its lock, and
// freed memory goes back to that heap with the layout it was taken with
// (a kept class's blocks all with that class's, which class_of derives from
// the caller's layout alone), or is kept whole until reused as such.
unsafe impl GlobalAlloc for KernelHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let mut pool = self.0.lock();
        let Some(c) = class_of(layout) else {
            return pool.take(layout);
        };
        let block = pool.kept[c];
        if block == 0 {
            return pool.take(class_layout(c));
        }
        // SAFETY: a kept block is ours, of class c, its first word the link.
        pool.kept[c] = unsafe { *(block as *const usize) };
        pool.kept_bytes -= (c + 1) * GRAIN;
        block as *mut u8
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let Some(p) = NonNull::new(ptr) else { return };
        let mut pool = self.0.lock();
        match class_of(layout) {
            Some(c) if pool.kept_bytes + (c + 1) * GRAIN <= KEPT_MAX => {
                // SAFETY: the caller gives the block up (GlobalAlloc
                // contract); it is at least GRAIN bytes and ALIGN-aligned.
                unsafe { *(ptr as *mut usize) = pool.kept[c] };
                pool.kept[c] = ptr as usize;
                pool.kept_bytes += (c + 1) * GRAIN;
            }
            // SAFETY: `ptr` came from alloc() with this layout (GlobalAlloc
            // contract), so from the heap with its class's.
            Some(c) => unsafe { pool.heap.deallocate(p, class_layout(c)) },
            // SAFETY: as above, from the heap with this very layout.
            None => unsafe { pool.heap.deallocate(p, layout) },
        }
    }
}

/// Gives the heap the physical range [phys, phys + size), once.
pub(crate) fn init(phys: u64, size: usize) {
    // SAFETY: the caller hands over frames reserved for the heap alone; they
    // are mapped at their direct-map address.
    unsafe { HEAP.0.lock().heap.init(phys_to_virt(phys) as *mut u8, size) };
}

/// (used, free) bytes, for the self-tests; kept blocks count as free.
pub fn usage() -> (usize, usize) {
    let p = HEAP.0.lock();
    (p.heap.used() - p.kept_bytes, p.heap.free() + p.kept_bytes)
}
