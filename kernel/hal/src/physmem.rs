//! Access to physical memory through the direct map.

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
/// `mem::init` (boot memory) and `mem::add_region` (a block the host adds)
/// call this, once per region, with frames they then mark used, so nothing
/// else can own them; `mem::remove_block` drops the region, bitmap and all,
/// before the block's memory goes back.
pub(crate) fn claim_for_allocator(phys: u64, words: usize) -> &'static mut [u64] {
    let ptr = phys_to_virt(phys) as *mut u64;
    // SAFETY: mem::init passes only ranges the boot tables map (the direct
    // map), mem::add_region only a block blocks.rs just mapped; both reserve them in
    // the allocator for this bitmap while the region exists, and the region
    // (which holds the only reference) goes before its memory does.
    unsafe {
        core::ptr::write_bytes(ptr, 0, words);
        core::slice::from_raw_parts_mut(ptr, words)
    }
}
