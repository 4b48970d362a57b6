//! Single instructions and CPU feature queries.

use raw_cpuid::CpuId;

/// Reads the time-stamp counter.
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: RDTSC has no side effects; CR4.TSD is never set by this kernel.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// Waits for the next interrupt with interrupts enabled; `sti; hlt` is one
/// step, so an interrupt arriving after the caller's last check still wakes it.
#[inline]
pub fn enable_interrupts_and_halt() {
    x86_64::instructions::interrupts::enable_and_hlt();
}

pub fn disable_interrupts() {
    x86_64::instructions::interrupts::disable();
}

pub fn enable_interrupts() {
    x86_64::instructions::interrupts::enable();
}

pub fn interrupts_enabled() -> bool {
    x86_64::instructions::interrupts::are_enabled()
}

/// Disables interrupts and returns whether they were enabled before.
#[inline]
pub fn save_and_disable_interrupts() -> bool {
    let was = interrupts_enabled();
    disable_interrupts();
    was
}

#[inline]
pub fn restore_interrupts(was_enabled: bool) {
    if was_enabled {
        enable_interrupts();
    }
}

/// Stops this core for good.
pub fn halt_forever() -> ! {
    loop {
        disable_interrupts();
        x86_64::instructions::hlt();
    }
}

/// Reads CR2, the faulting address of the last page fault.
pub fn read_cr2() -> u64 {
    x86_64::registers::control::Cr2::read_raw()
}

/// What the CPU offers that the kernel cares about.
#[derive(Clone, Copy, Debug)]
pub struct Features {
    pub x2apic: bool,
    pub tsc_deadline: bool,
    pub pages_1g: bool,
    pub invariant_tsc: bool,
    pub tsc_hz_from_cpuid: Option<u64>,
}

pub fn features() -> Features {
    let id = CpuId::new();
    let fi = id.get_feature_info();
    let ext = id.get_extended_processor_and_feature_identifiers();
    let apm = id.get_advanced_power_mgmt_info();
    let tsc_hz = id.get_tsc_info().and_then(|t| t.tsc_frequency()).filter(|&hz| hz > 0);
    Features {
        x2apic: fi.as_ref().is_some_and(|f| f.has_x2apic()),
        tsc_deadline: fi.as_ref().is_some_and(|f| f.has_tsc_deadline()),
        pages_1g: ext.as_ref().is_some_and(|e| e.has_1gib_pages()),
        invariant_tsc: apm.as_ref().is_some_and(|a| a.has_invariant_tsc()),
        tsc_hz_from_cpuid: tsc_hz,
    }
}

/// Marks a spin-wait iteration for the CPU (and for QEMU, which may yield).
#[inline(always)]
pub fn relax() {
    core::hint::spin_loop();
}

/// Writes a model-specific register.
pub(crate) fn wrmsr(msr: u32, value: u64) {
    // SAFETY: only called with architectural MSRs (APIC, GS base, TSC deadline)
    // whose effects the caller owns.
    unsafe { x86_64::registers::model_specific::Msr::new(msr).write(value) }
}

pub(crate) fn rdmsr(msr: u32) -> u64 {
    // SAFETY: reading architectural MSRs has no side effects.
    unsafe { x86_64::registers::model_specific::Msr::new(msr).read() }
}

/// Reads an address the kernel never maps (the lower half), for `crashtest`.
#[cfg(feature = "testing")]
pub fn touch_unmapped_memory() {
    let addr = 0x0000_0dea_dbee_f000u64 as *const u64;
    // SAFETY: deliberately faults; the page-fault handler reports and stops.
    let _ = unsafe { core::ptr::read_volatile(addr) };
}
