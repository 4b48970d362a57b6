//! The arithmetic of the LWK's OS noise probes (`kernel/src/noise.rs` runs
//! them on a CPU, with that CPU's TSC and interrupt count): the
//! selfish-detour loop and the FWQ/FTQ sample loop, each detour or sample
//! charged the interrupts the CPU took during it, exactly.

use alloc::vec::Vec;
use atoll_abi::{NoiseDetour, NoiseResult, NOISE_MAX_LISTED};
use core::cell::Cell;

/// Reads the TSC at instants whose interrupt count is known exactly.
///
/// Neither order of a TSC read and a count read is exact on its own: an
/// interrupt between the two has its time on one side of the TSC read and
/// its count on the other, so it would be charged to the gap next to the
/// one it made. So each TSC read is followed by a count read, compared
/// with the count read before it (the previous instant's): equal, no
/// interrupt came between, and it is the count at the TSC read; different,
/// the TSC is read again. Masking interrupts around the pair would not do:
/// NMIs count too.
pub struct Instants<T, C> {
    tsc: T,
    taken: C,
    count: Cell<u64>,
}

impl<T: Fn() -> u64, C: Fn() -> u64> Instants<T, C> {
    /// `tsc` reads the CPU's TSC, `taken` how many interrupts it has taken.
    pub fn new(tsc: T, taken: C) -> Self {
        let count = Cell::new(taken());
        Self { tsc, taken, count }
    }

    /// The TSC now; [`Self::taken`] is then the count at this instant.
    pub fn tsc(&self) -> u64 {
        loop {
            let now = (self.tsc)();
            let taken = (self.taken)();
            if taken == self.count.get() {
                return now;
            }
            self.count.set(taken);
        }
    }

    /// Interrupts taken up to the last [`Self::tsc`] instant.
    pub fn taken(&self) -> u64 {
        self.count.get()
    }
}

/// The selfish-detour loop: reads the clock for `duration` cycles, and
/// every gap between two reads longer than `threshold` is a detour, the
/// kernel's if an interrupt came during it. `ns` turns cycles into ns.
pub fn selfish<T: Fn() -> u64, C: Fn() -> u64>(
    clock: &Instants<T, C>,
    duration: u64,
    threshold: u64,
    ns: impl Fn(u64) -> u64,
) -> (NoiseResult, Vec<NoiseDetour>) {
    let mut listed = Vec::with_capacity(NOISE_MAX_LISTED);
    let mut r = NoiseResult::default();
    let (mut total, mut max, mut kernel, mut kernel_max) = (0u64, 0u64, 0u64, 0u64);
    let start = clock.tsc();
    let irqs_at_start = clock.taken();
    let end = start + duration;
    let (mut last, mut irqs) = (start, irqs_at_start);
    while last < end {
        let now = clock.tsc();
        let taken = clock.taken();
        let gap = now - last;
        if gap > threshold {
            r.detours += 1;
            total += gap;
            max = max.max(gap);
            if taken != irqs {
                r.kernel_detours += 1;
                kernel += gap;
                kernel_max = kernel_max.max(gap);
            }
            if listed.len() < NOISE_MAX_LISTED {
                listed.push(NoiseDetour {
                    at_ns: ns(last - start),
                    len_ns: ns(gap),
                    irqs: taken - irqs,
                });
            }
        }
        (last, irqs) = (now, taken);
        r.loops += 1;
    }
    r.duration_ns = ns(last - start);
    r.total_ns = ns(total);
    r.max_ns = ns(max);
    r.kernel_ns = ns(kernel);
    r.kernel_max_ns = ns(kernel_max);
    r.irqs = irqs - irqs_at_start;
    r.listed = listed.len() as u32;
    (r, listed)
}

/// Runs `sample(start)` back to back for `duration` cycles (at most
/// NOISE_MAX_LISTED samples), listing each with its value and the
/// interrupts taken during it. A sample runs from the instant `start` (a
/// read of `clock`) to its own last read of `clock`, which must end it.
pub fn sampled<T: Fn() -> u64, C: Fn() -> u64>(
    clock: &Instants<T, C>,
    duration: u64,
    ns: impl Fn(u64) -> u64,
    mut sample: impl FnMut(u64) -> u64,
) -> (NoiseResult, Vec<NoiseDetour>) {
    let mut r = NoiseResult::default();
    let mut listed = Vec::with_capacity(NOISE_MAX_LISTED);
    let start = clock.tsc();
    let irqs_at_start = clock.taken();
    let end = start + duration;
    let mut now = start;
    while now < end && listed.len() < NOISE_MAX_LISTED {
        let irqs = clock.taken();
        let value = sample(now);
        let taken = clock.taken() - irqs;
        if taken > 0 {
            r.kernel_detours += 1;
        }
        listed.push(NoiseDetour { at_ns: ns(now - start), len_ns: value, irqs: taken });
        now = clock.tsc();
    }
    r.duration_ns = ns(now - start);
    r.irqs = clock.taken() - irqs_at_start;
    r.loops = listed.len() as u64;
    r.listed = listed.len() as u32;
    (r, listed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CPU as the probe sees it: each read of the TSC or of the count
    /// takes one cycle; the interrupt set for read `n` is taken just
    /// before it (its handler runs `HANDLER` cycles, then the count moves).
    struct Cpu {
        time: Cell<u64>,
        count: Cell<u64>,
        reads: Cell<u64>,
        interrupt_at: Vec<u64>,
    }

    const HANDLER: u64 = 1000;

    impl Cpu {
        fn new(interrupt_at: &[u64]) -> Self {
            let c = Cell::new(0);
            Cpu { time: c.clone(), count: c.clone(), reads: c, interrupt_at: interrupt_at.to_vec() }
        }

        fn step(&self) {
            let n = self.reads.get();
            self.reads.set(n + 1);
            for _ in self.interrupt_at.iter().filter(|&&at| at == n) {
                self.time.set(self.time.get() + HANDLER);
                self.count.set(self.count.get() + 1);
            }
            self.time.set(self.time.get() + 1);
        }

        fn clock(&self) -> Instants<impl Fn() -> u64 + '_, impl Fn() -> u64 + '_> {
            let tsc = || {
                self.step();
                self.time.get()
            };
            let taken = || {
                self.step();
                self.count.get()
            };
            Instants::new(tsc, taken)
        }
    }

    #[test]
    fn an_interrupt_is_charged_to_the_detour_it_made_wherever_it_lands() {
        // Before any read after the probe's start: between a TSC read and
        // the count read after it, or between a count read and the next TSC
        // read.
        for at in 3..40 {
            let cpu = Cpu::new(&[at]);
            let (r, listed) = selfish(&cpu.clock(), 100, 10, |c| c);
            assert_eq!((r.detours, r.kernel_detours, r.irqs), (1, 1, 1), "interrupt at read {at}");
            assert_eq!(listed.len(), 1);
            assert!(listed[0].len_ns > HANDLER && listed[0].irqs == 1, "{at}: {:?}", listed[0]);
            assert_eq!((r.kernel_ns, r.total_ns), (listed[0].len_ns, listed[0].len_ns));
        }
    }

    #[test]
    fn gaps_without_interrupts_are_not_the_kernels() {
        let cpu = Cpu::new(&[]);
        let (r, listed) = selfish(&cpu.clock(), 100, 1, |c| c);
        assert_eq!((r.detours, r.kernel_detours, r.irqs), (r.loops, 0, 0));
        assert!(r.loops >= 50 && listed.iter().all(|d| d.irqs == 0 && d.len_ns == 2));
        let cpu = Cpu::new(&[]);
        assert_eq!(selfish(&cpu.clock(), 100, 2, |c| c).0.detours, 0);
    }

    #[test]
    fn two_interrupts_in_one_gap_count_twice() {
        let cpu = Cpu::new(&[6, 6, 30]);
        let (r, listed) = selfish(&cpu.clock(), 3000, 10, |c| c);
        assert_eq!((r.detours, r.kernel_detours, r.irqs), (2, 2, 3));
        assert_eq!(listed.iter().map(|d| d.irqs).collect::<Vec<_>>(), [2, 1]);
    }

    #[test]
    fn a_sample_is_charged_the_interrupts_during_it_only() {
        // Each sample reads the clock 4 times (FTQ reads it until its
        // quantum ends); between samples the loop reads it once more.
        for at in 3..60 {
            let cpu = Cpu::new(&[at]);
            let clock = cpu.clock();
            let (r, listed) = sampled(
                &clock,
                60,
                |c| c,
                |start| (0..4).map(|_| clock.tsc()).last().unwrap() - start,
            );
            let charged: Vec<usize> = (0..listed.len()).filter(|&i| listed[i].irqs > 0).collect();
            assert!(r.irqs == 1 && charged.len() <= 1, "interrupt at read {at}: {listed:?}");
            // The sample that took the handler's time, if any, has it.
            let slow: Vec<usize> =
                (0..listed.len()).filter(|&i| listed[i].len_ns > HANDLER).collect();
            assert_eq!(charged, slow, "interrupt at read {at}: {listed:?}");
            assert_eq!(r.kernel_detours, charged.len() as u64);
        }
    }
}
