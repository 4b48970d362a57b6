//! Local APIC in xAPIC (MMIO) or x2APIC (MSR) mode: identity, EOI, IPIs and
//! the one-shot / TSC-deadline timer.

use atoll_abi::{ERROR_VECTOR, SPURIOUS_VECTOR, TIMER_VECTOR};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use super::{cpu, percpu, physmem::phys_to_virt, tsc};

const IA32_APIC_BASE: u32 = 0x1b;
const IA32_TSC_DEADLINE: u32 = 0x6e0;
const APIC_BASE_ENABLE: u64 = 1 << 11;
const APIC_BASE_X2APIC: u64 = 1 << 10;

// Register offsets in xAPIC MMIO; x2APIC MSR = 0x800 + offset / 16.
const REG_ID: u32 = 0x20;
const REG_TPR: u32 = 0x80;
const REG_EOI: u32 = 0xb0;
const REG_SVR: u32 = 0xf0;
const REG_ICR_LOW: u32 = 0x300;
const REG_ICR_HIGH: u32 = 0x310;
const REG_LVT_TIMER: u32 = 0x320;
const REG_LVT_LINT0: u32 = 0x350;
const REG_LVT_LINT1: u32 = 0x360;
const REG_LVT_ERROR: u32 = 0x370;
const REG_TIMER_INIT: u32 = 0x380;
const REG_TIMER_CURRENT: u32 = 0x390;
const REG_TIMER_DIVIDE: u32 = 0x3e0;

const LVT_MASKED: u32 = 1 << 16;
const LVT_TSC_DEADLINE: u32 = 0b10 << 17;
const ICR_DELIVERY_PENDING: u32 = 1 << 12;
const ICR_LEVEL_ASSERT: u32 = 1 << 14;
const ICR_ALL_BUT_SELF: u32 = 0b11 << 18;
#[cfg(feature = "testing")]
const ICR_NMI: u32 = 0b100 << 8;
const ICR_INIT: u32 = 0b101 << 8;
const ICR_STARTUP: u32 = 0b110 << 8;
const DIVIDE_BY_1: u32 = 0b1011;

static X2APIC: AtomicBool = AtomicBool::new(false);
static TSC_DEADLINE: AtomicBool = AtomicBool::new(false);
static MMIO_BASE: AtomicU64 = AtomicU64::new(0);
/// APIC timer ticks per 2^32 TSC cycles (one-shot mode only).
static TIMER_PER_TSC_2_32: AtomicU64 = AtomicU64::new(0);
/// Each CPU's timer LVT as last written: a thread switch that arms or
/// cancels the timer writes it only when its mode changes (each write to
/// the xAPIC is a trap to the hypervisor under virtualization).
static TIMER_LVT: [AtomicU32; percpu::MAX_CPUS] = [const { AtomicU32::new(0) }; percpu::MAX_CPUS];

fn set_timer_lvt(value: u32) {
    if TIMER_LVT[percpu::cpu_index()].swap(value, Ordering::Relaxed) != value {
        write(REG_LVT_TIMER, value);
    }
}

pub fn is_x2apic() -> bool {
    X2APIC.load(Ordering::Relaxed)
}

pub fn uses_tsc_deadline() -> bool {
    TSC_DEADLINE.load(Ordering::Relaxed)
}

fn read(reg: u32) -> u32 {
    if is_x2apic() {
        cpu::rdmsr(0x800 + reg / 16) as u32
    } else {
        let addr = MMIO_BASE.load(Ordering::Relaxed) + reg as u64;
        // SAFETY: the APIC page is mapped uncached at this address (paging.rs).
        unsafe { core::ptr::read_volatile(addr as *const u32) }
    }
}

fn write(reg: u32, value: u32) {
    if is_x2apic() {
        cpu::wrmsr(0x800 + reg / 16, value as u64);
    } else {
        let addr = MMIO_BASE.load(Ordering::Relaxed) + reg as u64;
        // SAFETY: as in read().
        unsafe { core::ptr::write_volatile(addr as *mut u32, value) };
    }
}

/// Chooses the mode for all CPUs (x2APIC when offered, unless told not to).
pub(crate) fn choose_mode(lapic_phys: u64, use_x2apic: bool, use_tsc_deadline: bool) {
    X2APIC.store(use_x2apic, Ordering::Relaxed);
    TSC_DEADLINE.store(use_tsc_deadline, Ordering::Relaxed);
    MMIO_BASE.store(phys_to_virt(lapic_phys), Ordering::Relaxed);
}

/// Enables this CPU's APIC in the chosen mode, with everything masked.
pub(crate) fn init_this_cpu() {
    let mut base = cpu::rdmsr(IA32_APIC_BASE) | APIC_BASE_ENABLE;
    if is_x2apic() {
        base |= APIC_BASE_X2APIC;
    }
    cpu::wrmsr(IA32_APIC_BASE, base);
    write(REG_TPR, 0);
    TIMER_LVT[percpu::cpu_index()].store(LVT_MASKED | TIMER_VECTOR as u32, Ordering::Relaxed);
    write(REG_LVT_TIMER, LVT_MASKED | TIMER_VECTOR as u32);
    write(REG_LVT_LINT0, LVT_MASKED);
    write(REG_LVT_LINT1, LVT_MASKED);
    write(REG_LVT_ERROR, ERROR_VECTOR as u32);
    write(REG_SVR, 0x100 | SPURIOUS_VECTOR as u32);
    write(REG_TIMER_DIVIDE, DIVIDE_BY_1);
}

/// This CPU's APIC id.
pub fn id() -> u32 {
    if is_x2apic() {
        read(REG_ID)
    } else {
        read(REG_ID) >> 24
    }
}

pub fn eoi() {
    write(REG_EOI, 0);
}

fn send_icr(dest: u32, low: u32) {
    let was = cpu::save_and_disable_interrupts();
    if is_x2apic() {
        cpu::wrmsr(0x830, ((dest as u64) << 32) | low as u64);
    } else {
        write(REG_ICR_HIGH, dest << 24);
        write(REG_ICR_LOW, low);
        while read(REG_ICR_LOW) & ICR_DELIVERY_PENDING != 0 {
            cpu::relax();
        }
    }
    cpu::restore_interrupts(was);
}

pub fn send_ipi(dest_apic_id: u32, vector: u8) {
    send_icr(dest_apic_id, vector as u32);
}

/// An NMI (the vector field is ignored).
#[cfg(feature = "testing")]
pub(crate) fn send_nmi(dest_apic_id: u32) {
    send_icr(dest_apic_id, ICR_NMI);
}

pub(crate) fn send_ipi_all_but_self(vector: u8) {
    send_icr(0, ICR_ALL_BUT_SELF | vector as u32);
}

pub(crate) fn send_init(dest_apic_id: u32) {
    send_icr(dest_apic_id, ICR_INIT | ICR_LEVEL_ASSERT);
}

pub(crate) fn send_startup(dest_apic_id: u32, page: u8) {
    send_icr(dest_apic_id, ICR_STARTUP | page as u32);
}

/// Measures the one-shot timer's rate against the TSC (not needed in
/// TSC-deadline mode).
pub(crate) fn calibrate_timer() {
    if uses_tsc_deadline() {
        return;
    }
    set_timer_lvt(LVT_MASKED | TIMER_VECTOR as u32);
    write(REG_TIMER_INIT, u32::MAX);
    let start = cpu::rdtsc();
    let window = tsc::hz() / 100; // 10 ms
    while cpu::rdtsc() - start < window {
        cpu::relax();
    }
    let ticks = u32::MAX - read(REG_TIMER_CURRENT);
    let cycles = cpu::rdtsc() - start;
    write(REG_TIMER_INIT, 0);
    TIMER_PER_TSC_2_32
        .store(((ticks as u128) << 32).div_ceil(cycles as u128) as u64, Ordering::Relaxed);
}

/// Fires TIMER_VECTOR once, at (or soon after) the given TSC value.
pub fn arm_timer_at(tsc_deadline: u64) {
    if uses_tsc_deadline() {
        set_timer_lvt(LVT_TSC_DEADLINE | TIMER_VECTOR as u32);
        cpu::wrmsr(IA32_TSC_DEADLINE, tsc_deadline.max(1));
    } else {
        let delta = tsc_deadline.saturating_sub(cpu::rdtsc());
        let rate = TIMER_PER_TSC_2_32.load(Ordering::Relaxed) as u128;
        let ticks = ((delta as u128 * rate) >> 32).clamp(1, u32::MAX as u128) as u32;
        set_timer_lvt(TIMER_VECTOR as u32);
        write(REG_TIMER_INIT, ticks);
    }
}

/// Stops the timer: a deadline of 0, or an initial count of 0, arms
/// nothing (Intel SDM 11.5.4); the LVT stays as it is for the next arm.
pub fn cancel_timer() {
    if uses_tsc_deadline() {
        cpu::wrmsr(IA32_TSC_DEADLINE, 0);
    } else {
        write(REG_TIMER_INIT, 0);
    }
}

/// Masks the legacy 8259 PICs so only the APIC delivers interrupts.
pub(crate) fn mask_legacy_pic() {
    use x86_64::instructions::port::Port;
    // SAFETY: writing 0xff to the PIC data ports masks every legacy IRQ.
    unsafe {
        Port::<u8>::new(0x21).write(0xff);
        Port::<u8>::new(0xa1).write(0xff);
    }
}
