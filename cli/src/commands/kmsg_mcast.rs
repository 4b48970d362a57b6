//! `atoll kmsg-mcast <enclave>...`: Linux sends checked messages to several
//! LWKs through one multicast ring, then the same messages as unicasts to
//! each, and compares the times (the LWKs' side is in the test image).

use super::print_json;
use crate::device::Device;
use crate::enclave;
use crate::error::{module_error, Error, Result};
use crate::format;
use atoll_abi::{KmsgMcastReq, MCAST_MAX};
use serde_json::json;

pub fn run(keys: &[String], count: u32, size: u32, json: bool) -> Result<()> {
    if keys.is_empty() || keys.len() > MCAST_MAX {
        return Err(Error::new(format!("kmsg-mcast takes 1 to {MCAST_MAX} enclaves")));
    }
    let dev = Device::open()?;
    let test_dev = Device::open_test()?;
    let mut req = KmsgMcastReq::new();
    let mut names = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let e = enclave::find(&dev, key)?;
        req.ids[i] = e.id;
        names.push(e.name);
    }
    req.n = keys.len() as u32;
    req.count = count;
    req.len = size;
    test_dev.kmsg_mcast(&mut req).map_err(|e| module_error("kmsg-mcast", &req.error, &e))?;
    let received = &req.received[..keys.len()];
    let bad = &req.bad[..keys.len()];
    let intact = received.iter().all(|&r| r == 2 * u64::from(count)) && bad.iter().all(|&b| b == 0);
    if json {
        print_json(&json!({
            "names": names, "count": count, "size": size, "mcast_ns": req.mcast_ns,
            "unicast_ns": req.unicast_ns, "received": received, "bad": bad,
        }));
    } else {
        println!("{}", to_text(&names, &req, intact));
    }
    if intact {
        Ok(())
    } else {
        Err(Error::new("kmsg-mcast: messages were lost or damaged".to_string()))
    }
}

fn to_text(names: &[String], r: &KmsgMcastReq, intact: bool) -> String {
    let ratio = if r.unicast_ns == 0 { 0.0 } else { r.mcast_ns as f64 / r.unicast_ns as f64 };
    format!(
        "kmsg-mcast {}: {} messages of {} bytes to {} LWKs: multicast {} ms, {} unicasts each {} ms \
         (multicast / unicasts: {:.2}x); {}",
        names.join(" "),
        r.count,
        r.len,
        names.len(),
        format::ms(r.mcast_ns),
        r.count,
        format::ms(r.unicast_ns),
        ratio,
        if intact { "every LWK got every message intact and in order" } else { "LOST OR DAMAGED" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_compares_the_phases() {
        let mut r = KmsgMcastReq::new();
        r.count = 10;
        r.len = 64;
        r.mcast_ns = 5_000_000;
        r.unicast_ns = 10_000_000;
        let names = ["a".to_string(), "b".to_string()];
        let text = to_text(&names, &r, true);
        assert!(text.contains("kmsg-mcast a b: 10 messages of 64 bytes to 2 LWKs: multicast 5.0 ms"), "{text}");
        assert!(text.contains("(multicast / unicasts: 0.50x); every LWK got every message"), "{text}");
        assert!(to_text(&names, &r, false).ends_with("LOST OR DAMAGED"));
    }
}
