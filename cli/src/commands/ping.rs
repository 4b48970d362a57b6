//! `atoll ping <enclave> [--from <enclave>]`: round trips of a message
//! from Linux, or from one LWK directly to another, and back.

use super::print_json;
use crate::device::Device;
use crate::enclave;
use crate::error::{os_error, Error, Result};
use crate::format;
use serde_json::json;

pub fn run(key: &str, from: Option<&str>, count: u32, json: bool) -> Result<()> {
    let dev = Device::open()?;
    let enclave = enclave::find_usable(&dev, key)?;
    let sender = from.map(|f| enclave::find_usable(&dev, f)).transpose()?;
    if sender.as_ref().is_some_and(|s| s.id == enclave.id) {
        return Err(Error::new(format!("ping {0} --from {0}: an enclave does not ping itself", enclave.name)));
    }
    let name = match &sender {
        Some(s) => format!("{} from {}", enclave.name, s.name),
        None => enclave.name.clone(),
    };
    let name = &name;
    let from_id = sender.as_ref().map_or(0, |s| s.id);
    let mut rtts = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let rtt =
            dev.ping(enclave.id, from_id).map_err(|e| Error::new(format!("ping {name} failed: {}", os_error(&e))))?;
        if !json {
            println!("ping {name}: {} us", format::us(rtt));
        }
        rtts.push(rtt);
    }
    if json {
        let from = sender.as_ref().map(|s| s.name.as_str());
        print_json(&json!({ "name": enclave.name, "from": from, "rtt_ns": rtts }));
    } else if let Some(line) = summary(name, &rtts) {
        println!("{line}");
    }
    Ok(())
}

/// The closing line after more than one round trip.
fn summary(name: &str, rtts: &[u64]) -> Option<String> {
    if rtts.len() < 2 {
        return None;
    }
    let min = *rtts.iter().min()?;
    let max = *rtts.iter().max()?;
    let avg = rtts.iter().sum::<u64>() / rtts.len() as u64;
    Some(format!(
        "ping {name}: {} round trips, min {} us, avg {} us, max {} us",
        rtts.len(),
        format::us(min),
        format::us(avg),
        format::us(max)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_line() {
        assert_eq!(summary("web", &[]), None);
        assert_eq!(summary("web", &[5_000]), None);
        assert_eq!(
            summary("web", &[5_000, 7_000, 12_300]).unwrap(),
            "ping web: 3 round trips, min 5.0 us, avg 8.1 us, max 12.3 us"
        );
    }
}
