//! `atoll noise [--enclave <name> [--cpus <LWK CPUs>]] [--linux-cpus <list>]
//! --seconds <s> [--probe selfish|fwq|ftq]`: a noise probe on an enclave's
//! CPUs (run by its LWK) and on Linux CPUs (run here, noise_linux.rs), one
//! CPU after the other. Selfish detour (the default) prints a table per CPU
//! in the shape of Linux's `rtla osnoise`:
//! availability, detours per second, the largest, percentiles, and how many
//! the CPU's kernel caused against the rest (the hardware or the
//! hypervisor took the CPU). FWQ and FTQ print their quanta's figures
//! (quanta.rs). `--plot` draws the samples (noise_plot.rs).

use super::print_json;
use crate::device::Device;
use crate::enclave;
use crate::error::{module_error, Error, Result};
use crate::noise_probe::{CpuNoise, Probe};
use crate::{format, noise_linux, noise_plot, quanta};
use atoll_abi::{NoiseDetour, NoiseReq, NOISE_MAX_LISTED};
use serde_json::{json, Value};
use std::time::Duration;

pub struct Options {
    pub probe: Probe,
    /// FWQ's and FTQ's quantum.
    pub quantum_ns: u64,
    pub enclave: Option<String>,
    /// LWK CPU indices; empty: every CPU of the enclave.
    pub cpus: Vec<u32>,
    pub linux_cpus: Vec<u32>,
    pub seconds: f64,
    pub threshold_ns: u64,
    /// Where to draw the SVG plot, if anywhere.
    pub plot: Option<std::path::PathBuf>,
}

pub fn run(opts: Options, json: bool) -> Result<()> {
    if opts.enclave.is_none() && opts.linux_cpus.is_empty() {
        return Err(Error::new("noise: say where to probe: --enclave <name> and/or --linux-cpus <list>"));
    }
    if let Some(path) = &opts.plot {
        // Before the probes run, so that a wrong path does not waste them.
        std::fs::File::create(path).map_err(|e| Error::new(format!("noise: --plot {}: {e}", path.display())))?;
    }
    let mut probes = Vec::new();
    if let Some(name) = &opts.enclave {
        probes.extend(enclave_probes(name, &opts)?);
    }
    for &cpu in &opts.linux_cpus {
        eprintln!("atoll noise: {} s on Linux CPU {cpu}", opts.seconds);
        let duration = Duration::from_secs_f64(opts.seconds);
        let (probe, threshold, quantum) =
            (opts.probe, Duration::from_nanos(opts.threshold_ns), Duration::from_nanos(opts.quantum_ns));
        let (result, detours) = std::thread::spawn(move || match probe {
            Probe::Selfish => noise_linux::probe(cpu, duration, threshold),
            Probe::Fwq => noise_linux::fixed_work(cpu, duration, quantum),
            Probe::Ftq => noise_linux::fixed_time(cpu, duration, quantum),
        })
        .join()
        .map_err(|_| Error::new("noise: the probe thread failed"))?
        .map_err(|e| Error::new(format!("noise: Linux CPU {cpu}: {e}")))?;
        probes.push(CpuNoise { kernel: "linux", label: format!("linux/{cpu}"), result, detours });
    }
    match opts.probe {
        Probe::Selfish if json => print_json(&to_json(opts.threshold_ns, &probes)),
        Probe::Selfish => print!("{}", text(opts.threshold_ns, &probes)),
        probe if json => print_json(&quanta_json(probe, opts.quantum_ns, &probes)),
        probe => print!("{}", quanta_text(probe, opts.quantum_ns, &probes)),
    }
    if let Some(path) = &opts.plot {
        noise_plot::write(path, opts.probe, &probes)?;
        eprintln!("atoll noise: plot written to {}", path.display());
    }
    Ok(())
}

fn quanta_json(probe: Probe, quantum_ns: u64, probes: &[CpuNoise]) -> Value {
    let fwq = probe == Probe::Fwq;
    let cpus: Vec<Value> = probes
        .iter()
        .map(|p| {
            let mut v = quanta::to_json(fwq, &quanta::stats(&p.detours), &p.detours);
            v["kernel"] = json!(p.kernel);
            v["name"] = json!(p.label);
            v["cpu"] = json!(p.result.cpu);
            v["duration_ns"] = json!(p.result.duration_ns);
            v["interrupts"] = json!(p.result.irqs);
            if p.kernel == "linux" {
                v["with_interrupts"] = Value::Null; // Linux does not say per sample
            }
            v
        })
        .collect();
    json!({ "probe": probe.name(), "quantum_ns": quantum_ns, "cpus": cpus })
}

fn quanta_text(probe: Probe, quantum_ns: u64, probes: &[CpuNoise]) -> String {
    let fwq = probe == Probe::Fwq;
    let mut rows = vec![quanta::header(fwq)];
    for p in probes {
        rows.push(quanta::row(&p.label, fwq, &quanta::stats(&p.detours), p.result.irqs, p.kernel == "lwk"));
    }
    let what = if fwq { "FWQ: the same work, about" } else { "FTQ: work units done in each" };
    format!("{}{what} {} us per quantum\n", format::table(&rows), format::us(quantum_ns))
}

fn enclave_probes(name: &str, opts: &Options) -> Result<Vec<CpuNoise>> {
    let dev = Device::open()?;
    let e = enclave::find_usable(&dev, name)?;
    let cpus = if opts.cpus.is_empty() { e.lwk_cpus.clone() } else { opts.cpus.clone() };
    let mut probes = Vec::new();
    for cpu in cpus {
        eprintln!("atoll noise: {} s on enclave {}'s LWK CPU {cpu}", opts.seconds, e.name);
        let mut req = NoiseReq::new();
        req.id = e.id;
        req.cpu = cpu;
        req.probe = opts.probe.abi();
        req.duration_ns = (opts.seconds * 1e9) as u64;
        req.threshold_ns = if opts.probe == Probe::Selfish { opts.threshold_ns } else { opts.quantum_ns };
        let mut detours = vec![NoiseDetour::default(); NOISE_MAX_LISTED];
        dev.noise(&mut req, &mut detours).map_err(|err| module_error("noise", &req.error, &err))?;
        detours.truncate(req.result.listed as usize);
        probes.push(CpuNoise { kernel: "lwk", label: format!("{}/{cpu}", e.name), result: req.result, detours });
    }
    Ok(probes)
}

fn to_json(threshold_ns: u64, probes: &[CpuNoise]) -> Value {
    let cpus: Vec<Value> = probes
        .iter()
        .map(|p| {
            let r = &p.result;
            json!({
                "kernel": p.kernel, "name": p.label, "cpu": r.cpu, "probe": "selfish",
                "duration_ns": r.duration_ns, "loops": r.loops, "detours": r.detours,
                "per_second": p.per_second(), "availability": p.availability(),
                "total_ns": r.total_ns, "max_ns": r.max_ns,
                "p50_ns": p.percentile_ns(50.0), "p99_ns": p.percentile_ns(99.0),
                "p999_ns": p.percentile_ns(99.9),
                "interrupts": r.irqs, "kernel_detours": r.kernel_detours, "kernel_ns": r.kernel_ns,
                "kernel_max_ns": r.kernel_max_ns, "other_detours": r.detours - r.kernel_detours,
                "attribution": if p.kernel == "lwk" { "per detour" } else { "per 100 ms window" },
                "listed": p.detours.iter().map(|d| [d.at_ns, d.len_ns, d.irqs]).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "probe": "selfish", "threshold_ns": threshold_ns, "cpus": cpus })
}

fn text(threshold_ns: u64, probes: &[CpuNoise]) -> String {
    let mut rows = vec![vec![
        "CPU".to_string(),
        "seconds".into(),
        "available".into(),
        "detours/s".into(),
        "max".into(),
        "p50".into(),
        "p99".into(),
        "p99.9".into(),
        "by its kernel".into(),
        "by others".into(),
        "interrupts".into(),
    ]];
    for p in probes {
        let r = &p.result;
        rows.push(vec![
            p.label.clone(),
            format!("{:.1}", r.duration_ns as f64 / 1e9),
            format!("{:.4}%", 100.0 * p.availability()),
            format!("{:.1}", p.per_second()),
            format!("{} us", format::us(r.max_ns)),
            format!("{} us", format::us(p.percentile_ns(50.0))),
            format!("{} us", format::us(p.percentile_ns(99.0))),
            format!("{} us", format::us(p.percentile_ns(99.9))),
            r.kernel_detours.to_string(),
            (r.detours - r.kernel_detours).to_string(),
            r.irqs.to_string(),
        ]);
    }
    let linux = probes.iter().any(|p| p.kernel == "linux");
    format!(
        "{}selfish detour, threshold {} us; \"by its kernel\": detours during which the CPU took an \
         interrupt{}; \"by others\": the hardware or the hypervisor\n",
        format::table(&rows),
        format::us(threshold_ns),
        if linux { " (on Linux: in a 100 ms window where its interrupts, softirqs or schedules moved)" } else { "" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise_probe::sample;

    #[test]
    fn table_and_json() {
        let p = sample(&[10_000, 30_000], 1);
        let t = text(2_000, std::slice::from_ref(&p));
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("CPU") && lines[0].contains("by its kernel"), "{t}");
        let cells: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(cells[..5], ["sim/1", "2.0", "99.9980%", "1.0", "30.0"], "{t}");
        assert_eq!(cells[cells.len() - 3..], ["1", "1", "1"], "{t}");
        let v = to_json(2_000, &[p]);
        assert_eq!(v["cpus"][0]["kernel_detours"], 1);
        assert_eq!(v["cpus"][0]["other_detours"], 1);
        assert_eq!(v["cpus"][0]["listed"][1], json!([0, 30_000, 0]));
    }
}
