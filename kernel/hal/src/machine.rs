//! Bringing the machine up on the boot CPU, in order: frames and heap, CPU
//! tables, the CPU list, the direct map, APIC mode and timers, SYSCALL.
//! Secondary CPUs come later (`smp::start_secondaries`).

use crate::boot::BootInfo;
use crate::{apic, cpu, irq, mem, smp, string, tsc};

/// Choices the kernel's command line makes about the machine.
pub struct Options {
    /// At most this many CPUs (standalone).
    pub cpu_limit: usize,
    /// Use x2APIC when the CPU offers it (standalone; an enclave keeps Linux's mode).
    pub x2apic_if_offered: bool,
}

/// Sets up memory, this CPU and the CPU list from what the boot path found.
pub fn init(info: &BootInfo, options: Options) {
    string::init();
    let enclave = info.enclave.as_ref();
    let reserved = enclave.map_or((0, 0), |e| e.shared);
    mem::init(&info.ram, reserved, info.boot_mapped_end);
    smp::init_this_cpu_tables();

    let features = cpu::features();
    let (lapic_phys, use_x2apic) = match enclave {
        // Linux chose the APIC mode of these CPUs; the LWK keeps it.
        Some(e) => {
            smp::use_enclave_cpus(&e.apic_ids[..e.cpu_count]);
            (e.lapic_phys, e.x2apic)
        }
        None => {
            let lapic = smp::discover(
                info.rsdp,
                || {
                    // The boot CPU's APIC id, read before paging changes (CPUID leaf 1).
                    raw_cpuid::CpuId::new()
                        .get_feature_info()
                        .map_or(0, |f| f.initial_local_apic_id() as u32)
                },
                options.cpu_limit,
            );
            (lapic, features.x2apic && options.x2apic_if_offered)
        }
    };
    mem::build_page_tables(&info.ram, lapic_phys, info.trampoline.phys, features.pages_1g);
    let (free, total) = mem::frame_counts();
    crate::println!(
        "memory: {} MiB usable, {} MiB free after kernel heap; direct map with {} pages",
        (total * 4096) >> 20,
        (free * 4096) >> 20,
        if features.pages_1g { "1 GiB/2 MiB" } else { "2 MiB" }
    );

    apic::choose_mode(lapic_phys, use_x2apic, features.tsc_deadline);
    // The PIT and the legacy PIC belong to Linux in an enclave; Linux measured the TSC.
    let hz = match enclave {
        Some(e) => {
            tsc::set_hz(e.tsc_hz);
            e.tsc_hz
        }
        None => {
            apic::mask_legacy_pic();
            tsc::calibrate()
        }
    };
    smp::init_this_cpu_interrupts();
    apic::calibrate_timer();
    crate::println!(
        "cpu: TSC {}.{:03} MHz{}, APIC {} mode, timer {}",
        hz / 1_000_000,
        (hz / 1000) % 1000,
        if features.invariant_tsc { " (invariant)" } else { "" },
        if apic::is_x2apic() { "x2APIC" } else { "xAPIC" },
        if apic::uses_tsc_deadline() { "TSC-deadline" } else { "one-shot" },
    );
    irq::init();
}
