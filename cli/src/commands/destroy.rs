//! `atoll destroy <enclave>`: stop the LWK and give CPUs and memory back.

use super::print_json;
use crate::device::Device;
use crate::enclave;
use crate::error::{module_error, Result};
use crate::format;
use atoll_abi::{Destroy, DPHASES};
use serde_json::json;

pub fn run(key: &str, force: bool, json: bool) -> Result<()> {
    let dev = Device::open()?;
    let enclave = enclave::find(&dev, key)?;
    let mut req = Destroy::new();
    req.id = enclave.id;
    req.force = force as u32;
    dev.destroy(&mut req).map_err(|e| module_error("destroy", &req.error, &e))?;
    if json {
        print_json(&to_json(&enclave.name, &req.phase_ns));
    } else {
        println!("{}", text(&enclave.name, &req.phase_ns));
    }
    Ok(())
}

fn text(name: &str, ns: &[u64; DPHASES]) -> String {
    format!(
        "destroyed enclave {name}: stop {} ms, CPUs back {} ms, memory back {} ms",
        format::ms(ns[0]),
        format::ms(ns[1]),
        format::ms(ns[2])
    )
}

fn to_json(name: &str, ns: &[u64; DPHASES]) -> serde_json::Value {
    json!({ "name": name, "phase_ns": { "stop": ns[0], "cpus": ns[1], "memory": ns[2] } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output() {
        let ns = [2_000_000, 30_000_000, 45_600_000];
        assert_eq!(text("web", &ns), "destroyed enclave web: stop 2.0 ms, CPUs back 30.0 ms, memory back 45.6 ms");
        assert_eq!(
            to_json("web", &ns),
            json!({ "name": "web", "phase_ns": { "stop": 2_000_000, "cpus": 30_000_000, "memory": 45_600_000 } })
        );
    }
}
