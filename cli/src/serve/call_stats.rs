//! `atoll run --stats`: how many of the program's system calls were
//! delegated to Linux, which ones, and how long Linux took to perform them
//! (the time a worker spent in each, not the LWK's round trip). Off unless
//! asked for; a forked child's `atoll run` counts on in its own copy and
//! says nothing.

use super::names;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Numbers at or above this share the last counter.
const NUMBERS: usize = 512;
/// Lines in the summary, the costliest first.
const SHOWN: usize = 10;

pub struct CallStats {
    counts: [AtomicU64; NUMBERS],
    nanos: [AtomicU64; NUMBERS],
}

static STATS: OnceLock<CallStats> = OnceLock::new();

/// Counts from now on.
pub fn enable() {
    let _ = STATS.set(CallStats::new());
}

/// The counters, if counting.
pub fn get() -> Option<&'static CallStats> {
    STATS.get()
}

/// Performs system call `nr` (`perform`), counted if counting.
pub fn timed(nr: u64, perform: impl FnOnce() -> i64) -> i64 {
    let Some(stats) = STATS.get() else { return perform() };
    let started = Instant::now();
    let result = perform();
    stats.record(nr, started.elapsed());
    result
}

impl CallStats {
    fn new() -> Self {
        CallStats { counts: [const { AtomicU64::new(0) }; NUMBERS], nanos: [const { AtomicU64::new(0) }; NUMBERS] }
    }

    /// One call of system call `nr` that Linux performed in `took`.
    pub fn record(&self, nr: u64, took: Duration) {
        let i = (nr as usize).min(NUMBERS - 1);
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        self.nanos[i].fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
    }

    /// A few lines for people: the totals, then the calls that took most.
    pub fn summary(&self) -> String {
        let mut rows: Vec<(usize, u64, u64)> = (0..NUMBERS)
            .map(|i| (i, self.counts[i].load(Ordering::Relaxed), self.nanos[i].load(Ordering::Relaxed)))
            .filter(|&(_, count, _)| count > 0)
            .collect();
        let calls: u64 = rows.iter().map(|r| r.1).sum();
        let nanos: u64 = rows.iter().map(|r| r.2).sum();
        rows.sort_by_key(|&(i, _, ns)| (std::cmp::Reverse(ns), i));
        let mut out =
            format!("atoll run: {calls} delegated system calls, {:.3} s performing them on Linux\n", secs(nanos));
        for &(i, count, ns) in rows.iter().take(SHOWN) {
            let name = match names::name(i as u64) {
                Some(name) if i < NUMBERS - 1 => name.to_string(),
                _ if i == NUMBERS - 1 => format!(">= {i}"),
                _ => format!("#{i}"),
            };
            let calls = if count == 1 { "call " } else { "calls" };
            let each = ns as f64 / 1e3 / count as f64;
            out += &format!("  {name:<18} {count:>8} {calls} {:>9.3} s {each:>9.1} µs each\n", secs(ns));
        }
        if rows.len() > SHOWN {
            out += &format!("  ({} other kinds)\n", rows.len() - SHOWN);
        }
        out
    }
}

fn secs(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_totals_and_orders_by_time() {
        let s = CallStats::new();
        s.record(0, Duration::from_micros(10));
        s.record(0, Duration::from_micros(30));
        s.record(257, Duration::from_millis(2));
        s.record(9999, Duration::from_micros(1));
        let text = s.summary();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "atoll run: 4 delegated system calls, 0.002 s performing them on Linux");
        assert!(lines[1].trim_start().starts_with("openat") && lines[1].contains(" 1 call "), "{text}");
        assert!(lines[2].trim_start().starts_with("read") && lines[2].contains("2 calls"), "{text}");
        assert!(lines[2].ends_with("20.0 µs each"), "{text}");
        assert!(lines[3].trim_start().starts_with(">= 511"), "{text}");
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn many_kinds_are_cut_short() {
        let s = CallStats::new();
        for nr in 0..15 {
            s.record(nr, Duration::from_micros(nr + 1));
        }
        let text = s.summary();
        assert_eq!(text.lines().count(), 1 + SHOWN + 1, "{text}");
        assert!(text.ends_with("  (5 other kinds)\n"), "{text}");
    }
}
