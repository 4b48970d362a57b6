//! Starting a secondary CPU: copy the trampoline to its page below 1 MiB,
//! fill its slots (struct atoll_trampoline_slots), INIT-SIPI-SIPI.

use atoll_abi::{TrampolineSlots, TRAMPOLINE_SLOTS};
use core::mem::offset_of;

use super::{apic, physmem::phys_to_virt, tsc};

extern "C" {
    static trampoline_start: u8;
    static trampoline_end: u8;
    fn ap_entry64();
}

/// Where the trampoline runs and which page tables it enters long mode with.
#[derive(Clone, Copy, Debug)]
pub struct Trampoline {
    /// Page-aligned, below 1 MiB, mapped in the direct map.
    pub phys: u64,
    /// Below 4 GiB; identity-maps `phys` and maps the kernel.
    pub cr3: u64,
}

fn put(page: u64, field: usize, value: u64) {
    let at = phys_to_virt(page + (TRAMPOLINE_SLOTS + field) as u64) as *mut u64;
    // SAFETY: the trampoline page is reserved for starting CPUs (never handed
    // to the frame allocator) and mapped in the direct map.
    unsafe { core::ptr::write_volatile(at, value) };
}

/// Sends the start-up sequence to `apic_id`; the CPU arrives in `ap_main(cpu)`
/// on `stack_top`. The caller waits for it to report in.
pub(crate) fn start_cpu(t: Trampoline, apic_id: u32, cpu: usize, stack_top: u64) {
    // SAFETY: copying the trampoline's bytes (from the image) to its page.
    unsafe {
        let start = &trampoline_start as *const u8;
        let len = &trampoline_end as *const u8 as usize - start as usize;
        core::ptr::copy_nonoverlapping(start, phys_to_virt(t.phys) as *mut u8, len);
    }
    put(t.phys, offset_of!(TrampolineSlots, cr3), t.cr3);
    put(t.phys, offset_of!(TrampolineSlots, stack), stack_top);
    put(t.phys, offset_of!(TrampolineSlots, entry), ap_entry64 as *const () as u64);
    put(t.phys, offset_of!(TrampolineSlots, arg0), cpu as u64);
    apic::send_init(apic_id);
    // The MP spec's 10 ms wait after INIT is for CPUs older than the
    // Pentium 4 era; Linux skips it on modern ones, and so does this.
    tsc::delay_us(10);
    let page = (t.phys >> 12) as u8;
    apic::send_startup(apic_id, page);
    tsc::delay_us(200);
    apic::send_startup(apic_id, page);
}
