//! One CPU's noise probe: which probe ran (atoll_abi.h, "OS noise probes")
//! and what it counted, as `atoll noise` prints it and noise_plot.rs draws it.

use atoll_abi::{NoiseDetour, NoiseResult, NOISE_FTQ, NOISE_FWQ, NOISE_SELFISH};

/// Which probe (atoll_abi.h, "OS noise probes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Probe {
    Selfish,
    Fwq,
    Ftq,
}

impl Probe {
    pub fn abi(self) -> u32 {
        match self {
            Probe::Selfish => NOISE_SELFISH,
            Probe::Fwq => NOISE_FWQ,
            Probe::Ftq => NOISE_FTQ,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Probe::Selfish => "selfish",
            Probe::Fwq => "fwq",
            Probe::Ftq => "ftq",
        }
    }
}

/// One CPU's probe: what was counted and the detours listed.
pub struct CpuNoise {
    /// "lwk" or "linux".
    pub kernel: &'static str,
    /// How the table names the CPU: `<enclave>/<LWK CPU>` or `linux/<CPU>`.
    pub label: String,
    pub result: NoiseResult,
    pub detours: Vec<NoiseDetour>,
}

impl CpuNoise {
    pub fn per_second(&self) -> f64 {
        self.result.detours as f64 / (self.result.duration_ns.max(1) as f64 / 1e9)
    }

    /// The share of the time the probe ran (it did not while detoured).
    pub fn availability(&self) -> f64 {
        1.0 - self.result.total_ns as f64 / self.result.duration_ns.max(1) as f64
    }

    /// The p-th percentile (0..=100) of the listed detours' lengths.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        let mut lens: Vec<u64> = self.detours.iter().map(|d| d.len_ns).collect();
        lens.sort_unstable();
        percentile(&lens, p)
    }
}

/// Nearest-rank percentile of sorted values; 0 for none.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    // In tenths of a percent, so that 99.9% of 1000 is the 999th, exactly.
    let tenths = (p * 10.0).round() as usize;
    let rank = (tenths * sorted.len()).div_ceil(1000).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

/// A probe of one LWK CPU that listed `detours` (lengths), `kernel` of
/// them the kernel's.
#[cfg(test)]
pub fn sample(detours: &[u64], kernel: u64) -> CpuNoise {
    let result = NoiseResult {
        cpu: 1,
        duration_ns: 2_000_000_000,
        loops: 1000,
        detours: detours.len() as u64,
        total_ns: detours.iter().sum(),
        max_ns: detours.iter().copied().max().unwrap_or(0),
        irqs: kernel,
        kernel_detours: kernel,
        listed: detours.len() as u32,
        ..Default::default()
    };
    let detours = detours.iter().map(|&len_ns| NoiseDetour { at_ns: 0, len_ns, irqs: 0 }).collect();
    CpuNoise { kernel: "lwk", label: "sim/1".into(), result, detours }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        assert_eq!(percentile(&[], 99.0), 0);
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!((percentile(&v, 50.0), percentile(&v, 99.0), percentile(&v, 99.9)), (500, 990, 999));
        assert_eq!(percentile(&[7], 99.9), 7);
    }

    #[test]
    fn rates_and_availability() {
        let p = sample(&[10_000, 30_000, 20_000, 40_000], 1);
        assert_eq!(p.per_second(), 2.0);
        assert!((p.availability() - (1.0 - 100_000.0 / 2e9)).abs() < 1e-12);
        assert_eq!(p.percentile_ns(50.0), 20_000);
    }
}
