//! Atoll's lightweight kernel (LWK): scheduling, programs and their system
//! calls, and messages to the host. Safe Rust only: everything
//! that touches the hardware is in the `hal` crate, which calls back into
//! this crate only through the hooks registered here and in `trap`.
//!
//! Boot order: the hardware layer brings up memory, this CPU and its APIC;
//! then the hooks, the scheduler, the secondary CPUs; then the command line
//! says what to run.

#![no_std]
#![no_main]
#![forbid(unsafe_code)]

extern crate alloc;

#[cfg(feature = "testing")]
mod bench;
mod boot;
mod kmsg;
mod lifecycle;
mod mm;
mod noise;
mod pipe;
mod process;
mod resize;
mod sched;
#[cfg(feature = "testing")]
mod selftest;
mod status;
mod sync;
mod syscall;
mod tlb;
mod trap;
mod usermsg;

use hal::{println, BootInfo};

hal::entry!(kmain);

const DEFAULT_PMT_TAU: u32 = 16;

fn kmain(info: BootInfo) -> ! {
    let info = boot::keep(info);
    let cmd = boot::cmdline();
    let (image_start, _) = hal::physmem::image_range();
    println!(
        "Atoll LWK: booting ({:?}), image at physical {:#x}, command line \"{}\"",
        info.kind,
        image_start,
        info.cmdline_str()
    );
    // pmtlock's unit timeout, in spin iterations per waiter ahead. The paper's
    // 2^10 assumes ~1 ns iterations; measured on QEMU TCG (bench/README) a spin
    // iteration costs ~1 us, and tau 16 gave the best throughput and fairness.
    let tau = cmd.value_u64("pmt_tau").map_or(DEFAULT_PMT_TAU, |t| t as u32);
    lwk_logic::locks::set_default_tau(tau);

    let options = hal::machine::Options {
        cpu_limit: cmd.value_u64("cpus").map_or(usize::MAX, |n| n as usize),
        x2apic_if_offered: !cmd.has("xapic"),
    };
    hal::machine::init(info, options);
    trap::init();
    sched::init();
    let enclave = info.enclave.as_ref();
    if let Some(e) = enclave {
        status::init(e.status_phys);
        kmsg::init_host(e.shared.0, e.host_apic_id);
        lifecycle::init();
    }
    sched::init_cpu(0, false);
    hal::smp::mark_online(0);
    hal::cpu::enable_interrupts();
    hal::smp::start_secondaries(info.trampoline, secondary_main);
    println!("smp: {} of {} CPUs online", hal::smp::online_count(), hal::smp::count());
    if let Some(e) = enclave {
        println!("Atoll LWK: enclave {} booted on {} CPUs", e.id, hal::smp::online_count());
        tlb::init();
        kmsg::init_peers();
        usermsg::init();
        process::launch::init(e.shared.0);
        process::xemem::init();
        syscall::init();
        resize::init();
        noise::init();
        #[cfg(feature = "testing")]
        {
            selftest::kmsg::init();
            selftest::kmsg_bench::init();
        }
        lifecycle::report_booted(hal::smp::online_count());
    }
    run_command();
    sched::idle_loop()
}

/// A secondary CPU, its hardware set up: join the scheduler and idle.
fn secondary_main(index: usize) -> ! {
    sched::init_cpu(index, true);
    tlb::cpu_starting(index);
    hal::smp::mark_online(index);
    sched::idle_loop()
}

/// Runs what the command line asks for. Standalone, a finished run powers
/// QEMU off with its verdict; in an enclave the LWK stays up for the host
/// (console, ping, programs, destroy).
#[cfg(feature = "testing")]
fn run_command() {
    let cmd = boot::cmdline();
    let standalone = boot::enclave().is_none();
    if cmd.has("selftest") {
        let ok = selftest::run_all();
        if standalone {
            hal::stop::stop_system(ok);
        }
    } else if cmd.has("crashtest") {
        selftest::crash::run();
    } else if cmd.has("hangtest") {
        selftest::crash::hang();
    } else if cmd.value_u64("refuse_resize").is_some() {
        println!("Atoll LWK: booted; it will refuse the block `refuse_resize` names");
    } else if let Some(seed) = cmd.value_u64("kmsggarbage") {
        selftest::kmsg::garbage(seed);
    } else if let Some(peer) = cmd.value_u64("kmsgflood") {
        selftest::kmsg::flood_peer(peer as u32);
    } else if let Some(victim) = cmd.value_u64("xememforge") {
        selftest::xemem_forge::forge(victim as u32);
    } else if cmd.has("bench") {
        bench::run_all();
        if standalone {
            hal::stop::stop_system(true);
        }
    } else {
        println!(
            "Atoll LWK: booted, nothing to run \
             (command line: selftest, crashtest, hangtest, kmsggarbage=<seed>, refuse_resize=<n>, \
             kmsgflood=<enclave id>, xememforge=<enclave id>, bench)"
        );
    }
}

/// The production image runs programs for the host and nothing else.
#[cfg(not(feature = "testing"))]
fn run_command() {
    let cmd = boot::cmdline();
    let asked =
        ["selftest", "crashtest", "hangtest", "kmsggarbage", "kmsgflood", "bench", "refuse_resize"];
    if let Some(word) = asked.iter().find(|w| cmd.has(w) || cmd.value(w).is_some()) {
        println!(
            "Atoll LWK: \"{}\" needs the test image (build/atoll-kernel-test, \
             `make kernel-test`); this one is built without tests",
            word
        );
    } else {
        println!("Atoll LWK: booted");
    }
}
