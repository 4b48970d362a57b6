//! Starting a secondary CPU standalone: copy the trampoline below 1 MiB, fill
//! its parameter slots, INIT-SIPI-SIPI.

use super::{apic, paging, physmem::phys_to_virt, tsc};

pub const TRAMPOLINE_PHYS: u64 = 0x8000;

extern "C" {
    static trampoline_start: u8;
    static trampoline_end: u8;
    static trampoline_cr3: u8;
    static trampoline_stack: u8;
    static trampoline_entry: u8;
    static trampoline_cpu: u8;
    fn ap_entry64();
}

fn offset_of(sym: &u8) -> u64 {
    // SAFETY: only addresses are taken.
    sym as *const u8 as u64 - unsafe { &trampoline_start as *const u8 as u64 }
}

fn put(slot: &u8, value: u64) {
    let at = phys_to_virt(TRAMPOLINE_PHYS + offset_of(slot)) as *mut u64;
    // SAFETY: the trampoline page below 1 MiB is reserved for it (never handed
    // to the frame allocator) and mapped in the direct map.
    unsafe { core::ptr::write_volatile(at, value) };
}

/// Sends the start-up sequence to `apic_id`; the CPU arrives in `ap_main(cpu)`
/// on `stack_top`. The caller waits for it to report in.
pub fn start_cpu(apic_id: u32, cpu: usize, stack_top: u64) {
    // SAFETY: copying the trampoline's bytes (from the image) to its reserved page.
    unsafe {
        let start = &trampoline_start as *const u8;
        let len = &trampoline_end as *const u8 as usize - start as usize;
        core::ptr::copy_nonoverlapping(start, phys_to_virt(TRAMPOLINE_PHYS) as *mut u8, len);
        put(&trampoline_cr3, paging::boot_tables_phys());
        put(&trampoline_stack, stack_top);
        put(&trampoline_entry, ap_entry64 as *const () as u64);
        put(&trampoline_cpu, cpu as u64);
    }
    apic::send_init(apic_id);
    tsc::delay_us(10_000);
    let page = (TRAMPOLINE_PHYS >> 12) as u8;
    apic::send_startup(apic_id, page);
    tsc::delay_us(200);
    apic::send_startup(apic_id, page);
}
