//! What the self-tests share: their result, `ensure!`, waiting, and CPUs.

use alloc::string::String;
use hal::{cpu, tsc};

pub use hal::smp::online_cpus;

pub type TestResult = Result<(), String>;

/// Fails the current test with a message when the condition is false.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $($msg:tt)*) => {
        if !$cond {
            return Err(alloc::format!($($msg)*));
        }
    };
}

/// Waits (yielding, so threads on this core can run) until `done()` or `ms`
/// milliseconds pass; false on timeout.
pub fn wait_for(ms: u64, mut done: impl FnMut() -> bool) -> bool {
    let end = cpu::rdtsc() + tsc::ns_to_cycles(ms * 1_000_000);
    while !done() {
        if cpu::rdtsc() > end {
            return false;
        }
        crate::sched::yield_now();
    }
    true
}

/// The highest-numbered online CPU (the boot CPU when there is one).
pub fn last_cpu() -> usize {
    online_cpus().last().unwrap_or(0)
}
