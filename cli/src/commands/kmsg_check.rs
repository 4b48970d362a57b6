//! `atoll kmsg-check <enclave>`: floods the message rings between Linux and
//! an enclave's LWK both ways with checked messages (every byte, sequence
//! numbers per sender) and reports what arrived and how fast. The LWK's
//! side is in its test image.

use super::print_json;
use crate::device::Device;
use crate::enclave;
use crate::error::{module_error, Error, Result};
use atoll_abi::{KmsgCheckReq, CHECK_FROM_LWK, CHECK_TO_LWK};
use serde_json::json;

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Direction {
    ToLwk,
    FromLwk,
    Both,
}

impl Direction {
    fn bits(self) -> u32 {
        match self {
            Direction::ToLwk => CHECK_TO_LWK,
            Direction::FromLwk => CHECK_FROM_LWK,
            Direction::Both => CHECK_TO_LWK | CHECK_FROM_LWK,
        }
    }
}

pub struct Options {
    pub count: u32,
    pub min_size: u32,
    pub max_size: u32,
    pub direction: Direction,
}

pub fn run(key: &str, o: Options, json: bool) -> Result<()> {
    let dev = Device::open()?;
    let test_dev = Device::open_test()?;
    let enclave = enclave::find(&dev, key)?;
    let name = &enclave.name;
    let mut req = KmsgCheckReq::new();
    req.id = enclave.id;
    req.count = o.count;
    req.min_len = o.min_size;
    req.max_len = o.max_size;
    req.directions = o.direction.bits();
    test_dev.kmsg_check(&mut req).map_err(|e| module_error("kmsg-check", &req.error, &e))?;
    if json {
        print_json(&to_json(name, &req));
    } else {
        println!("{}", to_text(name, &req));
    }
    if !all_arrived(&req) {
        return Err(Error::new(format!("kmsg-check {name}: messages were lost or damaged")));
    }
    Ok(())
}

/// Every message of each checked direction arrived intact and in order.
fn all_arrived(r: &KmsgCheckReq) -> bool {
    let count = u64::from(r.count);
    let to = r.directions & CHECK_TO_LWK == 0 || (r.to_bad == 0 && r.to_messages == count);
    let from =
        r.directions & CHECK_FROM_LWK == 0 || (r.from_bad == 0 && r.from_messages == count * u64::from(r.from_senders));
    to && from
}

/// MB/s (10^6 bytes per second) of `bytes` in `ns`.
fn rate(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 * 1e3 / ns as f64
    }
}

fn to_text(name: &str, r: &KmsgCheckReq) -> String {
    let mut lines = Vec::new();
    if r.directions & CHECK_TO_LWK != 0 {
        lines.push(format!(
            "kmsg-check {name}: Linux -> LWK: {} of {} messages ({}..{} bytes) intact and in order, {} bad, {:.1} MB/s",
            r.to_messages,
            r.count,
            r.min_len,
            r.max_len,
            r.to_bad,
            rate(r.to_bytes, r.to_ns),
        ));
    }
    if r.directions & CHECK_FROM_LWK != 0 {
        lines.push(format!(
            "kmsg-check {name}: LWK -> Linux: {} CPUs x {}: {} intact and in order, {} bad, {:.1} MB/s, ring full {} times",
            r.from_senders,
            r.count,
            r.from_messages,
            r.from_bad,
            rate(r.from_bytes, r.from_ns),
            r.from_waits
        ));
    }
    lines.join("\n")
}

fn to_json(name: &str, r: &KmsgCheckReq) -> serde_json::Value {
    json!({
        "name": name, "count": r.count, "directions": r.directions, "min_size": r.min_len, "max_size": r.max_len,
        "to_lwk": { "messages": r.to_messages, "bad": r.to_bad, "bytes": r.to_bytes, "ns": r.to_ns },
        "from_lwk": {
            "senders": r.from_senders, "messages": r.from_messages, "bad": r.from_bad,
            "bytes": r.from_bytes, "ns": r.from_ns, "ring_full": r.from_waits,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_says_both_directions() {
        let mut r = KmsgCheckReq::new();
        r.count = 10;
        r.min_len = 16;
        r.max_len = 100;
        r.to_messages = 10;
        r.to_bytes = 1_000_000;
        r.to_ns = 1_000_000_000;
        r.from_senders = 2;
        r.from_messages = 20;
        r.directions = Direction::Both.bits();
        let text = to_text("web", &r);
        assert!(text.contains("Linux -> LWK: 10 of 10 messages (16..100 bytes) intact and in order, 0 bad, 1.0 MB/s"));
        assert!(text.contains("LWK -> Linux: 2 CPUs x 10: 20 intact"));
        assert!(all_arrived(&r));
        r.from_messages = 19;
        assert!(!all_arrived(&r), "one lost");
        r.directions = Direction::ToLwk.bits();
        assert!(all_arrived(&r), "the other direction was not checked");
        assert!(!to_text("web", &r).contains("LWK -> Linux"));
        assert_eq!(rate(5, 0), 0.0);
    }
}
