//! Finding the CPUs (ACPI MADT, or the enclave's list) and bringing the
//! secondary ones up: each sets up its own tables, then enters the kernel
//! through the entry hook given to `start_secondaries`.

use alloc::vec;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use lwk_logic::acpi::{self, MadtCpu};
use spin::Once;

use crate::percpu::MAX_CPUS;
use crate::physmem::BootMemory;
use crate::{apic, cpu, gdt, idt, paging, percpu, physmem, smpboot, tsc, user};

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
pub(crate) fn discover(rsdp: Option<u64>, boot_apic_id: impl Fn() -> u32, limit: usize) -> u64 {
    let mem = BootMemory;
    let ebda = (physmem::read_u32(0x40e) as u64 & 0xffff) << 4;
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
pub(crate) fn use_enclave_cpus(apic_ids: &[u32]) {
    for (i, &id) in apic_ids.iter().enumerate().take(MAX_CPUS) {
        APIC_IDS[i].store(id, Ordering::Relaxed);
    }
    COUNT.store(apic_ids.len().min(MAX_CPUS), Ordering::Relaxed);
}

pub fn mark_online(cpu: usize) {
    ONLINE[cpu].store(true, Ordering::Release);
}

/// The kernel's code for a secondary CPU, once its tables are set up.
static SECONDARY_ENTRY: Once<fn(usize) -> !> = Once::new();

/// Each CPU index's boot stack (its idle context), made once and used
/// again when a CPU starts at that index after another was parked there.
static AP_STACK_TOPS: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];

/// A start's outcome, decided once: the CPU claims it as it arrives, or the
/// starter gives up on it first; a CPU that arrives late then halts (the
/// host parks it) instead of joining as a CPU nobody waits for.
static START: [AtomicU8; MAX_CPUS] = [const { AtomicU8::new(IDLE) }; MAX_CPUS];
const IDLE: u8 = 0;
const STARTING: u8 = 1;
const CLAIMED: u8 = 2;
const ABANDONED: u8 = 3;

/// Starts every secondary CPU, one at a time (they share the trampoline).
/// Each enters `entry(index)` with its GDT, IDT, APIC, kernel page tables
/// and SYSCALL set up, interrupts off; it calls `mark_online` when ready.
pub fn start_secondaries(trampoline: crate::smpboot::Trampoline, entry: fn(usize) -> !) {
    SECONDARY_ENTRY.call_once(|| entry);
    for i in 1..count() {
        if !start_one(trampoline, i) {
            crate::println!("smp: CPU {} (APIC id {}) did not come up", i, apic_id_of(i));
        }
    }
}

/// A CPU added while the kernel runs (the host lent the trampoline page):
/// started at `index` as the boot CPU started the others. False if it did
/// not come up within 2 s.
pub fn start_cpu(trampoline: crate::smpboot::Trampoline, index: usize, apic_id: u32) -> bool {
    assert!(index > 0 && index < MAX_CPUS && !is_online(index), "CPU index {index} is taken");
    APIC_IDS[index].store(apic_id, Ordering::Relaxed);
    COUNT.fetch_max(index + 1, Ordering::AcqRel);
    start_one(trampoline, index)
}

fn start_one(trampoline: crate::smpboot::Trampoline, i: usize) -> bool {
    let mut top = AP_STACK_TOPS[i].load(Ordering::Acquire);
    if top == 0 {
        let stack = alloc::boxed::Box::leak(vec![0u8; AP_STACK_SIZE].into_boxed_slice());
        top = (stack.as_ptr() as u64 + AP_STACK_SIZE as u64) & !15;
        AP_STACK_TOPS[i].store(top, Ordering::Release);
    }
    START[i].store(STARTING, Ordering::Release);
    smpboot::start_cpu(trampoline, apic_id_of(i), i, top);
    let deadline = cpu::rdtsc() + tsc::ns_to_cycles(2_000_000_000);
    while !is_online(i) && cpu::rdtsc() < deadline {
        cpu::relax();
    }
    if !is_online(i)
        && START[i]
            .compare_exchange(STARTING, ABANDONED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    {
        return false;
    }
    // Claimed: it is on its way (tables set up, joining the scheduler).
    while !is_online(i) {
        cpu::relax();
    }
    true
}

/// Takes this CPU out of service for good: no timer, offline, halted with
/// interrupts off until the host parks it (INIT) and gives it to Linux.
/// The kernel has moved all its work away first.
pub fn park_this_cpu() -> ! {
    cpu::disable_interrupts();
    apic::cancel_timer();
    ONLINE[percpu::cpu_index()].store(false, Ordering::Release);
    cpu::halt_forever()
}

/// Loads this CPU's GDT, TSS and IDT (the secondaries do it in `ap_main`).
pub(crate) fn init_this_cpu_tables() {
    gdt::init_this_cpu();
    idt::load();
}

/// Makes this CPU ready for interrupts and user mode (after the APIC mode
/// is chosen).
pub(crate) fn init_this_cpu_interrupts() {
    apic::init_this_cpu();
    user::init_this_cpu();
}

/// First Rust code on a secondary CPU (from ap_entry64 in boot.S).
#[no_mangle]
extern "C" fn ap_main(index: u64) -> ! {
    let index = index as usize;
    if START[index]
        .compare_exchange(STARTING, CLAIMED, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        cpu::halt_forever(); // too late: the starter gave up on it
    }
    percpu::init_cpu(index);
    paging::activate_kernel_tables();
    init_this_cpu_tables();
    init_this_cpu_interrupts();
    match SECONDARY_ENTRY.get() {
        Some(entry) => entry(index),
        None => cpu::halt_forever(),
    }
}
