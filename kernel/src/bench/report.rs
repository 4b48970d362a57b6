//! What the in-kernel benchmarks share: a latency line, and the CPU to
//! measure against.

use alloc::vec::Vec;
use hal::{println, tsc};
use lwk_logic::stats::{summarize, Summary};

/// Prints a latency result from TSC-cycle samples, in nanoseconds.
pub fn report_latency(name: &str, cycles: &mut [u64]) -> Summary {
    let mut ns: Vec<u64> = cycles.iter().map(|&c| tsc::cycles_to_ns(c)).collect();
    let s = summarize(&mut ns);
    println!(
        "result {} unit=ns n={} mean={:.0} median={} min={} max={}",
        name, s.n, s.mean, s.median, s.min, s.max
    );
    s
}

/// Second CPU for cross-core measurements: the last online one.
pub fn other_cpu() -> Option<usize> {
    let last = hal::smp::online_cpus().last()?;
    (last != hal::cpu_index()).then_some(last)
}
