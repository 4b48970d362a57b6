//! Access to physical memory through the direct map.

use core::sync::atomic::Ordering;
use lwk_logic::acpi::PhysRead;

/// All physical memory the kernel owns is mapped at `phys + KERNEL_OFFSET`,
/// leaving the lower half free for user programs (the host maps it there
/// to boot the LWK: an ABI constant).
pub use atoll_abi::KERNEL_OFFSET;

extern "C" {
    static __image_start: u8;
    static __image_end: u8;
}

pub const fn phys_to_virt(phys: u64) -> u64 {
    phys.wrapping_add(KERNEL_OFFSET)
}

pub const fn virt_to_phys(virt: u64) -> u64 {
    virt.wrapping_sub(KERNEL_OFFSET)
}

/// Physical [start, end) of the loaded kernel image, bss included.
pub fn image_range() -> (u64, u64) {
    // SAFETY: only the addresses of linker-defined symbols are taken.
    let (start, end) =
        unsafe { (&__image_start as *const u8 as u64, &__image_end as *const u8 as u64) };
    (virt_to_phys(start), virt_to_phys(end))
}

/// Reads firmware tables through the boot page tables (first 4 GiB mapped).
pub(crate) struct BootMemory;

impl PhysRead for BootMemory {
    fn read(&self, phys: u64, buf: &mut [u8]) {
        let src = phys_to_virt(phys) as *const u8;
        // SAFETY: callers read firmware tables below 4 GiB, which the boot page
        // tables map; the bytes are plain data and are copied out.
        unsafe { core::ptr::copy_nonoverlapping(src, buf.as_mut_ptr(), buf.len()) };
    }
}

/// Copies a plain-data struct out of physical memory the boot tables map
/// (firmware tables standalone, the boot parameters in an enclave).
pub(crate) fn read_struct<T: Copy>(phys: u64) -> T {
    let src = phys_to_virt(phys) as *const T;
    // SAFETY: callers name boot-mapped memory holding a `T` written by the boot
    // path; `T` is plain data (integers and arrays), valid for any bytes, and
    // read unaligned in case the writer did not align it.
    unsafe { core::ptr::read_unaligned(src) }
}

pub(crate) fn read_u64(phys: u64) -> u64 {
    let mut b = [0u8; 8];
    BootMemory.read(phys, &mut b);
    u64::from_le_bytes(b)
}

pub(crate) fn read_u32(phys: u64) -> u32 {
    let mut b = [0u8; 4];
    BootMemory.read(phys, &mut b);
    u32::from_le_bytes(b)
}

/// Hands memory to the frame allocator as a zeroed `'static` bitmap. Only
/// `mem::init` (boot memory) and `mem::add_block` (a block the host adds)
/// call this, once per region, with frames they then mark used, so nothing
/// else can own them; `mem::remove_block` drops the region, bitmap and all,
/// before the block's memory goes back.
pub(crate) fn claim_for_allocator(phys: u64, words: usize) -> &'static mut [u64] {
    let ptr = phys_to_virt(phys) as *mut u64;
    // SAFETY: mem::init passes only ranges the boot tables map (the direct
    // map), mem::add_block only a block it just mapped; both reserve them in
    // the allocator for this bitmap while the region exists, and the region
    // (which holds the only reference) goes before its memory does.
    unsafe {
        core::ptr::write_bytes(ptr, 0, words);
        core::slice::from_raw_parts_mut(ptr, words)
    }
}

/// Zeroes a physical range the caller owns.
pub fn zero_owned(phys: u64, len: usize) {
    // SAFETY: callers pass frames they just took from the frame allocator,
    // which are mapped and used by nothing else.
    unsafe { core::ptr::write_bytes(phys_to_virt(phys) as *mut u8, 0, len) };
}

// User memory and user page tables are frames the kernel owns (from the
// frame allocator), reached through the direct map. The process layer
// passes only frames its page tables own, translated under its lock.

/// Writes one word of a page-table frame.
pub(crate) fn write_u64(phys: u64, value: u64) {
    // SAFETY: an owned, direct-mapped, 8-byte aligned frame word (see above).
    unsafe { core::ptr::write_volatile(phys_to_virt(phys) as *mut u64, value) };
}

/// Compare-and-swap of one word of a page-table frame (the host's mirror
/// sets bits in leaves the same way): Ok, or Err with the word it holds.
pub(crate) fn compare_exchange_u64(phys: u64, current: u64, new: u64) -> Result<(), u64> {
    // SAFETY: an owned, direct-mapped, 8-byte aligned frame word (see
    // above), which other CPUs and the host access only atomically.
    let word = unsafe { core::sync::atomic::AtomicU64::from_ptr(phys_to_virt(phys) as *mut u64) };
    word.compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire).map(|_| ())
}

/// Copies bytes out of owned RAM.
pub fn copy_from(phys: u64, buf: &mut [u8]) {
    // SAFETY: [phys, phys+len) is owned, direct-mapped RAM (see above); the
    // bytes are plain data.
    unsafe {
        core::ptr::copy_nonoverlapping(phys_to_virt(phys) as *const u8, buf.as_mut_ptr(), buf.len())
    };
}

/// Copies bytes into owned RAM.
pub fn copy_to(phys: u64, buf: &[u8]) {
    // SAFETY: as in copy_from.
    unsafe {
        core::ptr::copy_nonoverlapping(buf.as_ptr(), phys_to_virt(phys) as *mut u8, buf.len())
    };
}

/// Copies between two owned RAM ranges that do not overlap.
pub fn copy_within(from: u64, to: u64, len: usize) {
    // SAFETY: as in copy_from; the callers copy between distinct frames.
    unsafe {
        core::ptr::copy_nonoverlapping(
            phys_to_virt(from) as *const u8,
            phys_to_virt(to) as *mut u8,
            len,
        )
    };
}

/// A user word shared with user threads (futexes), accessed atomically.
pub fn atomic_u32(phys: u64) -> &'static core::sync::atomic::AtomicU32 {
    assert!(phys.is_multiple_of(4), "unaligned futex word");
    // SAFETY: an owned, direct-mapped, aligned word (see above); user code
    // accesses it concurrently, so only atomic access is offered.
    unsafe { &*(phys_to_virt(phys) as *const core::sync::atomic::AtomicU32) }
}
