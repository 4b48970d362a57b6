//! `atoll status <enclave>`: everything the module says about one enclave.

use super::print_json;
use crate::device::Device;
use crate::enclave::{self, create_phases_text, Enclave};
use crate::error::Result;
use crate::format;
use crate::running;

pub fn run(key: &str, json: bool) -> Result<()> {
    let dev = Device::open()?;
    let enclave = enclave::find_usable(&dev, key)?;
    let segments = crate::segments::list(&dev)?.of_enclave(enclave.id);
    if json {
        let mut v = enclave.to_json();
        v["xemem"] = segments.to_json();
        print_json(&v);
    } else {
        print!("{}", text(&enclave));
        if !segments.segments.is_empty() || !segments.attachments.is_empty() {
            let table: String = segments.text().lines().map(|l| format!("  {l}\n")).collect();
            print!("xemem:\n{table}");
        }
    }
    Ok(())
}

fn text(e: &Enclave) -> String {
    let ranges: Vec<String> = e.ranges.iter().map(format::hex_range).collect();
    format!(
        "name: {}\nid: {}\nstate: {}\nowner: {}\n{}{}cpus: {} ({} CPUs)\nmemory: {} MiB in {} ranges: {}\nlwk memory: {}\n\
         uptime: {} s\ncreated in: {}\n{}programs: {}",
        e.name,
        e.id,
        e.state_name(),
        e.owner.text(),
        serve_nice(e),
        kernel_mode_programs(e),
        format::cpu_list(&e.cpus),
        e.cpus.len(),
        format::mib(e.mem_bytes()),
        e.ranges.len(),
        ranges.join(", "),
        e.lwk_memory_text(),
        format::secs(e.uptime_ns),
        create_phases_text(&e.phase_ns),
        resizes(e),
        programs(e)
    )
}

/// "servers' nice: N" when root set one at create, or nothing.
fn serve_nice(e: &Enclave) -> String {
    match e.serve_nice {
        0 => String::new(),
        nice => format!("servers' nice: {nice}\n"),
    }
}

/// Who may run kernel-mode programs, when root allowed them at create, or nothing.
fn kernel_mode_programs(e: &Enclave) -> String {
    match e.hrt {
        atoll_abi::HRT_NONE => String::new(),
        hrt => format!("kernel-mode programs (--hrt): {}\n", crate::enclave::hrt_name(hrt)),
    }
}

/// "resized:" and a line per resize, or nothing.
fn resizes(e: &Enclave) -> String {
    if e.resizes.is_empty() {
        return String::new();
    }
    let lines: String = e.resizes.iter().map(|r| format!("  {}\n", crate::enclave::resize_text(r))).collect();
    format!("resized:\n{lines}")
}

/// "none", or a count then a table, indented.
fn programs(e: &Enclave) -> String {
    if e.programs.is_empty() {
        return "none\n".into();
    }
    let table: String = running::table(&e.programs).lines().map(|l| format!("  {l}\n")).collect();
    format!("{}\n{table}", e.programs.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::running::Program;
    use atoll_abi::{MemRange, ResizeEvent, ENCLAVE_BOOTING, RESIZE_ADD_MEM, RESIZE_REMOVE_MEM};

    #[test]
    fn lines() {
        let e = Enclave {
            id: 3,
            name: "web".into(),
            state: ENCLAVE_BOOTING,
            cpus: vec![1, 3, 4],
            ranges: vec![
                MemRange { start: 0x1_0000_0000, size: 128 << 20 },
                MemRange { start: 0x1_8000_0000, size: 256 << 20 },
            ],
            uptime_ns: 2_340_000_000,
            phase_ns: [1_000_000, 2_000_000, 3_000_000, 4_000_000],
            lwk_free_bytes: (300 << 20) + (1 << 19),
            lwk_total_bytes: 370 << 20,
            programs: vec![Program {
                pid: 101,
                host_pid: 900,
                state: atoll_abi::PROC_RUNNING,
                threads: 2,
                cpus: vec![0, 1],
                mem_bytes: 10 << 20,
                poll_window_us: 30,
                calls_per_s: 0,
                kernel_mode: true,
                command: "spin".into(),
            }],
            lwk_cpus: vec![0],
            owner: crate::owner::Owner { uid: 0, gid: 0 },
            serve_nice: -5,
            hrt: atoll_abi::HRT_OWNER,
            yours: true,
            resizes: vec![
                ResizeEvent {
                    at_ns: 1_500_000_000,
                    op: RESIZE_ADD_MEM,
                    result: 0,
                    amount: 256 << 20,
                    linux_ns: 95_100_000,
                    lwk_ns: 3_200_000,
                },
                ResizeEvent {
                    at_ns: 2_000_000_000,
                    op: RESIZE_REMOVE_MEM,
                    result: -16,
                    amount: 128 << 20,
                    linux_ns: 0,
                    lwk_ns: 400_000,
                },
            ],
        };
        assert_eq!(
            text(&e),
            "name: web\n\
             id: 3\n\
             state: booting\n\
             owner: root:root\n\
             servers' nice: -5\n\
             kernel-mode programs (--hrt): root and the owner\n\
             cpus: 1,3-4 (3 CPUs)\n\
             memory: 384 MiB in 2 ranges: 0x100000000-0x107ffffff, 0x180000000-0x18fffffff\n\
             lwk memory: 300.5 of 370 MiB free\n\
             uptime: 2.3 s\n\
             created in: 10.0 ms (CPUs 1.0 ms, memory 2.0 ms, load 3.0 ms, boot 4.0 ms)\n\
             resized:\n  \
             +256 MiB memory at 1.5 s: done (Linux 95.1 ms, LWK 3.2 ms)\n  \
             -128 MiB memory at 2.0 s: refused (Device or resource busy) (Linux 0.0 ms, LWK 0.4 ms)\n\
             programs: 1\n  \
             PID  HOST PID  COMMAND  STATE    MODE    THREADS  LWK CPUS  MEMORY  CALLS/S  POLL\n  \
             101  900       spin     running  kernel  2        0-1       10 MiB  0        30 us\n"
        );
    }
}
