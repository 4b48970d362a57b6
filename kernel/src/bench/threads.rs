//! Thread create + join latency, on the same core and on another core.

use alloc::vec::Vec;

use super::report::{other_cpu, report_latency};
use crate::sched;
use hal::{cpu, percpu};

const ROUNDS: usize = 500;

fn measure(target: usize) -> Vec<u64> {
    (0..ROUNDS)
        .map(|i| {
            let t0 = cpu::rdtsc();
            let h = sched::spawn(target, "bench-nop", move || i);
            let _ = h.join();
            cpu::rdtsc() - t0
        })
        .collect()
}

pub fn create_join() {
    report_latency("thread_create_join_same_core", &mut measure(percpu::cpu_index()));
    if let Some(other) = other_cpu() {
        report_latency("thread_create_join_other_core", &mut measure(other));
    }
}
