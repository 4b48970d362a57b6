//! Finding the CPUs (ACPI MADT) and bringing the secondary ones up.

use alloc::vec;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use lwk_logic::acpi::{self, MadtCpu};

use crate::arch::{self, apic, cpu, percpu::MAX_CPUS, physmem::BootMemory, smpboot, tsc};

static APIC_IDS: [AtomicU32; MAX_CPUS] = [const { AtomicU32::new(0) }; MAX_CPUS];
static ONLINE: [AtomicBool; MAX_CPUS] = [const { AtomicBool::new(false) }; MAX_CPUS];
static COUNT: AtomicUsize = AtomicUsize::new(1);

const AP_STACK_SIZE: usize = 64 * 1024;

pub fn count() -> usize {
    COUNT.load(Ordering::Relaxed)
}

pub fn apic_id_of(cpu: usize) -> u32 {
    APIC_IDS[cpu].load(Ordering::Relaxed)
}

pub fn is_online(cpu: usize) -> bool {
    cpu < MAX_CPUS && ONLINE[cpu].load(Ordering::Acquire)
}

/// The CPUs that are online, in index order.
pub fn online_cpus() -> impl Iterator<Item = usize> {
    (0..count()).filter(|&c| is_online(c))
}

pub fn online_count() -> usize {
    online_cpus().count()
}

/// Reads the MADT; returns the local APIC's physical address. CPU 0 is the
/// boot CPU; `limit` caps how many CPUs the kernel uses.
pub fn discover(rsdp: Option<u64>, boot_apic_id: impl Fn() -> u32, limit: usize) -> u64 {
    let mem = BootMemory;
    let ebda = (arch::physmem::read_u32(0x40e) as u64 & 0xffff) << 4;
    let rsdp = rsdp
        .or_else(|| acpi::find_rsdp(&mem, &[(ebda, ebda + 1024), (0xe0000, 0x100000)]))
        .unwrap_or_else(|| crate::fatal!("no ACPI RSDP found: cannot find the CPUs"));
    let mut cpus = [MadtCpu { apic_id: 0, enabled: false }; MAX_CPUS];
    let info = acpi::read_madt(&mem, rsdp, &mut cpus)
        .unwrap_or_else(|e| crate::fatal!("reading the ACPI MADT failed: {:?}", e));
    let boot = boot_apic_id();
    APIC_IDS[0].store(boot, Ordering::Relaxed);
    let mut n = 1;
    for c in cpus[..info.cpu_count].iter().filter(|c| c.enabled && c.apic_id != boot) {
        if n >= limit.min(MAX_CPUS) {
            break;
        }
        APIC_IDS[n].store(c.apic_id, Ordering::Relaxed);
        n += 1;
    }
    COUNT.store(n, Ordering::Relaxed);
    info.lapic_phys
}

/// As a co-kernel the CPUs are the enclave's, from the boot parameters
/// ([0] is the boot CPU), not the machine's MADT.
pub fn use_enclave_cpus(apic_ids: &[u32]) {
    for (i, &id) in apic_ids.iter().enumerate().take(MAX_CPUS) {
        APIC_IDS[i].store(id, Ordering::Relaxed);
    }
    COUNT.store(apic_ids.len().min(MAX_CPUS), Ordering::Relaxed);
}

pub fn mark_online(cpu: usize) {
    ONLINE[cpu].store(true, Ordering::Release);
}

/// Starts every secondary CPU, one at a time (they share the trampoline).
pub fn start_secondaries(trampoline: smpboot::Trampoline) {
    for i in 1..count() {
        let stack = alloc::boxed::Box::leak(vec![0u8; AP_STACK_SIZE].into_boxed_slice());
        let top = (stack.as_ptr() as u64 + AP_STACK_SIZE as u64) & !15;
        smpboot::start_cpu(trampoline, apic_id_of(i), i, top);
        let deadline = cpu::rdtsc() + tsc::ns_to_cycles(2_000_000_000);
        while !is_online(i) && cpu::rdtsc() < deadline {
            cpu::relax();
        }
        if !is_online(i) {
            crate::println!("smp: CPU {} (APIC id {}) did not come up", i, apic_id_of(i));
        }
    }
}

/// First Rust code on a secondary CPU.
pub fn secondary_main(index: usize) -> ! {
    arch::percpu::init_cpu(index);
    arch::paging::activate_kernel_tables();
    arch::gdt::init_this_cpu();
    arch::idt::load();
    apic::init_this_cpu();
    arch::user::init_this_cpu();
    crate::sched::init_cpu(index, true);
    mark_online(index);
    crate::sched::idle_loop()
}
