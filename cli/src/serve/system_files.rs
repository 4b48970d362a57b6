//! Linux's files that describe the machine, told for the enclave a program
//! runs in. Its CPUs: /proc/cpuinfo and the online, possible and present
//! lists (glibc's get_nprocs and runtimes size themselves by them; on
//! Linux those CPUs are offline). Its memory: /proc/meminfo (free, and
//! runtimes that size caches or heaps) and the NUMA node's files, which
//! hwloc reads (sysinfo already answers for the enclave), without Linux's
//! huge page pools. The enclave is one NUMA node, node 0, with every CPU
//! and byte of it.

use std::os::unix::ffi::OsStrExt;

/// The enclave's memory, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    pub total: u64,
    pub free: u64,
}

const NODE: &[u8] = b"/sys/devices/system/node/";

/// The enclave's version of Linux's file `path`, for an enclave of `cpus`
/// CPUs (0: not known, every file stays Linux's) and `memory` (asked only
/// for the memory files); None: the file stays Linux's.
pub fn file(path: &[u8], cpus: u32, memory: impl FnOnce() -> Option<Memory>) -> Option<Vec<u8>> {
    if cpus == 0 {
        return None;
    }
    let linux = || std::fs::read(std::ffi::OsStr::from_bytes(path)).ok();
    match path {
        b"/sys/devices/system/cpu/online"
        | b"/sys/devices/system/cpu/possible"
        | b"/sys/devices/system/cpu/present"
        | b"/sys/devices/system/node/node0/cpulist" => Some(cpu_list(cpus)),
        b"/sys/devices/system/node/node0/cpumap" => Some(cpu_map(cpus)),
        b"/proc/cpuinfo" => Some(cpuinfo(&linux()?, cpus)),
        b"/proc/meminfo" | b"/sys/devices/system/node/node0/meminfo" => Some(meminfo(&linux()?, memory()?)),
        _ if is_huge_page_count(path) => Some(b"0\n".to_vec()),
        _ => match path.strip_prefix(NODE)? {
            b"online" | b"possible" | b"has_cpu" | b"has_memory" | b"has_normal_memory" => Some(b"0\n".to_vec()),
            _ => None,
        },
    }
}

/// A count of Linux's huge page pools (hwloc takes them off a node's
/// memory): the enclave has none.
fn is_huge_page_count(path: &[u8]) -> bool {
    let pools = [&b"/sys/kernel/mm/hugepages/hugepages-"[..], b"/sys/devices/system/node/node0/hugepages/hugepages-"];
    let Some(rest) = pools.iter().find_map(|p| path.strip_prefix(*p)) else { return false };
    let Some(slash) = rest.iter().position(|&b| b == b'/') else { return false };
    matches!(
        &rest[slash + 1..],
        b"nr_hugepages" | b"free_hugepages" | b"surplus_hugepages" | b"resv_hugepages" | b"nr_overcommit_hugepages"
    )
}

fn cpu_list(cpus: u32) -> Vec<u8> {
    if cpus == 1 {
        "0\n".into()
    } else {
        format!("0-{}\n", cpus - 1).into_bytes()
    }
}

/// Linux's cpumap: the CPUs as a bit mask in 32-bit hex groups, the
/// highest first, separated by commas.
fn cpu_map(cpus: u32) -> Vec<u8> {
    let groups = cpus.div_ceil(32).max(1);
    let words: Vec<String> = (0..groups)
        .rev()
        .map(|g| {
            let bits = cpus.saturating_sub(g * 32).min(32);
            format!("{:08x}", if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 })
        })
        .collect();
    format!("{}\n", words.join(",")).into_bytes()
}

/// Linux's /proc/cpuinfo (`linux`) as an enclave of `count` CPUs shows it:
/// the first CPU's entry once per CPU, numbered 0.., one core each.
pub fn cpuinfo(linux: &[u8], count: u32) -> Vec<u8> {
    let text = String::from_utf8_lossy(linux);
    let first = text.split("\n\n").next().unwrap_or_default();
    let mut out = String::new();
    for cpu in 0..count {
        for line in first.lines() {
            let key = line.split(':').next().unwrap_or_default().trim_end();
            let value = match key {
                "processor" | "core id" | "apicid" | "initial apicid" => Some(cpu),
                "siblings" | "cpu cores" => Some(count),
                _ => None,
            };
            match (value, line.split_once(':')) {
                (Some(v), Some((name, _))) => out.push_str(&format!("{name}: {v}\n")),
                _ => out.push_str(&format!("{line}\n")),
            }
        }
        out.push('\n');
    }
    out.into_bytes()
}

/// Linux's /proc/meminfo or a node's meminfo (`Node 0 MemTotal: ... kB`)
/// as the enclave shows it: its total and free memory, and none of Linux's
/// page cache, swap, slab or huge page pools (the page size stays).
pub fn meminfo(linux: &[u8], mem: Memory) -> Vec<u8> {
    let kib = |bytes: u64| bytes / 1024;
    let mut out = String::new();
    for line in String::from_utf8_lossy(linux).lines() {
        let Some((name, value)) = line.split_once(':') else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let number = match name.rsplit(' ').next().unwrap_or_default() {
            "MemTotal" => kib(mem.total),
            "MemFree" | "MemAvailable" => kib(mem.free),
            "MemUsed" => kib(mem.total.saturating_sub(mem.free)),
            "Hugepagesize" => {
                out.push_str(line);
                out.push('\n');
                continue;
            }
            _ => 0,
        };
        let (digits, unit) = match value.strip_suffix(" kB") {
            Some(digits) => (digits, " kB"),
            None => (value, ""),
        };
        out.push_str(&format!("{name}:{number:>width$}{unit}\n", width = digits.len()));
    }
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MEM: Memory = Memory { total: 512 << 20, free: 400 << 20 };

    #[test]
    fn cpu_files_tell_the_enclave() {
        let linux = "processor\t: 0\nvendor_id\t: X\nsiblings\t: 4\ncore id\t\t: 0\ncpu cores\t: 4\n\
                     apicid\t\t: 0\ninitial apicid\t: 0\nflags\t\t: fpu sse2\n\n\
                     processor\t: 1\nvendor_id\t: X\n\n";
        let two = String::from_utf8(cpuinfo(linux.as_bytes(), 2)).unwrap();
        assert_eq!(two.matches("processor\t: ").count(), 2);
        assert!(two.contains("processor\t: 1\n") && two.contains("core id\t\t: 1\n"));
        assert!(two.contains("siblings\t: 2\n") && two.contains("cpu cores\t: 2\n"));
        assert_eq!(two.matches("flags\t\t: fpu sse2\n").count(), 2);
        let none = || None;
        assert_eq!(file(b"/sys/devices/system/cpu/online", 3, none), Some(b"0-2\n".to_vec()));
        assert_eq!(file(b"/sys/devices/system/cpu/possible", 1, none), Some(b"0\n".to_vec()));
        assert_eq!(file(b"/sys/devices/system/cpu/offline", 3, none), None);
        assert_eq!(file(b"/sys/devices/system/cpu/online", 0, none), None);
    }

    #[test]
    fn the_enclave_is_node_0() {
        let none = || None;
        assert_eq!(file(b"/sys/devices/system/node/node0/cpulist", 4, none), Some(b"0-3\n".to_vec()));
        assert_eq!(file(b"/sys/devices/system/node/online", 4, none), Some(b"0\n".to_vec()));
        assert_eq!(file(b"/sys/devices/system/node/has_memory", 4, none), Some(b"0\n".to_vec()));
        assert_eq!(file(b"/sys/devices/system/node/node0/distance", 4, none), None);
        assert_eq!(cpu_map(2), b"00000003\n");
        assert_eq!(cpu_map(32), b"ffffffff\n");
        assert_eq!(cpu_map(33), b"00000001,ffffffff\n");
        let pool = b"/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages";
        assert_eq!(file(pool, 4, none), Some(b"0\n".to_vec()));
        assert_eq!(
            file(b"/sys/kernel/mm/hugepages/hugepages-1048576kB/free_hugepages", 4, none),
            Some(b"0\n".to_vec())
        );
        assert_eq!(file(b"/sys/kernel/mm/hugepages/hugepages-2048kB/demote", 4, none), None);
    }

    #[test]
    fn meminfo_tells_the_enclave_memory() {
        let linux = "MemTotal:       24546932 kB\nMemFree:        20000000 kB\nMemAvailable:   21000000 kB\n\
                     Cached:          1000000 kB\nHugePages_Total:       8\nHugepagesize:       2048 kB\n";
        let ours = String::from_utf8(meminfo(linux.as_bytes(), MEM)).unwrap();
        assert_eq!(
            ours,
            "MemTotal:         524288 kB\nMemFree:          409600 kB\nMemAvailable:     409600 kB\n\
             Cached:                0 kB\nHugePages_Total:       0\nHugepagesize:       2048 kB\n"
        );
        let node = "Node 0 MemTotal:        3484364 kB\nNode 0 MemFree:         3377276 kB\n\
                    Node 0 MemUsed:          107088 kB\nNode 0 Active:             1000 kB\n";
        let ours = String::from_utf8(meminfo(node.as_bytes(), MEM)).unwrap();
        assert_eq!(
            ours,
            "Node 0 MemTotal:         524288 kB\nNode 0 MemFree:          409600 kB\n\
             Node 0 MemUsed:          114688 kB\nNode 0 Active:                0 kB\n"
        );
    }
}
