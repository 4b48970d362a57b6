//! `bench`: in-kernel measurements. Each result is printed as one
//! machine-readable line `result <name> key=value ...` (bench/lwk_bench.py
//! turns them into the README table and plots) plus a readable table.

mod events;
mod locks;
mod threads;

use alloc::vec::Vec;
use lwk_logic::stats::{summarize, Summary};

use crate::println;
use hal::tsc;

pub fn run_all() {
    println!("bench: {} CPUs online, TSC {} MHz", hal::smp::online_count(), tsc::hz() / 1_000_000);
    threads::create_join();
    events::wakeup_latency();
    events::ipi_round_trip();
    locks::fairbench();
    println!("bench: done");
}

/// Prints a latency result from TSC-cycle samples, in nanoseconds.
fn report_latency(name: &str, cycles: &mut [u64]) -> Summary {
    let mut ns: Vec<u64> = cycles.iter().map(|&c| tsc::cycles_to_ns(c)).collect();
    let s = summarize(&mut ns);
    println!(
        "result {} unit=ns n={} mean={:.0} median={} min={} max={}",
        name, s.n, s.mean, s.median, s.min, s.max
    );
    s
}

/// Second CPU for cross-core measurements: the last online one.
fn other_cpu() -> Option<usize> {
    let last = hal::smp::online_cpus().last()?;
    (last != hal::cpu_index()).then_some(last)
}
