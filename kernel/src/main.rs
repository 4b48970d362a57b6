//! Atoll's lightweight kernel (LWK).
//!
//! Boot order: console, boot information, memory (frames, heap, direct map),
//! CPU tables, APIC and timers, scheduler, secondary CPUs; then the command
//! line says what to run (`selftest`, `crashtest`, `bench`).

#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

#[allow(unsafe_code)]
mod arch;
mod bench;
mod boot;
mod channel;
mod console;
mod console_ring;
mod ipi;
mod mem;
mod process;
mod sched;
mod selftest;
mod smp;
mod sync;
mod syscall;
mod trap;

use arch::{apic, cpu, tsc};
use boot::BootInfo;

const DEFAULT_PMT_TAU: u32 = 16;
/// Gaps between TSC reads above this count as detours (`noise=<seconds>`).
const DEFAULT_NOISE_THRESHOLD_NS: u64 = 2_000;

pub fn kmain(info: BootInfo) -> ! {
    let info = boot::keep(info);
    let cmd = boot::cmdline();
    let (image_start, _) = arch::physmem::image_range();
    println!(
        "Atoll LWK: booting ({:?}), image at physical {:#x}, command line \"{}\"",
        info.kind, image_start, info.cmdline_str()
    );
    // pmtlock's unit timeout, in spin iterations per waiter ahead. The paper's
    // 2^10 assumes ~1 ns iterations; measured on QEMU TCG (bench/README) a spin
    // iteration costs ~1 us, and tau 16 gave the best throughput and fairness.
    lwk_logic::locks::set_default_tau(cmd.value_u64("pmt_tau").map_or(DEFAULT_PMT_TAU, |t| t as u32));

    let enclave = info.enclave.as_ref();
    let reserved = enclave.map_or((0, 0), |e| e.shared);
    mem::init(&info.ram, reserved, info.boot_mapped_end);
    arch::gdt::init_this_cpu();
    arch::idt::load();

    let features = cpu::features();
    let (lapic_phys, use_x2apic) = match enclave {
        // Linux chose the APIC mode of these CPUs; the LWK keeps it.
        Some(e) => {
            smp::use_enclave_cpus(&e.apic_ids[..e.cpu_count]);
            (e.lapic_phys, e.x2apic)
        }
        None => {
            let cpu_limit = cmd.value_u64("cpus").map_or(usize::MAX, |n| n as usize);
            let lapic = smp::discover(info.rsdp, || {
                // The boot CPU's APIC id, read before paging changes (CPUID leaf 1).
                raw_cpuid::CpuId::new().get_feature_info().map_or(0, |f| f.initial_local_apic_id() as u32)
            }, cpu_limit);
            (lapic, features.x2apic && !cmd.has("xapic"))
        }
    };
    mem::build_page_tables(&info.ram, lapic_phys, info.trampoline.phys, features.pages_1g);
    let (free, total) = mem::frame_counts();
    println!(
        "memory: {} MiB usable, {} MiB free after kernel heap; direct map with {} pages",
        total * 4096 >> 20, free * 4096 >> 20, if features.pages_1g { "1 GiB/2 MiB" } else { "2 MiB" }
    );

    apic::choose_mode(lapic_phys, use_x2apic, features.tsc_deadline);
    apic::init_this_cpu();
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
    apic::calibrate_timer();
    println!(
        "cpu: TSC {}.{:03} MHz{}, APIC {} mode, timer {}",
        hz / 1_000_000, (hz / 1000) % 1000,
        if features.invariant_tsc { " (invariant)" } else { "" },
        if apic::is_x2apic() { "x2APIC" } else { "xAPIC" },
        if apic::uses_tsc_deadline() { "TSC-deadline" } else { "one-shot" },
    );

    ipi::init();
    arch::user::init_this_cpu();
    if let Some(e) = enclave {
        channel::init(e.channel_phys);
    }
    sched::init_cpu(0, false);
    smp::mark_online(0);
    cpu::enable_interrupts();
    smp::start_secondaries(info.trampoline);
    println!("smp: {} of {} CPUs online", smp::online_count(), smp::count());
    if let Some(e) = enclave {
        println!("Atoll LWK: enclave {} booted on {} CPUs", e.id, smp::online_count());
        process::launch::init(e.shared.0);
        channel::report_booted(smp::online_count());
    }

    // Standalone, a finished run powers QEMU off with its verdict; in an
    // enclave the LWK stays up for the host (console, ping, destroy).
    let standalone = enclave.is_none();
    if cmd.has("selftest") {
        let ok = selftest::run_all();
        if standalone {
            trap::stop_system(ok);
        }
    } else if cmd.has("crashtest") {
        selftest::crash::run();
    } else if cmd.has("hangtest") {
        // A hung LWK on purpose: deaf to the host, for `atoll destroy --force`.
        cpu::disable_interrupts();
        loop {
            cpu::relax();
        }
    } else if let Some(seconds) = cmd.value_u64("noise") {
        bench::noise::selfish_detour(seconds, cmd.value_u64("noise_threshold").unwrap_or(DEFAULT_NOISE_THRESHOLD_NS));
    } else if cmd.has("bench") {
        bench::run_all();
        if standalone {
            trap::stop_system(true);
        }
    } else {
        println!("Atoll LWK: booted, nothing to run (command line: selftest, crashtest, bench, noise=<seconds>)");
    }
    sched::idle_loop()
}
