//! What a program's paths under /proc mean from an enclave. Its getpid()
//! is its LWK pid, which Linux does not know: /proc/<pid>/... of a program
//! of the same enclave leads to the `atoll run` serving it, which holds its
//! descriptors (/proc/<pid>/fd, as UCX's shared-memory transport opens a
//! peer's), its current directory and its limits. /proc/self/exe is the
//! program, not `atoll run`. Other paths are left as they are.

use std::sync::Mutex;

/// What to do with a path.
#[derive(Debug, PartialEq, Eq)]
pub enum Meaning {
    /// Use this path instead.
    Path(Vec<u8>),
    /// The program's own file (/proc/self/exe).
    Exe,
}

/// The meaning of `path`, if it is not itself; `host_pid_of` gives the
/// `atoll run` of an LWK pid in this enclave.
pub fn meaning(path: &[u8], host_pid_of: impl Fn(u32) -> Option<u32>) -> Option<Meaning> {
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
    fn other_paths_stay() {
        for path in [&b"/proc/self/maps"[..], b"/proc/cpuinfo", b"/proc/12x/stat", b"/procfs/101", b"/tmp/x", b""] {
            assert_eq!(meaning(path, lwk), None, "{}", String::from_utf8_lossy(path));
        }
    }
}
