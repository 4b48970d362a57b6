//! The programs running in an enclave (IOC_PROGRAMS), for `atoll status`
//! and `atoll list`.

use crate::device::Device;
use crate::error::{os_error, Error, Result};
use crate::format;
use atoll_abi::{c_str, ProgramInfo, MAX_PROGRAMS, PROC_CREATING, PROC_EXITED, PROC_LOADED, PROC_RUNNING};
use serde_json::{json, Value};

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    /// In the LWK.
    pub pid: u32,
    /// The `atoll run` process on Linux that serves it.
    pub host_pid: u32,
    pub state: u32,
    pub threads: u32,
    /// LWK CPU indices its threads may use.
    pub cpus: Vec<u32>,
    pub mem_bytes: u64,
    /// How long its server's worker polls for a call before it sleeps, now.
    pub poll_window_us: u32,
    /// Delegated calls in the last whole second.
    pub calls_per_s: u32,
    /// At CPL 0 (`atoll run --hrt`).
    pub kernel_mode: bool,
    pub command: String,
}

impl Program {
    pub fn from_info(info: &ProgramInfo) -> Self {
        Program {
            pid: info.pid,
            host_pid: info.host_pid,
            state: info.state,
            threads: info.threads,
            cpus: (0..64).filter(|c| info.cpus & (1 << c) != 0).collect(),
            mem_bytes: info.mem_bytes,
            poll_window_us: info.poll_window_us,
            calls_per_s: info.calls_per_s,
            kernel_mode: info.kernel_mode == 1,
            command: c_str(&info.comm).to_string(),
        }
    }

    pub fn state_name(&self) -> &'static str {
        match self.state {
            PROC_CREATING => "creating",
            PROC_LOADED => "loading",
            PROC_RUNNING => "running",
            PROC_EXITED => "exited",
            _ => "unknown",
        }
    }

    /// "kernel" at CPL 0, else "user".
    pub fn mode_name(&self) -> &'static str {
        if self.kernel_mode {
            "kernel"
        } else {
            "user"
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "pid": self.pid,
            "host_pid": self.host_pid,
            "command": self.command,
            "state": self.state_name(),
            "mode": self.mode_name(),
            "threads": self.threads,
            "cpus": self.cpus,
            "mem_bytes": self.mem_bytes,
            "poll_window_us": self.poll_window_us,
            "calls_per_s": self.calls_per_s,
        })
    }
}

/// The programs in enclave `id`, in area order.
pub fn list(dev: &Device, id: u32) -> Result<Vec<Program>> {
    let req = dev.programs(id).map_err(|e| Error::new(format!("cannot list the programs: {}", os_error(&e))))?;
    let n = (req.count as usize).min(MAX_PROGRAMS);
    Ok(req.program[..n].iter().map(Program::from_info).collect())
}

/// A table of the programs (LWK CPU numbers), or "none".
pub fn table(programs: &[Program]) -> String {
    if programs.is_empty() {
        return "none\n".into();
    }
    let header = ["PID", "HOST PID", "COMMAND", "STATE", "MODE", "THREADS", "LWK CPUS", "MEMORY", "CALLS/S", "POLL"];
    let mut rows = vec![header.iter().map(|s| s.to_string()).collect()];
    for p in programs {
        rows.push(vec![
            p.pid.to_string(),
            p.host_pid.to_string(),
            p.command.clone(),
            p.state_name().into(),
            p.mode_name().into(),
            p.threads.to_string(),
            format::cpu_list(&p.cpus),
            format!("{} MiB", format::mib(p.mem_bytes)),
            p.calls_per_s.to_string(),
            format!("{} us", p.poll_window_us),
        ]);
    }
    format::table(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_shows_programs() {
        let mut info = ProgramInfo { pid: 101, host_pid: 4242, state: PROC_RUNNING, threads: 3, ..Default::default() };
        info.cpus = 0b1011;
        info.mem_bytes = 12 << 20;
        info.calls_per_s = 9000;
        info.poll_window_us = 240;
        atoll_abi::set_c_str(&mut info.comm, "spin");
        let p = Program::from_info(&info);
        assert_eq!(p.cpus, vec![0, 1, 3]);
        assert_eq!(p.command, "spin");
        assert_eq!(
            table(std::slice::from_ref(&p)),
            "PID  HOST PID  COMMAND  STATE    MODE  THREADS  LWK CPUS  MEMORY  CALLS/S  POLL\n\
             101  4242      spin     running  user  3        0-1,3     12 MiB  9000     240 us\n"
        );
        assert_eq!(p.to_json()["host_pid"], 4242);
        assert_eq!(p.to_json()["calls_per_s"], 9000);
        assert_eq!(p.to_json()["mode"], "user");
        assert_eq!(table(&[]), "none\n");
    }
}
