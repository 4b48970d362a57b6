//! What a program's paths under /proc and /sys mean from an enclave. Its
//! getpid() is its LWK pid, which Linux does not know: /proc/<pid>/... of a
//! program of the same enclave leads to the `atoll run` serving it, which
//! holds its descriptors (/proc/<pid>/fd, as UCX's shared-memory transport
//! opens a peer's), its current directory and its limits. /proc/self/exe
//! is the program, not `atoll run`. The files that describe the machine
//! tell the enclave (system_files.rs). Other paths are left as they are.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use super::system_files::{self, Memory};

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

/// What the meaning of a path depends on.
pub trait Enclave {
    /// The `atoll run` serving LWK pid `pid` of this enclave.
    fn host_pid_of(&self, pid: u32) -> Option<u32>;
    /// The enclave's memory now.
    fn memory(&self) -> Option<Memory>;
}

/// An enclave looked up in nothing: only the meanings that need no lookup.
pub struct Unknown;

impl Enclave for Unknown {
    fn host_pid_of(&self, _pid: u32) -> Option<u32> {
        None
    }
    fn memory(&self) -> Option<Memory> {
        None
    }
}

/// The meaning of `path` in `enclave`, if it is not itself.
pub fn meaning(path: &[u8], enclave: &impl Enclave) -> Option<Meaning> {
    let cpus = ENCLAVE_CPUS.load(Ordering::Relaxed);
    if let Some(text) = system_files::file(path, cpus, || enclave.memory()) {
        return Some(Meaning::Text(text));
    }
    let rest = path.strip_prefix(b"/proc/")?;
    let end = rest.iter().position(|&b| b == b'/').unwrap_or(rest.len());
    let (who, tail) = rest.split_at(end);
    let host_pid = match who {
        b"self" | b"thread-self" => None,
        digits if !digits.is_empty() && digits.iter().all(u8::is_ascii_digit) => {
            Some(enclave.host_pid_of(std::str::from_utf8(digits).ok()?.parse().ok()?)?)
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

    /// Programs 101 (served by 4242) and 102 (by this process).
    struct Lwk;

    impl Enclave for Lwk {
        fn host_pid_of(&self, pid: u32) -> Option<u32> {
            [(101, 4242), (102, std::process::id())].iter().find(|(l, _)| *l == pid).map(|(_, h)| *h)
        }
        fn memory(&self) -> Option<Memory> {
            None
        }
    }

    #[test]
    fn a_program_of_the_enclave_is_its_atoll_run() {
        assert_eq!(meaning(b"/proc/101/fd/5", &Lwk), Some(Meaning::Path(b"/proc/4242/fd/5".to_vec())));
        assert_eq!(meaning(b"/proc/101", &Lwk), Some(Meaning::Path(b"/proc/4242".to_vec())));
        assert_eq!(meaning(b"/proc/101/stat", &Lwk), Some(Meaning::Path(b"/proc/4242/stat".to_vec())));
        // Not a program of the enclave: Linux's process of that number.
        assert_eq!(meaning(b"/proc/1/stat", &Lwk), None);
    }

    #[test]
    fn exe_is_the_program() {
        assert_eq!(meaning(b"/proc/self/exe", &Lwk), Some(Meaning::Exe));
        assert_eq!(meaning(b"/proc/thread-self/exe", &Lwk), Some(Meaning::Exe));
        // This process's own program, by its LWK pid.
        assert_eq!(meaning(b"/proc/102/exe", &Lwk), Some(Meaning::Exe));
        // Another program's exe is its atoll run's link (that process's own).
        assert_eq!(meaning(b"/proc/101/exe", &Lwk), Some(Meaning::Path(b"/proc/4242/exe".to_vec())));
    }

    #[test]
    fn other_paths_stay() {
        for path in [&b"/proc/self/maps"[..], b"/proc/cpuinfo", b"/proc/12x/stat", b"/procfs/101", b"/tmp/x", b""] {
            assert_eq!(meaning(path, &Lwk), None, "{}", String::from_utf8_lossy(path));
        }
    }
}
