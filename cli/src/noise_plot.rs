//! `atoll noise --plot <file.svg>`: a row per probed CPU, as selfish-detour
//! and FWQ/FTQ users expect: on the left its detours (or quanta) over time,
//! red where the CPU's kernel is known to have taken an interrupt; on the
//! right a histogram of their lengths (or work). Detour lengths are drawn
//! on a log scale: they span microseconds to milliseconds.

use crate::error::{Error, Result};
use crate::noise_probe::{CpuNoise, Probe};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

const ROW_HEIGHT: u32 = 300;
const WIDTH: u32 = 1100;
const BINS: usize = 40;

/// What one probe's samples are, and how to draw them.
struct Axis {
    name: &'static str,
    /// Drawn as log10 of the value.
    log: bool,
}

impl Axis {
    fn of(probe: Probe) -> Axis {
        match probe {
            Probe::Selfish => Axis { name: "detour length (us)", log: true },
            Probe::Fwq => Axis { name: "quantum length (us)", log: false },
            Probe::Ftq => Axis { name: "work units in the quantum", log: false },
        }
    }

    /// A sample's listed figure (ns, or work units for FTQ) on the axis.
    fn place(&self, probe: Probe, raw: u64) -> f64 {
        let v = if probe == Probe::Ftq { raw as f64 } else { raw as f64 / 1e3 };
        if self.log {
            v.max(1e-3).log10()
        } else {
            v
        }
    }

    fn label(&self, at: f64) -> String {
        let v = if self.log { 10f64.powf(at) } else { at };
        if v >= 10.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    }
}

fn plot_error(e: impl std::fmt::Display) -> Error {
    Error::new(format!("noise: the plot: {e}"))
}

/// Writes the SVG at `path`.
pub fn write(path: &Path, probe: Probe, probes: &[CpuNoise]) -> Result<()> {
    let rows = probes.len().max(1);
    let root = SVGBackend::new(path, (WIDTH, ROW_HEIGHT * rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_error)?;
    let axis = Axis::of(probe);
    for (row, p) in root.split_evenly((rows, 1)).iter().zip(probes) {
        let (left, right) = row.split_horizontally(WIDTH * 3 / 5);
        let values: Vec<f64> = p.detours.iter().map(|d| axis.place(probe, d.len_ns)).collect();
        let (lo, hi) = span(&values);
        over_time(&left, &axis, p, &values, lo..hi)?;
        histogram(&right, &axis, p, &values, lo..hi)?;
    }
    root.present().map_err(plot_error)
}

/// The values' range, widened a little (and made non-empty).
fn span(values: &[f64]) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    let pad = ((hi - lo) * 0.05).max(hi.abs() * 0.01).max(1e-3);
    (lo - pad, hi + pad)
}

fn over_time(
    area: &DrawingArea<SVGBackend, Shift>,
    axis: &Axis,
    p: &CpuNoise,
    values: &[f64],
    y: std::ops::Range<f64>,
) -> Result<()> {
    let seconds = (p.result.duration_ns as f64 / 1e9).max(1e-3);
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{}: {} listed", p.label, p.detours.len()), ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..seconds, y)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(axis.name)
        .y_label_formatter(&|v| axis.label(*v))
        .draw()
        .map_err(plot_error)?;
    let points = p.detours.iter().zip(values).map(|(d, &v)| (d.at_ns as f64 / 1e9, v, d.irqs > 0));
    let gray = RGBColor(90, 90, 90);
    let ours = |theirs: bool| {
        let color = if theirs { RED } else { gray };
        points
            .clone()
            .filter(move |&(_, _, kernel)| kernel == theirs)
            .map(move |(x, y, _)| Circle::new((x, y), 2, color.filled()))
    };
    let kernel = if p.kernel == "lwk" { "the LWK took an interrupt" } else { "Linux's counters moved" };
    chart
        .draw_series(ours(false))
        .map_err(plot_error)?
        .label("other (hardware, hypervisor)")
        .legend(move |(x, y)| Circle::new((x, y), 3, gray.filled()));
    chart
        .draw_series(ours(true))
        .map_err(plot_error)?
        .label(kernel)
        .legend(|(x, y)| Circle::new((x, y), 3, RED.filled()));
    chart.configure_series_labels().border_style(BLACK).background_style(WHITE.mix(0.8)).draw().map_err(plot_error)
}

fn histogram(
    area: &DrawingArea<SVGBackend, Shift>,
    axis: &Axis,
    p: &CpuNoise,
    values: &[f64],
    x: std::ops::Range<f64>,
) -> Result<()> {
    let width = (x.end - x.start) / BINS as f64;
    let mut counts = [0u32; BINS];
    for v in values {
        counts[(((v - x.start) / width) as usize).min(BINS - 1)] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(0).max(1);
    let mut chart = ChartBuilder::on(area)
        .caption(format!("{}: histogram", p.label), ("sans-serif", 16))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(50)
        .build_cartesian_2d(x.clone(), 0u32..top + top / 10 + 1)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_desc(axis.name)
        .y_desc("count")
        .x_label_formatter(&|v| axis.label(*v))
        .x_labels(6)
        .draw()
        .map_err(plot_error)?;
    let bars = counts.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, &n)| {
        let left = x.start + i as f64 * width;
        Rectangle::new([(left, 0), (left + width, n)], BLUE.mix(0.6).filled())
    });
    chart.draw_series(bars).map_err(plot_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use atoll_abi::{NoiseDetour, NoiseResult};

    fn cpu(label: &str, kernel: &'static str, lengths: &[u64]) -> CpuNoise {
        let detours = lengths
            .iter()
            .enumerate()
            .map(|(i, &len_ns)| NoiseDetour { at_ns: i as u64 * 1_000_000, len_ns, irqs: (i % 2) as u64 })
            .collect();
        let result = NoiseResult { duration_ns: 1_000_000_000, ..Default::default() };
        CpuNoise { kernel, label: label.into(), result, detours }
    }

    #[test]
    fn a_row_per_cpu() {
        let path = std::env::temp_dir().join(format!("atoll-noise-plot-{}.svg", std::process::id()));
        let probes = [cpu("n/1", "lwk", &[3_000, 20_000, 4_000_000]), cpu("linux/1", "linux", &[])];
        write(&path, Probe::Selfish, &probes).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains(r#"height="600""#), "{}", &svg[..200]);
        for caption in ["n/1: 3 listed", "n/1: histogram", "linux/1: 0 listed", "linux/1: histogram"] {
            assert!(svg.contains(caption), "{caption} missing");
        }
    }
}
