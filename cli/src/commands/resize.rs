//! `atoll add <enclave> --cpus <list|count> | --mem <size>` and `atoll
//! remove ...`: CPUs or memory given to a running enclave, or taken back.

use super::print_json;
use crate::device::Device;
use crate::enclave;
use crate::error::{module_error, Result};
use crate::format;
use crate::parse::CpuSpec;
use crate::{cpuset, enclave::Enclave};
use atoll_abi::{Resize, RESIZE_ADD_CPUS, RESIZE_ADD_MEM, RESIZE_REMOVE_CPUS, RESIZE_REMOVE_MEM};
use serde_json::json;

/// What to add or remove (clap makes sure exactly one is given).
pub enum What {
    Cpus(CpuSpec),
    Mem(u64),
}

pub fn what(cpus: Option<CpuSpec>, mem: Option<u64>) -> What {
    match (cpus, mem) {
        (Some(c), _) => What::Cpus(c),
        (None, Some(m)) => What::Mem(m),
        (None, None) => unreachable!("clap requires --cpus or --mem"),
    }
}

pub fn run(key: &str, add: bool, what: What, json: bool) -> Result<()> {
    let dev = Device::open()?;
    let e = enclave::find(&dev, key)?;
    let mut req = Resize::new();
    req.id = e.id;
    match &what {
        What::Mem(bytes) => {
            req.op = if add { RESIZE_ADD_MEM } else { RESIZE_REMOVE_MEM };
            req.bytes = *bytes;
        }
        What::Cpus(spec) => {
            req.op = if add { RESIZE_ADD_CPUS } else { RESIZE_REMOVE_CPUS };
            match spec {
                CpuSpec::Count(n) => req.cpu_count = *n,
                CpuSpec::List(list) => req.cpus = cpuset::to_bits(list),
            }
        }
    }
    let verb = if add { "add" } else { "remove" };
    dev.resize(&mut req).map_err(|err| module_error(verb, &req.error, &err))?;
    let after = enclave::find(&dev, key)?;
    let done = cpuset::from_bits(&req.cpus);
    if json {
        print_json(&json!({
            "name": e.name, "op": enclave::resize_op(req.op), "bytes": req.bytes, "cpus": done,
            "cpus_now": after.cpus, "mem_bytes": after.mem_bytes(), "linux_ns": req.linux_ns,
            "lwk_ns": req.lwk_ns,
        }));
    } else {
        println!("{}", text(&after, add, &what, &done, req.linux_ns, req.lwk_ns));
    }
    Ok(())
}

fn text(after: &Enclave, add: bool, what: &What, done: &[u32], linux_ns: u64, lwk_ns: u64) -> String {
    let (verb, dir) = if add { ("added", "to") } else { ("removed", "from") };
    let (amount, now) = match what {
        What::Mem(bytes) => (format!("{} MiB", format::mib(*bytes)), format!("{} MiB", format::mib(after.mem_bytes()))),
        What::Cpus(_) => (format!("CPU {}", format::cpu_list(done)), format!("CPUs {}", format::cpu_list(&after.cpus))),
    };
    format!(
        "{verb} {amount} {dir} enclave {}: it has {now} now (Linux {} ms, LWK {} ms)",
        after.name,
        format::ms(linux_ns),
        format::ms(lwk_ns)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enclave(cpus: Vec<u32>, mem: u64) -> Enclave {
        let mut info = atoll_abi::EnclaveInfo::new();
        atoll_abi::set_c_str(&mut info.name, "sim");
        info.cpus = cpuset::to_bits(&cpus);
        info.mem_count = 1;
        info.mem[0].size = mem;
        Enclave::from_info(&info)
    }

    #[test]
    fn output() {
        let e = enclave(vec![2], 512 << 20);
        assert_eq!(
            text(&e, true, &What::Mem(384 << 20), &[], 95_100_000, 3_200_000),
            "added 384 MiB to enclave sim: it has 512 MiB now (Linux 95.1 ms, LWK 3.2 ms)"
        );
        let e = enclave(vec![2, 3], 128 << 20);
        assert_eq!(
            text(&e, true, &What::Cpus(CpuSpec::Count(1)), &[3], 30_000_000, 12_000_000),
            "added CPU 3 to enclave sim: it has CPUs 2-3 now (Linux 30.0 ms, LWK 12.0 ms)"
        );
        let e = enclave(vec![2], 128 << 20);
        assert_eq!(
            text(&e, false, &What::Cpus(CpuSpec::List(vec![3])), &[3], 10_000_000, 1_000_000),
            "removed CPU 3 from enclave sim: it has CPUs 2 now (Linux 10.0 ms, LWK 1.0 ms)"
        );
    }
}
