//! `bench`: in-kernel measurements. Each result is printed as one
//! machine-readable line `result <name> key=value ...` (bench/lwk_bench.py
//! turns them into the README table and plots) plus a readable table.

mod events;
mod locks;
mod report;
mod threads;

use hal::println;
use hal::tsc;

pub fn run_all() {
    println!("bench: {} CPUs online, TSC {} MHz", hal::smp::online_count(), tsc::hz() / 1_000_000);
    threads::create_join();
    events::wakeup_latency();
    events::ipi_round_trip();
    locks::fairbench();
    println!("bench: done");
}
