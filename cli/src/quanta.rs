//! FWQ and FTQ results (`atoll noise --probe fwq|ftq`): each sample is one
//! quantum. FWQ's is how long a fixed piece of work took (noise makes it
//! longer: worst/mean is LLNL's figure); FTQ's is the work done in a fixed
//! time (noise makes it smaller: min/mean).

use atoll_abi::NoiseDetour;
use serde_json::{json, Value};

use crate::format;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub samples: usize,
    pub mean: f64,
    pub min: u64,
    pub max: u64,
    /// Samples during which the CPU took an interrupt (the LWK knows).
    pub with_interrupts: usize,
}

pub fn stats(samples: &[NoiseDetour]) -> Stats {
    let values = samples.iter().map(|s| s.len_ns);
    Stats {
        samples: samples.len(),
        mean: values.clone().sum::<u64>() as f64 / samples.len().max(1) as f64,
        min: values.clone().min().unwrap_or(0),
        max: values.max().unwrap_or(0),
        with_interrupts: samples.iter().filter(|s| s.irqs > 0).count(),
    }
}

/// FWQ: the worst quantum against the mean (1.0: no noise at all).
pub fn worst_over_mean(s: &Stats) -> f64 {
    s.max as f64 / s.mean.max(1.0)
}

/// FTQ: the least work done in a quantum against the mean (1.0: no noise).
pub fn min_over_mean(s: &Stats) -> f64 {
    s.min as f64 / s.mean.max(1.0)
}

pub fn header(fwq: bool) -> Vec<String> {
    let cols: &[&str] = if fwq {
        &["CPU", "quanta", "fastest", "mean", "slowest", "worst/mean", "with interrupts", "interrupts"]
    } else {
        &["CPU", "quanta", "most work", "mean", "least", "min/mean", "with interrupts", "interrupts"]
    };
    cols.iter().map(|c| c.to_string()).collect()
}

/// A table row; `with_interrupts` only where it is known (the LWK's).
pub fn row(label: &str, fwq: bool, s: &Stats, interrupts: u64, per_sample: bool) -> Vec<String> {
    let known = |n: usize| if per_sample { n.to_string() } else { "-".into() };
    if fwq {
        vec![
            label.into(),
            s.samples.to_string(),
            format!("{} us", format::us(s.min)),
            format!("{:.1} us", s.mean / 1e3),
            format!("{} us", format::us(s.max)),
            format!("{:.3}", worst_over_mean(s)),
            known(s.with_interrupts),
            interrupts.to_string(),
        ]
    } else {
        vec![
            label.into(),
            s.samples.to_string(),
            s.max.to_string(),
            format!("{:.1}", s.mean),
            s.min.to_string(),
            format!("{:.3}", min_over_mean(s)),
            known(s.with_interrupts),
            interrupts.to_string(),
        ]
    }
}

pub fn to_json(fwq: bool, s: &Stats, samples: &[NoiseDetour]) -> Value {
    let mut v = json!({
        "samples": s.samples, "mean": s.mean, "min": s.min, "max": s.max,
        "with_interrupts": s.with_interrupts,
        "listed": samples.iter().map(|d| [d.at_ns, d.len_ns, d.irqs]).collect::<Vec<_>>(),
    });
    if fwq {
        v["worst_over_mean"] = json!(worst_over_mean(s));
    } else {
        v["min_over_mean"] = json!(min_over_mean(s));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(values: &[u64], irqs: &[u64]) -> Vec<NoiseDetour> {
        values.iter().zip(irqs).map(|(&len_ns, &irqs)| NoiseDetour { at_ns: 0, len_ns, irqs }).collect()
    }

    #[test]
    fn fwq_and_ftq_figures() {
        let s = stats(&samples(&[1000, 1000, 1000, 1400], &[0, 0, 1, 0]));
        assert_eq!((s.samples, s.min, s.max, s.with_interrupts), (4, 1000, 1400, 1));
        assert!((worst_over_mean(&s) - 1400.0 / 1100.0).abs() < 1e-12);
        assert!((min_over_mean(&s) - 1000.0 / 1100.0).abs() < 1e-12);
        assert_eq!(row("n/0", true, &s, 3, true)[5], "1.273");
        assert_eq!(row("linux/1", false, &s, 3, false)[6], "-");
        let v = to_json(true, &s, &samples(&[5], &[0]));
        assert_eq!(v["listed"][0], json!([0, 5, 0]));
        assert!(v.get("worst_over_mean").is_some() && v.get("min_over_mean").is_none());
        assert_eq!(stats(&[]).samples, 0);
    }
}
