//! `atoll kmsg-bench <enclave> [--from <enclave>]`: message round trips
//! between Linux (or another enclave's LWK) and an enclave's LWK, each next
//! to its floor between the same two CPUs: messages with both sides polling
//! against a cache line bounced (a one-slot message, Popcorn's 64-byte
//! cache-line message, and a 64-byte payload, two slots), a 64-byte message
//! with interrupts against a bare IPI and one back. The LWK's side is in
//! its test image.

use super::print_json;
use crate::device::Device;
use crate::enclave;
use crate::error::{module_error, Error, Result};
use crate::format;
use atoll_abi::{BenchFigure, KmsgBenchReq, BENCH_MODES};
use serde_json::json;

const MODES: [(&str, &str); BENCH_MODES] = [
    ("line", "cache line bounced"),
    ("ipi", "bare IPI and one back"),
    ("kmsg_ipi", "64-byte message, interrupts"),
    ("kmsg_poll", "64-byte message, both polling"),
    ("slot_poll", "one-slot message, both polling"),
];

pub fn run(key: &str, from: Option<&str>, rounds: u32, stream_size: u32, json: bool) -> Result<()> {
    let dev = Device::open()?;
    let test_dev = Device::open_test()?;
    let enclave = enclave::find(&dev, key)?;
    let sender = from.map(|f| enclave::find(&dev, f)).transpose()?;
    let mut req = KmsgBenchReq::new();
    req.id = enclave.id;
    req.from_id = sender.as_ref().map_or(0, |s| s.id);
    req.rounds = rounds;
    req.stream_size = stream_size;
    test_dev.kmsg_bench(&mut req).map_err(|e| module_error("kmsg-bench", &req.error, &e))?;
    let from_name = sender.as_ref().map_or("Linux", |s| s.name.as_str());
    let stream = (stream_size > 0).then(|| Stream::of(&req));
    if json {
        let mut j = to_json(&enclave.name, from_name, rounds, &req.mode);
        if let Some(s) = &stream {
            j["stream"] = json!({ "size": stream_size, "mb_per_s": s.mb_per_s, "memcpy_mb_per_s": s.memcpy_mb_per_s });
        }
        print_json(&j);
    } else {
        println!("{}", to_text(&enclave.name, from_name, rounds, &req.mode));
        if let Some(s) = &stream {
            println!("{}", s.text(rounds, stream_size));
        }
    }
    match req.mode.iter().position(|f| f.error != 0) {
        Some(i) => Err(Error::new(format!("kmsg-bench: {} could not be measured", MODES[i].1))),
        None => Ok(()),
    }
}

/// Linux streaming messages to the LWK, next to memcpy() of the same bytes.
struct Stream {
    mb_per_s: f64,
    memcpy_mb_per_s: f64,
}

impl Stream {
    fn of(r: &KmsgBenchReq) -> Self {
        let bytes = f64::from(r.rounds) * f64::from(r.stream_size);
        let rate = |ns: u64| if ns == 0 { 0.0 } else { bytes * 1e3 / ns as f64 };
        Stream { mb_per_s: rate(r.stream_ns), memcpy_mb_per_s: rate(r.memcpy_ns) }
    }

    fn text(&self, rounds: u32, size: u32) -> String {
        let share = if self.memcpy_mb_per_s == 0.0 { 0.0 } else { self.mb_per_s / self.memcpy_mb_per_s };
        format!(
            "  stream Linux -> LWK, {rounds} messages of {size} bytes: {:.1} MB/s; memcpy() of the same on Linux: {:.1} MB/s ({:.2}x)",
            self.mb_per_s, self.memcpy_mb_per_s, share
        )
    }
}

/// a / b, the message's cost against its floor.
fn ratio(a: &BenchFigure, b: &BenchFigure) -> f64 {
    if b.median_ns == 0 {
        0.0
    } else {
        a.median_ns as f64 / b.median_ns as f64
    }
}

fn to_text(name: &str, from: &str, rounds: u32, f: &[BenchFigure; BENCH_MODES]) -> String {
    let mut out = format!("kmsg-bench {name} from {from}: {rounds} round trips each, median (min, 90th percentile)");
    for (i, (_, what)) in MODES.iter().enumerate() {
        let fig = &f[i];
        let line = if fig.error != 0 {
            format!("\n  {what:<32} not measured (error {})", fig.error)
        } else {
            format!(
                "\n  {what:<32} {:>8} us ({} .. {})",
                format::us(fig.median_ns),
                format::us(fig.min_ns),
                format::us(fig.p90_ns)
            )
        };
        out.push_str(&line);
    }
    out.push_str(&format!(
        "\n  polling message / cache line: {:.2}x one slot, {:.2}x 64 bytes; message with interrupts / bare IPI: {:.2}x",
        ratio(&f[4], &f[0]),
        ratio(&f[3], &f[0]),
        ratio(&f[2], &f[1])
    ));
    out
}

fn to_json(name: &str, from: &str, rounds: u32, f: &[BenchFigure; BENCH_MODES]) -> serde_json::Value {
    let modes: serde_json::Map<String, serde_json::Value> = MODES
        .iter()
        .zip(f)
        .map(|((key, _), fig)| {
            let v =
                json!({ "median_ns": fig.median_ns, "min_ns": fig.min_ns, "p90_ns": fig.p90_ns, "error": fig.error });
            (key.to_string(), v)
        })
        .collect();
    json!({ "name": name, "from": from, "rounds": rounds, "modes": modes,
            "poll_vs_line": ratio(&f[3], &f[0]), "slot_poll_vs_line": ratio(&f[4], &f[0]),
            "ipi_msg_vs_ipi": ratio(&f[2], &f[1]) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(median_ns: u64) -> BenchFigure {
        BenchFigure { median_ns, min_ns: median_ns / 2, p90_ns: median_ns * 2, error: 0 }
    }

    #[test]
    fn table_and_ratios() {
        let f = [fig(1_000), fig(8_000), fig(10_000), fig(2_500), fig(1_500)];
        let text = to_text("b", "a", 100, &f);
        assert!(text.contains("cache line bounced"), "{text}");
        assert!(text.contains(
            "polling message / cache line: 1.50x one slot, 2.50x 64 bytes; message with interrupts / bare IPI: 1.25x"
        ));
        let j = to_json("b", "Linux", 100, &f);
        assert_eq!(j["modes"]["kmsg_ipi"]["median_ns"], 10_000);
        assert_eq!(j["slot_poll_vs_line"], 1.5);
        let mut bad = f;
        bad[1].error = -110;
        assert!(to_text("b", "a", 1, &bad).contains("not measured (error -110)"));
        assert_eq!(ratio(&f[0], &BenchFigure::default()), 0.0);
        let mut r = KmsgBenchReq::new();
        r.rounds = 1000;
        r.stream_size = 4096;
        r.stream_ns = 4_096_000; // 4 096 000 bytes in 4.096 ms: 1000 MB/s
        r.memcpy_ns = 1_024_000;
        let s = Stream::of(&r);
        assert!(s.text(1000, 4096).contains("1000.0 MB/s; memcpy() of the same on Linux: 4000.0 MB/s (0.25x)"));
    }
}
