//! `atoll list`: one line per enclave; `--segments`: XEMEM's segments.

use super::print_json;
use crate::device::Device;
use crate::enclave::{self, Enclave};
use crate::error::Result;
use crate::format;

pub fn run(segments: bool, json: bool) -> Result<()> {
    let dev = Device::open()?;
    if segments {
        let all = crate::segments::list(&dev)?;
        if json {
            print_json(&all.to_json());
        } else {
            print!("{}", all.text());
        }
        return Ok(());
    }
    let enclaves = enclave::list(&dev)?;
    if json {
        print_json(&enclaves.iter().map(Enclave::to_json).collect());
    } else {
        print!("{}", text(&enclaves));
    }
    Ok(())
}

fn text(enclaves: &[Enclave]) -> String {
    if enclaves.is_empty() {
        return "no enclaves\n".into();
    }
    let header = ["ID", "NAME", "STATE", "OWNER", "CPUS", "MEMORY", "LWK FREE", "PROGRAMS", "UPTIME"];
    let mut rows = vec![header.iter().map(|s| s.to_string()).collect()];
    for e in enclaves {
        if !e.yours {
            // The module tells others only who has it.
            let mut row = vec![e.id.to_string(), e.name.clone(), e.state_name(), e.owner.text()];
            row.resize(header.len(), "-".into());
            rows.push(row);
            continue;
        }
        rows.push(vec![
            e.id.to_string(),
            e.name.clone(),
            e.state_name(),
            e.owner.text(),
            format::cpu_list(&e.cpus),
            format!("{} MiB", format::mib(e.mem_bytes())),
            lwk_free(e),
            e.programs.len().to_string(),
            format!("{} s", format::secs(e.uptime_ns)),
        ]);
    }
    format::table(&rows)
}

/// "100/120 MiB": the LWK's free and total memory; "-" before it reports.
fn lwk_free(e: &Enclave) -> String {
    match e.lwk_total_bytes {
        0 => "-".into(),
        total => format!("{}/{} MiB", format::mib(e.lwk_free_bytes), format::mib(total)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atoll_abi::{MemRange, ENCLAVE_CRASHED, ENCLAVE_RUNNING};

    fn enclave(id: u32, name: &str, state: u32, cpus: Vec<u32>, mib: u64, uptime_ns: u64, reported: bool) -> Enclave {
        Enclave {
            id,
            name: name.into(),
            state,
            cpus,
            ranges: vec![MemRange { start: 0x1_0000_0000, size: mib << 20 }],
            uptime_ns,
            phase_ns: [0; 4],
            lwk_free_bytes: if reported { (mib - 20) << 20 } else { 0 },
            lwk_total_bytes: if reported { (mib - 8) << 20 } else { 0 },
            programs: vec![],
            resizes: vec![],
            lwk_cpus: vec![],
            owner: crate::owner::Owner { uid: 0, gid: 0 },
            serve_nice: 0,
            hrt: 0,
            yours: true,
        }
    }

    #[test]
    fn table() {
        assert_eq!(text(&[]), "no enclaves\n");
        let mut theirs = enclave(14, "web", ENCLAVE_RUNNING, vec![], 0, 0, false);
        (theirs.yours, theirs.owner) = (false, crate::owner::Owner { uid: 4321, gid: 4322 });
        let all = [
            enclave(1, "enclave1", ENCLAVE_RUNNING, vec![2, 3], 1024, 12_340_000_000, true),
            enclave(12, "db", ENCLAVE_CRASHED, vec![1, 5, 6, 7], 128, 400_000_000, false),
            theirs,
        ];
        assert_eq!(
            text(&all),
            "ID  NAME      STATE    OWNER      CPUS   MEMORY    LWK FREE       PROGRAMS  UPTIME\n\
             1   enclave1  running  root:root  2-3    1024 MiB  1004/1016 MiB  0         12.3 s\n\
             12  db        crashed  root:root  1,5-7  128 MiB   -              0         0.4 s\n\
             14  web       running  4321:4322  -      -         -              -         -\n"
        );
    }
}
