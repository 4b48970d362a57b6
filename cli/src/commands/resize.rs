//! `atoll add <enclave> --mem <size>` and `atoll remove <enclave> --mem
//! <size>`: memory given to a running enclave, or taken back from it.

use super::print_json;
use crate::device::Device;
use crate::enclave;
use crate::error::{module_error, Result};
use crate::format;
use atoll_abi::{Resize, RESIZE_ADD_MEM, RESIZE_REMOVE_MEM};
use serde_json::json;

pub fn run(key: &str, add: bool, mem: u64, json: bool) -> Result<()> {
    let dev = Device::open()?;
    let e = enclave::find(&dev, key)?;
    let mut req = Resize::new();
    req.id = e.id;
    req.op = if add { RESIZE_ADD_MEM } else { RESIZE_REMOVE_MEM };
    req.bytes = mem;
    let what = if add { "add" } else { "remove" };
    dev.resize(&mut req).map_err(|err| module_error(what, &req.error, &err))?;
    let after = enclave::find(&dev, key)?;
    if json {
        print_json(&json!({
            "name": e.name, "op": enclave::resize_op(req.op), "bytes": mem,
            "mem_bytes": after.mem_bytes(), "linux_ns": req.linux_ns, "lwk_ns": req.lwk_ns,
        }));
    } else {
        println!("{}", text(&e.name, add, mem, after.mem_bytes(), req.linux_ns, req.lwk_ns));
    }
    Ok(())
}

fn text(name: &str, add: bool, mem: u64, now: u64, linux_ns: u64, lwk_ns: u64) -> String {
    format!(
        "{} {} MiB {} enclave {name}: it has {} MiB now (Linux {} ms, LWK {} ms)",
        if add { "added" } else { "removed" },
        format::mib(mem),
        if add { "to" } else { "from" },
        format::mib(now),
        format::ms(linux_ns),
        format::ms(lwk_ns)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output() {
        assert_eq!(
            text("sim", true, 384 << 20, 512 << 20, 95_100_000, 3_200_000),
            "added 384 MiB to enclave sim: it has 512 MiB now (Linux 95.1 ms, LWK 3.2 ms)"
        );
        assert_eq!(
            text("sim", false, 128 << 20, 384 << 20, 10_000_000, 1_000_000),
            "removed 128 MiB from enclave sim: it has 384 MiB now (Linux 10.0 ms, LWK 1.0 ms)"
        );
    }
}
