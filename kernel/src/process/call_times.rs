//! Where a program's delegated calls spend their time, from the TSC stamps
//! in each call's slot: from the LWK posting it to a worker of `atoll run`
//! taking it (to Linux), the worker's own work (on Linux), and from its
//! answer to the caller running again (back). The LWK and Linux read one
//! TSC. A program that made many calls says the means on the enclave's
//! console when it ends (`atoll console`), for finding where a slow call's
//! time goes.

use core::sync::atomic::{AtomicU64, Ordering};

use hal::println;
use hal::tsc;

/// Calls a program makes before its end reports their times.
const REPORTED_FROM: u64 = 1000;

pub struct CallTimes {
    count: AtomicU64,
    to_linux: AtomicU64,
    on_linux: AtomicU64,
    back: AtomicU64,
}

impl CallTimes {
    pub const fn new() -> Self {
        CallTimes {
            count: AtomicU64::new(0),
            to_linux: AtomicU64::new(0),
            on_linux: AtomicU64::new(0),
            back: AtomicU64::new(0),
        }
    }

    /// One answered call's stamps; `seen` is when its caller saw the answer.
    /// Stamps out of order (a worker that stamped nothing) are not counted.
    pub fn add(&self, posted: u64, taken: u64, answered: u64, seen: u64) {
        if !(posted <= taken && taken <= answered && answered <= seen) {
            return;
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        self.to_linux.fetch_add(taken - posted, Ordering::Relaxed);
        self.on_linux.fetch_add(answered - taken, Ordering::Relaxed);
        self.back.fetch_add(seen - answered, Ordering::Relaxed);
    }

    /// The console line at the program's end, if it made many calls.
    pub fn report(&self, pid: u32, comm: &[u8]) {
        let n = self.count.load(Ordering::Relaxed);
        if n < REPORTED_FROM {
            return;
        }
        let mean_us =
            |sum: &AtomicU64| tsc::cycles_to_ns(sum.load(Ordering::Relaxed) / n) as f64 / 1000.0;
        println!(
            "program {} ({}): {} delegated calls, mean {:.1} µs to Linux, {:.1} µs on Linux, {:.1} µs back",
            pid,
            core::str::from_utf8(comm.split(|&b| b == 0).next().unwrap_or(&[])).unwrap_or("?"),
            n,
            mean_us(&self.to_linux),
            mean_us(&self.on_linux),
            mean_us(&self.back)
        );
    }
}
