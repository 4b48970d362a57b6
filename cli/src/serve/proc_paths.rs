//! What a program's paths under /proc and /sys mean from an enclave. Its
//! getpid() is its LWK pid, which Linux does not know: /proc/<pid>/... of a
//! program of the same enclave leads to the `atoll run` serving it, which
//! holds its descriptors (/proc/<pid>/fd, as UCX's shared-memory transport
//! opens a peer's), its current directory and its limits. /proc/self/exe
//! is the program, not `atoll run`. /proc/cpuinfo and the online, possible
//! and present CPU lists in /sys tell the enclave's CPUs (glibc's
//! get_nprocs and runtimes size themselves by them; on Linux those CPUs
//! are offline). Other paths are left as they are.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// What to do with a path.
#[derive(Debug, PartialEq, Eq)]
pub enum Meaning {
    /// Use this path instead.
    Path(Vec<u8>),
    /// The program's own file (/proc/self/exe).
    Exe,
    /// A file with these contents, for open.
    Text(Vec<u8>),
}

/// The enclave's CPU count (0: not known, the files stay Linux's).
static ENCLAVE_CPUS: AtomicU32 = AtomicU32::new(0);

pub fn set_enclave_cpus(count: u32) {
    ENCLAVE_CPUS.store(count, Ordering::Relaxed);
}

/// Linux's files about the CPUs, told for an enclave of `count` CPUs.
fn cpu_file(path: &[u8], count: u32) -> Option<Vec<u8>> {
    let list = if count == 1 { "0\n".to_string() } else { format!("0-{}\n", count - 1) };
    match path {
        b"/sys/devices/system/cpu/online"
        | b"/sys/devices/system/cpu/possible"
        | b"/sys/devices/system/cpu/present" => Some(list.into_bytes()),
        b"/proc/cpuinfo" => Some(cpuinfo(&std::fs::read("/proc/cpuinfo").ok()?, count)),
        _ => None,
    }
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

/// The meaning of `path`, if it is not itself; `host_pid_of` gives the
/// `atoll run` of an LWK pid in this enclave.
pub fn meaning(path: &[u8], host_pid_of: impl Fn(u32) -> Option<u32>) -> Option<Meaning> {
    let cpus = ENCLAVE_CPUS.load(Ordering::Relaxed);
    if let Some(text) = (cpus > 0).then(|| cpu_file(path, cpus)).flatten() {
        return Some(Meaning::Text(text));
    }
    let rest = path.strip_prefix(b"/proc/")?;
    let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let (who, tail) = rest.split_at(end);
    let host_pid = match who {
        b"self" | b"thread-self" => None,
        digits if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) => {
            Some(host_pid_of(std::str::from_utf8(digits).ok()?.parse().ok()?)?)
        }
        _ => return None,
    };
    if tail == b"/exe" && host_pid.is_none_or(|h| h == std::process::id()) {
        return Some(Meaning::Exe);
    }
    let host_pid = host_pid?;
    Some(Meaning::Path([format!("/proc/{host_pid}").as_bytes(), tail].concat()))
}

/// The program this process serves (its path as started or exec'ed).
static PROGRAM: Mutex<Vec<u8>> = Mutex::new(Vec::new());

pub fn set_program(path: &[u8]) {
    *PROGRAM.lock().unwrap_or_else(|p| p.into_inner()) = path.to_vec();
}

pub fn program() -> Vec<u8> {
    PROGRAM.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lwk(pid: u32) -> Option<u32> {
        [(101, 4242), (102, std::process::id())].iter().find(|(l, _)| *l == pid).map(|(_, h)| *h)
    }

    #[test]
    fn a_program_of_the_enclave_is_its_atoll_run() {
        assert_eq!(meaning(b"/proc/101/fd/5", lwk), Some(Meaning::Path(b"/proc/4242/fd/5".to_vec())));
        assert_eq!(meaning(b"/proc/101", lwk), Some(Meaning::Path(b"/proc/4242".to_vec())));
        assert_eq!(meaning(b"/proc/101/stat", lwk), Some(Meaning::Path(b"/proc/4242/stat".to_vec())));
        // Not a program of the enclave: Linux's process of that number.
        assert_eq!(meaning(b"/proc/1/stat", lwk), None);
    }

    #[test]
    fn exe_is_the_program() {
        assert_eq!(meaning(b"/proc/self/exe", lwk), Some(Meaning::Exe));
        assert_eq!(meaning(b"/proc/thread-self/exe", lwk), Some(Meaning::Exe));
        // This process's own program, by its LWK pid.
        assert_eq!(meaning(b"/proc/102/exe", lwk), Some(Meaning::Exe));
        // Another program's exe is its atoll run's link (that process's own).
        assert_eq!(meaning(b"/proc/101/exe", lwk), Some(Meaning::Path(b"/proc/4242/exe".to_vec())));
    }

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
        assert_eq!(cpu_file(b"/sys/devices/system/cpu/online", 3), Some(b"0-2\n".to_vec()));
        assert_eq!(cpu_file(b"/sys/devices/system/cpu/possible", 1), Some(b"0\n".to_vec()));
        assert_eq!(cpu_file(b"/sys/devices/system/cpu/offline", 3), None);
    }

    #[test]
    fn other_paths_stay() {
        for path in [&b"/proc/self/maps"[..], b"/proc/cpuinfo", b"/proc/12x/stat", b"/procfs/101", b"/tmp/x", b""] {
            assert_eq!(meaning(path, lwk), None, "{}", String::from_utf8_lossy(path));
        }
    }
}
