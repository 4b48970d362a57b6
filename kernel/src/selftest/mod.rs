//! The in-kernel self-tests, registered in one table (as Nautilus does).
//! Each prints its name and result; the suite ends with "N passed, N failed"
//! and the caller turns the verdict into QEMU's exit status.

pub mod crash;
mod events;
mod helpers;
pub mod kmsg;
pub mod kmsg_bench;
mod kmsg_path;
mod locks;
mod memory;
mod nmi;
mod threads;
pub mod xemem_forge;

use hal::println;
use hal::{cpu, tsc};
use helpers::TestResult;

/// (name, test)
type Test = (&'static str, fn() -> TestResult);

const TESTS: &[Test] = &[
    ("frame_allocator", memory::frame_allocator),
    ("kernel_heap", memory::kernel_heap),
    ("copy_and_fill", memory::copy_and_fill),
    ("direct_map_page_tables", memory::direct_map),
    ("threads_on_every_core", threads::on_every_core),
    ("fork_join", threads::fork_join),
    ("cooperative_yield", threads::cooperative_yield),
    ("preemptive_threads", threads::preemption),
    ("sleep_on_every_core", threads::sleep_on_every_core),
    ("tickless_single_thread", threads::tickless),
    ("ipi_unicast", events::ipi_unicast),
    ("ipi_broadcast", events::ipi_broadcast),
    ("nmi_is_the_kernels_detour", nmi::nmi_is_the_kernels_detour),
    ("cross_core_wakeup", events::cross_core_wakeup),
    ("condvar_broadcast", events::condvar_broadcast),
    ("pmtlock_contention", locks::pmtlock_contention),
    ("ticket_lock_contention", locks::ticket_contention),
];

/// Runs every test; true when all passed.
pub fn run_all() -> bool {
    println!("selftest: {} tests on {} CPUs", TESTS.len(), hal::smp::online_count());
    let (mut passed, mut failed) = (0, 0);
    for (name, test) in TESTS {
        println!("[ RUN  ] {}", name);
        let start = cpu::rdtsc();
        let result = test();
        let ms = tsc::cycles_to_ns(cpu::rdtsc() - start) / 1_000_000;
        match result {
            Ok(()) => {
                passed += 1;
                println!("[  OK  ] {} ({} ms)", name, ms);
            }
            Err(why) => {
                failed += 1;
                println!("[ FAIL ] {}: {}", name, why);
            }
        }
    }
    println!("{} passed, {} failed", passed, failed);
    failed == 0
}
