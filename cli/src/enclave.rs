//! What the module says about its enclaves (IOC_INFO), found by name or id.

use crate::cpuset;
use crate::device::Device;
use crate::error::{os_error, Error, Result};
use crate::format;
use crate::owner::Owner;
use crate::running::{self, Program};
use atoll_abi::{
    c_str, EnclaveInfo, MemRange, ResizeEvent, ENCLAVE_BOOTING, ENCLAVE_CRASHED, ENCLAVE_RUNNING, ENCLAVE_STOPPED,
    MAX_MEM_RANGES, PHASES, RESIZE_HISTORY,
};
use serde_json::{json, Value};

/// A guard against a module that never answers ENOENT.
const MAX_ENCLAVES: u32 = 1 << 16;

#[derive(Clone, Debug)]
pub struct Enclave {
    pub id: u32,
    pub name: String,
    pub state: u32,
    pub cpus: Vec<u32>,
    pub ranges: Vec<MemRange>,
    pub uptime_ns: u64,
    pub phase_ns: [u64; PHASES],
    /// The LWK's memory: not in use, and all it manages (0: not reported yet).
    pub lwk_free_bytes: u64,
    pub lwk_total_bytes: u64,
    /// Its programs (filled by `list` and `find`).
    pub programs: Vec<Program>,
    /// Its last resizes, oldest first.
    pub resizes: Vec<ResizeEvent>,
    /// The LWK's CPU indices, in order.
    pub lwk_cpus: Vec<u32>,
    pub owner: Owner,
    /// The nice its programs' servers get on Linux (0: their own).
    pub serve_nice: i32,
    /// HRT_*: who may run kernel-mode programs in it.
    pub hrt: u32,
    /// The caller may use it; if not, the module told only its id, state,
    /// name and owner.
    pub yours: bool,
}

impl Enclave {
    pub fn from_info(info: &EnclaveInfo) -> Self {
        let ranges = info.mem[..(info.mem_count as usize).min(MAX_MEM_RANGES)].to_vec();
        Enclave {
            id: info.id,
            name: c_str(&info.name).to_string(),
            state: info.state,
            cpus: cpuset::from_bits(&info.cpus),
            ranges,
            uptime_ns: info.uptime_ns,
            phase_ns: info.phase_ns,
            lwk_free_bytes: info.lwk_free_bytes,
            lwk_total_bytes: info.lwk_total_bytes,
            programs: Vec::new(),
            resizes: info.resize[..(info.resizes as usize).min(RESIZE_HISTORY)].to_vec(),
            lwk_cpus: (0..64).filter(|c| info.lwk_cpus & (1 << c) != 0).collect(),
            owner: Owner { uid: info.owner_uid, gid: info.owner_gid },
            serve_nice: info.serve_nice,
            hrt: info.hrt,
            yours: info.yours != 0,
        }
    }

    pub fn mem_bytes(&self) -> u64 {
        self.ranges.iter().map(|r| r.size).sum()
    }

    pub fn state_name(&self) -> String {
        state_name(self.state)
    }

    /// "100.5 of 120 MiB free", or "-" before the LWK reports it.
    pub fn lwk_memory_text(&self) -> String {
        match self.lwk_total_bytes {
            0 => "-".into(),
            total => format!("{} of {} MiB free", format::mib(self.lwk_free_bytes), format::mib(total)),
        }
    }

    /// The object `status --json` prints (and `list --json` an array of).
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "id": self.id,
            "state": self.state_name(),
            "cpus": self.cpus,
            "mem_bytes": self.mem_bytes(),
            "ranges": ranges_json(&self.ranges),
            "uptime_ns": self.uptime_ns,
            "phase_ns": create_phases_json(&self.phase_ns),
            "lwk_free_bytes": self.lwk_free_bytes,
            "lwk_total_bytes": self.lwk_total_bytes,
            "programs": self.programs.iter().map(Program::to_json).collect::<Vec<_>>(),
            "resizes": self.resizes.iter().map(resize_json).collect::<Vec<_>>(),
            "owner": { "uid": self.owner.uid, "gid": self.owner.gid, "text": self.owner.text() },
            "serve_nice": self.serve_nice,
            "kernel_mode_programs": hrt_name(self.hrt),
            "yours": self.yours,
        })
    }
}

fn is_cpu_op(op: u32) -> bool {
    op == atoll_abi::RESIZE_ADD_CPUS || op == atoll_abi::RESIZE_REMOVE_CPUS
}

/// A CPU resize's Linux CPUs (the event keeps CPUs 0-63, a bit each).
fn event_cpus(r: &ResizeEvent) -> Vec<u32> {
    (0..64).filter(|c| r.amount & (1 << c) != 0).collect()
}

fn resize_json(r: &ResizeEvent) -> Value {
    let mut v = json!({
        "at_ns": r.at_ns, "op": resize_op(r.op), "result": r.result,
        "linux_ns": r.linux_ns, "lwk_ns": r.lwk_ns,
    });
    if is_cpu_op(r.op) {
        v["cpus"] = json!(event_cpus(r));
    } else {
        v["bytes"] = json!(r.amount);
    }
    v
}

pub fn resize_op(op: u32) -> &'static str {
    match op {
        atoll_abi::RESIZE_ADD_MEM => "add memory",
        atoll_abi::RESIZE_REMOVE_MEM => "remove memory",
        atoll_abi::RESIZE_ADD_CPUS => "add cpus",
        atoll_abi::RESIZE_REMOVE_CPUS => "remove cpus",
        _ => "unknown",
    }
}

/// "+384 MiB memory at 12.3 s: done (Linux 95.1 ms, LWK 3.2 ms)", or
/// "-CPU 3 at ...".
pub fn resize_text(r: &ResizeEvent) -> String {
    let removes = r.op == atoll_abi::RESIZE_REMOVE_MEM || r.op == atoll_abi::RESIZE_REMOVE_CPUS;
    let sign = if removes { "-" } else { "+" };
    let outcome = match r.result {
        0 => "done".to_string(),
        e => format!("refused ({})", crate::error::os_error(&std::io::Error::from_raw_os_error(-e))),
    };
    let what = if is_cpu_op(r.op) {
        match event_cpus(r).as_slice() {
            [] => "CPUs".to_string(),
            cpus => format!("CPU {}", format::cpu_list(cpus)),
        }
    } else {
        format!("{} MiB memory", format::mib(r.amount))
    };
    format!(
        "{sign}{what} at {} s: {outcome} (Linux {} ms, LWK {} ms)",
        format::secs(r.at_ns),
        format::ms(r.linux_ns),
        format::ms(r.lwk_ns)
    )
}

pub fn state_name(state: u32) -> String {
    match state {
        ENCLAVE_BOOTING => "booting".into(),
        ENCLAVE_RUNNING => "running".into(),
        ENCLAVE_CRASHED => "crashed".into(),
        ENCLAVE_STOPPED => "stopped".into(),
        other => format!("unknown ({other})"),
    }
}

pub fn ranges_json(ranges: &[MemRange]) -> Value {
    ranges.iter().map(|r| json!({ "start": r.start, "size": r.size })).collect()
}

pub fn create_phases_json(ns: &[u64; PHASES]) -> Value {
    json!({ "cpus": ns[0], "memory": ns[1], "load": ns[2], "boot": ns[3] })
}

/// "152.3 ms (CPUs 12.0 ms, memory 3.0 ms, load 1.1 ms, boot 136.2 ms)"
pub fn create_phases_text(ns: &[u64; PHASES]) -> String {
    format!(
        "{} ms (CPUs {} ms, memory {} ms, load {} ms, boot {} ms)",
        format::ms(ns.iter().sum()),
        format::ms(ns[0]),
        format::ms(ns[1]),
        format::ms(ns[2]),
        format::ms(ns[3])
    )
}

/// Every enclave, in the module's order.
pub fn list(dev: &Device) -> Result<Vec<Enclave>> {
    let mut enclaves = Vec::new();
    for index in 0..MAX_ENCLAVES {
        match dev.info(index) {
            Ok(Some(info)) => {
                let mut e = Enclave::from_info(&info);
                if e.yours {
                    e.programs = running::list(dev, e.id)?;
                }
                enclaves.push(e);
            }
            Ok(None) => return Ok(enclaves),
            Err(e) => return Err(Error::new(format!("cannot list the enclaves: {}", os_error(&e)))),
        }
    }
    Err(Error::new(format!("cannot list the enclaves: the module lists more than {MAX_ENCLAVES}")))
}

/// The enclave called `key`, or else the one whose id `key` is.
pub fn find(dev: &Device, key: &str) -> Result<Enclave> {
    pick(list(dev)?, key).ok_or_else(|| Error::new(format!("no enclave named '{key}'")))
}

/// Like `find`, for what only its owner, group and root may do.
pub fn find_usable(dev: &Device, key: &str) -> Result<Enclave> {
    let e = find(dev, key)?;
    if !e.yours {
        let who = if e.owner.gid == atoll_abi::NO_GROUP { "its owner" } else { "its owner, its group's members" };
        return Err(Error::new(format!(
            "enclave {} belongs to {}: only {who} and root may use it",
            e.name,
            e.owner.text()
        )));
    }
    Ok(e)
}

fn pick(enclaves: Vec<Enclave>, key: &str) -> Option<Enclave> {
    let id = key.parse::<u32>().ok();
    let by_name = enclaves.iter().position(|e| e.name == key);
    let by_id = enclaves.iter().position(|e| Some(e.id) == id);
    by_name.or(by_id).map(|i| enclaves[i].clone())
}

/// Who may run kernel-mode programs, as `atoll status` says it.
pub fn hrt_name(hrt: u32) -> &'static str {
    match hrt {
        atoll_abi::HRT_ROOT => "root",
        atoll_abi::HRT_OWNER => "root and the owner",
        _ => "no one",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: u32, name: &str) -> EnclaveInfo {
        let mut info = EnclaveInfo::new();
        info.id = id;
        info.state = ENCLAVE_RUNNING;
        atoll_abi::set_c_str(&mut info.name, name);
        info.cpus[0] = 0b1100;
        info.mem_count = 2;
        info.mem[0] = MemRange { start: 0x1_0000_0000, size: 128 << 20 };
        info.mem[1] = MemRange { start: 0x2_0000_0000, size: 256 << 20 };
        info.mem[2] = MemRange { start: 0xdead, size: 1 }; // past mem_count
        info.uptime_ns = 1_500_000_000;
        info.phase_ns = [1_000_000, 2_000_000, 3_000_000, 4_000_000];
        info.lwk_free_bytes = 100 << 20;
        info.lwk_total_bytes = 120 << 20;
        info
    }

    #[test]
    fn reads_info() {
        let e = Enclave::from_info(&info(7, "web"));
        assert_eq!((e.id, e.name.as_str(), e.cpus.clone()), (7, "web", vec![2, 3]));
        assert_eq!(e.ranges.len(), 2);
        assert_eq!(e.mem_bytes(), 384 << 20);
        assert_eq!(e.state_name(), "running");
        assert_eq!((e.lwk_free_bytes, e.lwk_total_bytes), (100 << 20, 120 << 20));
        assert_eq!(e.lwk_memory_text(), "100 of 120 MiB free");
        let mut idle = info(1, "x");
        idle.lwk_total_bytes = 0;
        assert_eq!(Enclave::from_info(&idle).lwk_memory_text(), "-");
        assert_eq!(state_name(99), "unknown (99)");
        let mut bad = info(1, "x");
        bad.mem_count = 1000;
        assert_eq!(Enclave::from_info(&bad).ranges.len(), MAX_MEM_RANGES);
    }

    #[test]
    fn json_fields() {
        let v = Enclave::from_info(&info(7, "web")).to_json();
        assert_eq!(v["name"], "web");
        assert_eq!(v["id"], 7);
        assert_eq!(v["state"], "running");
        assert_eq!(v["cpus"], json!([2, 3]));
        assert_eq!(v["mem_bytes"], 384u64 << 20);
        assert_eq!(v["ranges"][1], json!({ "start": 0x2_0000_0000u64, "size": 256u64 << 20 }));
        assert_eq!(v["uptime_ns"], 1_500_000_000u64);
        assert_eq!(
            v["phase_ns"],
            json!({ "cpus": 1_000_000, "memory": 2_000_000, "load": 3_000_000, "boot": 4_000_000 })
        );
        assert_eq!(v["lwk_free_bytes"], 100u64 << 20);
        assert_eq!(v["lwk_total_bytes"], 120u64 << 20);
        assert_eq!(v["programs"], json!([]));
    }

    #[test]
    fn phases_text() {
        assert_eq!(
            create_phases_text(&[1_000_000, 2_000_000, 3_000_000, 4_060_000]),
            "10.1 ms (CPUs 1.0 ms, memory 2.0 ms, load 3.0 ms, boot 4.1 ms)"
        );
    }

    #[test]
    fn picks_by_name_then_id() {
        let all = || {
            vec![
                Enclave::from_info(&info(1, "a")),
                Enclave::from_info(&info(2, "1")),
                Enclave::from_info(&info(3, "c")),
            ]
        };
        assert_eq!(pick(all(), "a").unwrap().id, 1);
        assert_eq!(pick(all(), "3").unwrap().name, "c");
        assert_eq!(pick(all(), "1").unwrap().id, 2, "a name wins over an id");
        assert!(pick(all(), "4").is_none());
        assert!(pick(all(), "zz").is_none());
    }
}
