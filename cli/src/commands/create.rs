//! `atoll create`: take CPUs and memory from Linux and boot the LWK on them.

use super::print_json;
use crate::cpuset;
use crate::device::Device;
use crate::enclave::{self, create_phases_json, create_phases_text, ranges_json};
use crate::error::{module_error, Error, Result};
use crate::format;
use crate::image;
use crate::owner::{self, Owner};
use crate::parse::CpuSpec;
use atoll_abi::{c_str, set_c_str, Create, MemRange, MAX_MEM_RANGES, PHASES};
use serde_json::json;
use std::path::{Path, PathBuf};

pub struct Options {
    pub cpus: CpuSpec,
    pub mem_bytes: u64,
    /// None: the module names it enclave<N>.
    pub name: Option<String>,
    /// None: the first of `kernel_candidates()` that exists.
    pub kernel: Option<PathBuf>,
    pub cmdline: String,
    pub timeout_secs: u32,
    /// `user[:group]`; None: whoever runs `create`.
    pub owner: Option<String>,
    /// Its programs' servers' nice; None: theirs.
    pub serve_nice: Option<i32>,
    /// HRT_*: who may run kernel-mode programs in it.
    pub hrt: u32,
}

/// HRT_* from `--hrt` and `--hrt-users`.
pub fn hrt_setting(hrt: bool, users: bool) -> u32 {
    match (hrt, users) {
        (false, _) => atoll_abi::HRT_NONE,
        (true, false) => atoll_abi::HRT_ROOT,
        (true, true) => atoll_abi::HRT_OWNER,
    }
}

/// Where the LWK image is looked for when --kernel is not given.
pub fn kernel_candidates() -> Vec<PathBuf> {
    let mut paths = vec![PathBuf::from("/lib/atoll/atoll-kernel")];
    if let Some(dir) = std::env::current_exe().ok().as_deref().and_then(Path::parent) {
        paths.push(dir.join("../lib/atoll/atoll-kernel"));
    }
    paths.push(PathBuf::from("build/atoll-kernel"));
    paths
}

fn find_kernel() -> Result<PathBuf> {
    let candidates = kernel_candidates();
    candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        let tried: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        Error::new(format!("cannot find the LWK image: tried {}; give one with --kernel <image>", tried.join(", ")))
    })
}

pub fn run(opts: Options, json: bool) -> Result<()> {
    let owner = match &opts.owner {
        Some(text) => owner::parse(text)?,
        None => Owner::me(),
    };
    let dev = Device::open()?;
    let kernel = match opts.kernel {
        Some(path) => path,
        None => find_kernel()?,
    };
    let image = image::load(&kernel)?;

    let mut req = Create::new();
    if let Some(name) = &opts.name {
        // The parser already limited the length; this cannot fail.
        set_c_str(&mut req.name, name);
    }
    match &opts.cpus {
        CpuSpec::Count(n) => req.cpu_count = *n,
        CpuSpec::List(list) => {
            req.cpus = cpuset::to_bits(list);
            req.cpu_count = list.len() as u32;
        }
    }
    req.boot_timeout_ms = opts.timeout_secs.saturating_mul(1000);
    req.mem_bytes = opts.mem_bytes;
    req.image_mem_size = image.mem_size;
    req.entry_offset = image.entry_offset;
    req.trampoline_offset = image.trampoline_offset;
    req.trampoline_size = image.trampoline_size;
    set_c_str(&mut req.cmdline, &opts.cmdline);
    req.owner_uid = owner.uid;
    req.owner_gid = owner.gid;
    req.serve_nice = opts.serve_nice.unwrap_or(0);
    req.hrt = opts.hrt;

    dev.create(&mut req, &image.bytes).map_err(|e| module_error("create", &req.error, &e))?;

    let created = Created::from_reply(&req, &opts.cpus, &dev);
    if json {
        print_json(&created.to_json());
    } else {
        println!("{}", created.text());
    }
    Ok(())
}

/// What the module answered to a successful create.
struct Created {
    name: String,
    id: u32,
    cpus: Vec<u32>,
    ranges: Vec<MemRange>,
    mem_bytes: u64,
    phase_ns: [u64; PHASES],
}

impl Created {
    fn from_reply(req: &Create, asked: &CpuSpec, dev: &Device) -> Self {
        let mut cpus = cpuset::from_bits(&req.taken_cpus);
        if cpus.is_empty() {
            if let CpuSpec::List(list) = asked {
                cpus = list.clone();
            }
        }
        let ranges = req.mem[..(req.mem_count as usize).min(MAX_MEM_RANGES)].to_vec();
        let mem_bytes = match ranges.iter().map(|r| r.size).sum() {
            0 => req.mem_bytes,
            sum => sum,
        };
        Created { name: reply_name(req, dev), id: req.id, cpus, ranges, mem_bytes, phase_ns: req.phase_ns }
    }

    fn text(&self) -> String {
        format!(
            "created enclave {} (id {}): CPUs {}, memory {} MiB in {} blocks, ready in {}",
            self.name,
            self.id,
            format::cpu_list(&self.cpus),
            format::mib(self.mem_bytes),
            self.ranges.len(),
            create_phases_text(&self.phase_ns)
        )
    }

    fn to_json(&self) -> serde_json::Value {
        json!({
            "name": self.name,
            "id": self.id,
            "cpus": self.cpus,
            "mem_bytes": self.mem_bytes,
            "mem_blocks": self.ranges.len(),
            "ranges": ranges_json(&self.ranges),
            "phase_ns": create_phases_json(&self.phase_ns),
        })
    }
}

/// The enclave's name: as the module wrote it back, else as it lists it.
fn reply_name(req: &Create, dev: &Device) -> String {
    let name = c_str(&req.name);
    if !name.is_empty() {
        return name.to_string();
    }
    enclave::list(dev)
        .ok()
        .and_then(|all| all.into_iter().find(|e| e.id == req.id))
        .map(|e| e.name)
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| format!("enclave{}", req.id))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn created() -> Created {
        Created {
            name: "enclave1".into(),
            id: 1,
            cpus: vec![2, 3],
            ranges: vec![
                MemRange { start: 0x1_0000_0000, size: 128 << 20 },
                MemRange { start: 0x2_0000_0000, size: 128 << 20 },
            ],
            mem_bytes: 256 << 20,
            phase_ns: [1_200_000, 3_400_000, 500_000, 120_000_000],
        }
    }

    #[test]
    fn text_line() {
        assert_eq!(
            created().text(),
            "created enclave enclave1 (id 1): CPUs 2-3, memory 256 MiB in 2 blocks, ready in 125.1 ms \
             (CPUs 1.2 ms, memory 3.4 ms, load 0.5 ms, boot 120.0 ms)"
        );
    }

    #[test]
    fn json_object() {
        let v = created().to_json();
        assert_eq!(v["name"], "enclave1");
        assert_eq!(v["id"], 1);
        assert_eq!(v["cpus"], json!([2, 3]));
        assert_eq!(v["mem_bytes"], 256u64 << 20);
        assert_eq!(v["mem_blocks"], 2);
        assert_eq!(
            v["phase_ns"],
            json!({ "cpus": 1_200_000, "memory": 3_400_000, "load": 500_000, "boot": 120_000_000 })
        );
    }

    #[test]
    fn kernel_search_order() {
        let paths = kernel_candidates();
        assert_eq!(paths.first().unwrap(), Path::new("/lib/atoll/atoll-kernel"));
        assert_eq!(paths.last().unwrap(), Path::new("build/atoll-kernel"));
        assert!(paths[1].ends_with("../lib/atoll/atoll-kernel"));
    }
}
