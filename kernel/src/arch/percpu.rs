//! Which CPU am I? Each CPU's GS base points at its slot in `SLOTS`, whose first
//! word is the CPU's index, so `cpu_index()` is a single `mov %gs:0`.

use core::arch::asm;

pub const MAX_CPUS: usize = 64;
const IA32_GS_BASE: u32 = 0xC000_0101;

#[repr(C, align(64))]
struct Slot {
    index: u64,
}

static SLOTS: [Slot; MAX_CPUS] = {
    let mut slots = [const { Slot { index: 0 } }; MAX_CPUS];
    let mut i = 0;
    while i < MAX_CPUS {
        slots[i].index = i as u64;
        i += 1;
    }
    slots
};

pub fn init_boot_cpu() {
    init_cpu(0);
}

pub fn init_cpu(index: usize) {
    super::cpu::wrmsr(IA32_GS_BASE, &SLOTS[index] as *const Slot as u64);
}

#[inline(always)]
pub fn cpu_index() -> usize {
    let index: u64;
    // SAFETY: GS base is set to a valid slot before any Rust code runs on a CPU.
    unsafe { asm!("mov {}, gs:[0]", out(reg) index, options(nostack, readonly, preserves_flags)) };
    index as usize
}
