//! OS noise, selfish-detour style: spin reading the TSC and record every gap
//! between two reads longer than a threshold. Whatever took the CPU away
//! (interrupts, the scheduler, the host) shows up as a detour. The output
//! format is shared with bench/selfish.c, its Linux twin.

use alloc::vec::Vec;

use crate::println;
use hal::{cpu, tsc};

/// Detours listed one by one (all are counted).
const MAX_LISTED: usize = 4000;

pub fn selfish_detour(seconds: u64, threshold_ns: u64) {
    let threshold = tsc::ns_to_cycles(threshold_ns);
    let mut listed: Vec<(u64, u64)> = Vec::with_capacity(MAX_LISTED);
    let (mut count, mut total, mut max, mut loops) = (0u64, 0u64, 0u64, 0u64);
    let start = cpu::rdtsc();
    let end = start + tsc::ns_to_cycles(seconds * 1_000_000_000);
    let mut last = start;
    while last < end {
        let now = cpu::rdtsc();
        let gap = now - last;
        if gap > threshold {
            count += 1;
            total += gap;
            max = max.max(gap);
            if listed.len() < MAX_LISTED {
                listed.push((last - start, gap));
            }
        }
        last = now;
        loops += 1;
    }
    let ns = tsc::cycles_to_ns;
    println!(
        "noise: os=lwk cpu={} duration_ns={} threshold_ns={} loops={} detours={} \
         total_ns={} max_ns={}",
        hal::cpu_index(),
        ns(last - start),
        threshold_ns,
        loops,
        count,
        ns(total),
        ns(max)
    );
    for (at, gap) in listed {
        println!("detour {} {}", ns(at), ns(gap));
    }
    println!("noise: end");
}
