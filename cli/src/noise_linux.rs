//! The selfish-detour probe on a Linux CPU (`atoll noise --linux-cpus`): a
//! thread pinned there spins reading the TSC (as the LWK's probe does) and
//! records every gap longer than the threshold. Linux does not say which
//! detour it caused, so the probe runs in windows and reads that CPU's
//! interrupt, softirq and schedule counts (/proc/interrupts, /proc/softirqs,
//! /proc/schedstat) between them, outside the timed loop: a detour in a window where any of
//! them moved counts as Linux's, one in a quiet window as the hardware's or
//! the hypervisor's. Fed the same way as the LWK's result, so both print alike.
//! FWQ and FTQ run the LWK's work, sized the LWK's way (atoll_abi's
//! noise_work and noise_units_*); their interrupts are counted for the
//! whole run.

use crate::sys;
use atoll_abi::{noise_units_for, noise_units_within, noise_work, NoiseDetour, NoiseResult, NOISE_MAX_LISTED};
use std::io;
use std::time::{Duration, Instant};

/// How long the probe spins between two reads of the counters.
const WINDOW: Duration = Duration::from_millis(100);

/// What the kernel did on one CPU so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub interrupts: u64,
    pub softirqs: u64,
    pub schedules: u64,
}

impl Counters {
    fn total(&self) -> u64 {
        self.interrupts + self.softirqs + self.schedules
    }
}

/// The sum of CPU `cpu`'s column in /proc/interrupts or /proc/softirqs
/// (a header of CPU names, then a row per source).
pub fn column_sum(text: &str, cpu: u32) -> Option<u64> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next()?.split_whitespace().collect();
    let col = header.iter().position(|h| *h == format!("CPU{cpu}"))?;
    // Rows with a count per CPU (ERR and MIS have one for all: skipped).
    let sum = lines
        .filter(|l| l.split_whitespace().count() > header.len())
        .filter_map(|l| l.split_whitespace().nth(col + 1).and_then(|v| v.parse::<u64>().ok()))
        .sum();
    Some(sum)
}

/// schedule() calls on CPU `cpu` from /proc/schedstat (its `cpu<N>` line's
/// third count, in versions 15 and later).
pub fn schedules(text: &str, cpu: u32) -> Option<u64> {
    let name = format!("cpu{cpu}");
    let line = text.lines().find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

pub fn counters(cpu: u32) -> io::Result<Counters> {
    let read = |path: &str| std::fs::read_to_string(path);
    let bad = |what: &str| io::Error::other(format!("{what} has no figures for CPU {cpu}"));
    Ok(Counters {
        interrupts: column_sum(&read("/proc/interrupts")?, cpu).ok_or_else(|| bad("/proc/interrupts"))?,
        softirqs: column_sum(&read("/proc/softirqs")?, cpu).ok_or_else(|| bad("/proc/softirqs"))?,
        schedules: schedules(&read("/proc/schedstat")?, cpu).ok_or_else(|| bad("/proc/schedstat"))?,
    })
}

/// TSC ticks against Linux's clock, measured on the probe's CPU before it
/// starts, so that the probes read the TSC and report nanoseconds.
struct Rate {
    ticks_per_ns: f64,
}

impl Rate {
    fn measure() -> Rate {
        let (t0, c0) = (Instant::now(), sys::tsc());
        while t0.elapsed() < Duration::from_millis(20) {}
        let (c1, t1) = (sys::tsc(), Instant::now());
        Rate { ticks_per_ns: (c1 - c0) as f64 / (t1 - t0).as_nanos().max(1) as f64 }
    }

    fn ticks(&self, d: Duration) -> u64 {
        (d.as_nanos() as f64 * self.ticks_per_ns) as u64
    }

    fn ns(&self, ticks: u64) -> u64 {
        (ticks as f64 / self.ticks_per_ns) as u64
    }
}

/// Runs the probe on Linux CPU `cpu` (this thread is pinned there).
pub fn probe(cpu: u32, duration: Duration, threshold: Duration) -> io::Result<(NoiseResult, Vec<NoiseDetour>)> {
    sys::pin_to_cpu(cpu)?;
    let rate = Rate::measure();
    let (duration, threshold, window_len) = (rate.ticks(duration), rate.ticks(threshold), rate.ticks(WINDOW));
    let mut r = NoiseResult { cpu, ..Default::default() };
    let mut listed = Vec::new();
    let (mut probed, mut kernel) = (0, 0);
    let mut before = counters(cpu)?;
    while probed < duration {
        let window = window_len.min(duration - probed);
        let mut gaps = Vec::new();
        let start = sys::tsc();
        let mut last = start;
        while last - start < window {
            let now = sys::tsc();
            if now - last > threshold {
                gaps.push((probed + (last - start), now - last));
            }
            last = now;
            r.loops += 1;
        }
        probed += last - start;
        let after = counters(cpu)?;
        let moved = after.total() - before.total();
        r.irqs += after.interrupts - before.interrupts + after.softirqs - before.softirqs;
        before = after;
        for (at, gap) in gaps {
            r.detours += 1;
            r.total_ns += rate.ns(gap);
            r.max_ns = r.max_ns.max(rate.ns(gap));
            if moved > 0 {
                r.kernel_detours += 1;
                kernel += gap;
                r.kernel_max_ns = r.kernel_max_ns.max(rate.ns(gap));
            }
            if listed.len() < NOISE_MAX_LISTED {
                listed.push(NoiseDetour { at_ns: rate.ns(at), len_ns: rate.ns(gap), irqs: moved });
            }
        }
    }
    r.duration_ns = rate.ns(probed);
    r.kernel_ns = rate.ns(kernel);
    r.listed = listed.len() as u32;
    Ok((r, listed))
}

/// FWQ on Linux CPU `cpu`: each sample, how long the same work took.
/// Linux's interrupts are counted for the whole run, not per sample.
pub fn fixed_work(cpu: u32, duration: Duration, quantum: Duration) -> io::Result<(NoiseResult, Vec<NoiseDetour>)> {
    sys::pin_to_cpu(cpu)?;
    let rate = Rate::measure();
    let units = noise_units_for(sys::tsc, rate.ticks(quantum));
    sampled(cpu, &rate, duration, |_| {
        let t = sys::tsc();
        noise_work(units);
        rate.ns(sys::tsc() - t)
    })
}

/// FTQ on Linux CPU `cpu`: each sample, the work units done in `quantum`.
pub fn fixed_time(cpu: u32, duration: Duration, quantum: Duration) -> io::Result<(NoiseResult, Vec<NoiseDetour>)> {
    sys::pin_to_cpu(cpu)?;
    let rate = Rate::measure();
    let quantum = rate.ticks(quantum);
    sampled(cpu, &rate, duration, |start| noise_units_within(sys::tsc, start, quantum))
}

/// Runs `sample(start TSC)` back to back for `duration` (at most
/// NOISE_MAX_LISTED samples).
fn sampled(
    cpu: u32,
    rate: &Rate,
    duration: Duration,
    mut sample: impl FnMut(u64) -> u64,
) -> io::Result<(NoiseResult, Vec<NoiseDetour>)> {
    let before = counters(cpu)?;
    let start = sys::tsc();
    let end = start + rate.ticks(duration);
    let mut listed = Vec::with_capacity(NOISE_MAX_LISTED);
    let mut now = start;
    while now < end && listed.len() < NOISE_MAX_LISTED {
        let value = sample(now);
        listed.push(NoiseDetour { at_ns: rate.ns(now - start), len_ns: value, irqs: 0 });
        now = sys::tsc();
    }
    let after = counters(cpu)?;
    let r = NoiseResult {
        cpu,
        duration_ns: rate.ns(now - start),
        loops: listed.len() as u64,
        irqs: after.interrupts - before.interrupts + after.softirqs - before.softirqs,
        listed: listed.len() as u32,
        ..Default::default()
    };
    Ok((r, listed))
}

#[cfg(test)]
mod tests {
    use super::*;

    const INTERRUPTS: &str = "           CPU0       CPU1       CPU2
  0:         44          0          0   IO-APIC   2-edge      timer
LOC:      81234      70000        250   Local timer interrupts
CAL:        120         35          7   Function call interrupts
ERR:          5
";

    #[test]
    fn interrupt_columns() {
        assert_eq!(column_sum(INTERRUPTS, 0), Some(81_398));
        assert_eq!(column_sum(INTERRUPTS, 2), Some(257));
        assert_eq!(column_sum(INTERRUPTS, 3), None);
    }

    #[test]
    fn schedule_counts() {
        let text = "version 15\ntimestamp 4295\ncpu0 0 0 5000 2000 10 9 1 2 3\ncpu1 0 0 77 7 1 1 1 1 1\n";
        assert_eq!(schedules(text, 1), Some(77));
        assert_eq!(schedules(text, 0), Some(5000));
        assert_eq!(schedules(text, 2), None);
    }
}
