//! `atoll run <enclave> [--threads N | --cpus LIST] [--strict] -- <program> [args...]`:
//! runs a Linux program (static or dynamic) in the enclave's LWK, serves its delegated
//! system calls in this process, and ends with the program's exit status.
//!
//! The steps follow abi/atoll_abi.h, "Programs": IOC_RUN with the program's
//! regions, the mirror, the segments and stack written through it,
//! IOC_START, then IOC_CALL workers until the program ends.

use super::forked;
use super::serving::{failed, serve, serve_until_end};
use crate::device::mirror::Mirror;
use crate::device::Device;
use crate::enclave::{self, Enclave};
use crate::error::{module_error, os_error, Error, Result};
use crate::program::read::{self, ProgramFiles};
use crate::program::{self, file_name, regions::Layout, search, Facts, Invocation, Plan};
use crate::serve::call_stats;
use crate::serve::descriptors::RESERVED_FD;
use crate::serve::messages::Messages;
use crate::serve::passthrough::usercopy::UserCopy;
use crate::serve::proc_paths;
use crate::serve::status::FAILED;
use crate::{rank_cpus, sys};
use atoll_abi::{Run, ENCLAVE_RUNNING};
use std::ffi::{OsStr, OsString};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Exit statuses of `atoll run` itself, as env(1) and timeout(1) use them;
/// any other status is the program's.
pub const NOT_FOUND: u8 = 127;
pub const CANNOT_RUN: u8 = 126;
// FAILED (125): atoll run or the enclave failed.

pub struct Options {
    pub enclave: String,
    /// The enclave CPUs for the program's threads.
    pub cores: Cores,
    pub strict: bool,
    /// --stats: the delegated calls' summary at the end.
    pub stats: bool,
    /// --hrt: at CPL 0, where the enclave allows it.
    pub kernel_mode: bool,
    /// The program and its arguments.
    pub command: Vec<OsString>,
}

/// Runs the program; Ok is the exit status for `atoll`. Errors before the
/// program starts carry their own status (127, 126 or 125).
pub fn run(opts: Options) -> Result<u8> {
    let (path, files) = read_program(&opts.command[0])?;
    proc_paths::set_program(path.as_os_str().as_bytes());
    let plan = plan(&path, &files, &opts.command)?;

    let dev = Device::open().map_err(|e| e.with_status(FAILED))?.move_above(RESERVED_FD);
    let enclave = enclave::find_usable(&dev, &opts.enclave).map_err(|e| e.with_status(FAILED))?;
    let (cpu_count, cpu_mask) = cores(&enclave, &opts.cores)?;
    proc_paths::set_enclave_cpus(enclave.cpus.len() as u32);
    let mut req = run_request(&enclave, cpu_count, &plan.layout, &path);
    req.file = file_name::names(&path, files.loader.as_deref());
    req.cpus = cpu_mask;
    req.kernel_mode = opts.kernel_mode as u32;
    dev.run(&mut req).map_err(|e| module_error("run", &req.error, &e).with_status(FAILED))?;
    // The mirror stays until the end: delegated calls use the program's memory through it.
    let mirror = load(&dev, &plan, &files).map_err(|e| e.with_status(FAILED))?;
    // The file's mapping is not needed any more (forked servers would keep it too).
    drop(files);

    if opts.stats {
        call_stats::enable();
    }
    let taken_tsc = opts.stats.then_some(req.created_tsc);
    let status = start_and_serve(dev, &plan, &enclave, opts.strict, taken_tsc)?;
    drop(mirror);
    Ok(status)
}

/// What to load where, from the program's file, arguments and environment.
fn plan(path: &Path, files: &ProgramFiles, command: &[OsString]) -> Result<Plan> {
    let argv: Vec<Vec<u8>> = command.iter().map(|arg| arg.as_bytes().to_vec()).collect();
    let envp = environment();
    let random = sys::random16().map_err(|e| failed(format!("cannot get random bytes: {}", os_error(&e))))?;
    let facts = Facts { ids: sys::ids(), hwcap: sys::hwcap(), random, vdso: Some(program::VDSO_IMAGE) };
    let name = path.display().to_string();
    let how = Invocation { name: &name, execfn: path.as_os_str().as_bytes(), argv: &argv, envp: &envp };
    program::plan(&files.files(), &how, &facts).map_err(|why| Error::new(why).with_status(CANNOT_RUN))
}

/// Maps the mirror and writes the segments' file bytes and the stack.
fn load(dev: &Device, plan: &Plan, files: &ProgramFiles) -> Result<Mirror> {
    let mut mirror = Mirror::map(dev.fd())?;
    for p in &plan.placements {
        mirror.write(p.addr, files.files().bytes(p))?;
    }
    mirror.write(plan.stack.sp, &plan.stack.bytes)?;
    Ok(mirror)
}

/// Starts the program and serves its calls until it ends; the exit status.
/// `taken_tsc` (--stats): when the LWK took the run request, said at the end.
fn start_and_serve(dev: Device, plan: &Plan, enclave: &Enclave, strict: bool, taken_tsc: Option<u64>) -> Result<u8> {
    // From here on the program may use descriptors 0-2 as it likes.
    let messages = Messages::stderr_copy(RESERVED_FD);
    let copier = UserCopy::new(RESERVED_FD).map_err(|e| failed(format!("cannot make a pipe: {}", os_error(&e))))?;
    forked::prepare(forked::Context {
        enclave_id: enclave.id,
        enclave_name: enclave.name.clone(),
        strict,
        device_fd: dev.fd().as_raw_fd(),
        messages_fd: messages.fd(),
        copier_fds: copier.fds(),
    })?;
    let server = serve(dev, enclave.id, messages, copier, strict, |dev| dev.start(plan.entry, plan.stack.sp))?;
    let status = serve_until_end(&server, &enclave.name, true);
    if let Some(stats) = call_stats::get() {
        server.messages().line(stats.summary().trim_end());
    }
    if let Some(tsc) = taken_tsc {
        // The same TSC as the program's RDTSC: the start-to-main figure.
        server.messages().line(&format!("atoll run: the LWK took the run request at TSC {tsc}"));
    }
    Ok(status)
}

/// The program file, found like execvp finds it, and its (and its
/// loader's) bytes.
fn read_program(program: &OsStr) -> Result<(PathBuf, ProgramFiles)> {
    let Some(path) = search::find(program, std::env::var_os("PATH")) else {
        return Err(Error::new(format!("{}: command not found", program.to_string_lossy())).with_status(NOT_FOUND));
    };
    match read::read(&path) {
        Ok(files) => Ok((path, files)),
        Err(e) => {
            let status = if e.errno == libc::ENOENT { NOT_FOUND } else { CANNOT_RUN };
            Err(Error::new(e.message).with_status(status))
        }
    }
}

/// This process's environment as "NAME=value" strings, plus what a
/// program started by an MPI launcher needs in an enclave.
fn environment() -> Vec<Vec<u8>> {
    let mut env: Vec<Vec<u8>> = std::env::vars_os().map(|(k, v)| [k.as_bytes(), b"=", v.as_bytes()].concat()).collect();
    env.extend(launcher_settings(|name| std::env::var_os(name).is_some()));
    env
}

/// PMIx (Open MPI's launcher interface) keeps its job data in shared
/// memory that the launcher, on Linux, goes on writing; a program in an
/// enclave maps a copy of it, not the live pages. Its "hash" store asks
/// the launcher over the socket instead. Unless the user chose a store.
fn launcher_settings(is_set: impl Fn(&str) -> bool) -> Option<Vec<u8>> {
    (is_set("PMIX_NAMESPACE") && !is_set("PMIX_MCA_gds")).then(|| b"PMIX_MCA_gds=hash".to_vec())
}

/// Which enclave CPUs a program's threads use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cores {
    All,
    /// This many, the least used.
    Count(u32),
    /// These LWK CPU numbers.
    List(Vec<u32>),
    /// This MPI rank's share (--rank-cpus).
    Rank,
}

/// IOC_RUN's (cpu_count, cpus): a count or a set of LWK CPUs, each within
/// the enclave's; (0, 0) for all.
fn cores(enclave: &Enclave, cores: &Cores) -> Result<(u32, u64)> {
    match cores {
        Cores::Rank => {
            cpu_count(enclave, None)?;
            let (rank, ranks) = rank_cpus::local_rank(|name| std::env::var(name).ok()).map_err(failed)?;
            let list = rank_cpus::share(enclave.cpus.len() as u32, rank, ranks);
            Ok((list.len() as u32, list.iter().fold(0, |m, &c| m | 1 << c)))
        }
        Cores::All => Ok((cpu_count(enclave, None)?, 0)),
        Cores::Count(n) => Ok((cpu_count(enclave, Some(*n))?, 0)),
        Cores::List(list) => {
            cpu_count(enclave, None)?;
            let have = enclave.cpus.len() as u32;
            match list.iter().find(|&&c| c >= have) {
                Some(c) => Err(failed(format!(
                    "--cpus: enclave {} has LWK CPUs 0-{}, not {c}",
                    enclave.name,
                    have.saturating_sub(1)
                ))),
                None => Ok((list.len() as u32, list.iter().fold(0, |m, &c| m | 1 << c))),
            }
        }
    }
}

/// IOC_RUN's cpu_count: --threads N (at most the enclave's CPUs), or 0 for all.
fn cpu_count(enclave: &Enclave, threads: Option<u32>) -> Result<u32> {
    if enclave.state != ENCLAVE_RUNNING {
        return Err(failed(format!(
            "enclave {} is {}: programs run only in a running enclave",
            enclave.name,
            enclave.state_name()
        )));
    }
    let cpus = enclave.cpus.len() as u32;
    match threads {
        None => Ok(0),
        Some(n) if n <= cpus => Ok(n),
        Some(n) => Err(failed(format!("--threads {n}: enclave {} has only {cpus} CPUs", enclave.name))),
    }
}

fn run_request(enclave: &Enclave, cpu_count: u32, layout: &Layout, path: &Path) -> Run {
    let mut req = Run::new();
    req.id = enclave.id;
    // As Linux's comm: the file name's first 15 bytes, then a NUL.
    let name = path.file_name().map(OsStrExt::as_bytes).unwrap_or_default();
    let n = name.len().min(req.comm.len() - 1);
    req.comm[..n].copy_from_slice(&name[..n]);
    req.cpu_count = cpu_count;
    req.region_count = layout.regions.len() as u32;
    req.region[..layout.regions.len()].copy_from_slice(&layout.regions);
    req.brk_start = layout.brk_start;
    req
}

#[cfg(test)]
mod tests {
    use super::*;
    use atoll_abi::{MemRange, Region, ENCLAVE_CRASHED, MAX_REGIONS, PROT_READ};

    fn enclave(cpus: usize, state: u32) -> Enclave {
        Enclave {
            id: 4,
            name: "web".into(),
            state,
            cpus: (2..2 + cpus as u32).collect(),
            ranges: vec![MemRange { start: 0x1_0000_0000, size: 128 << 20 }],
            uptime_ns: 0,
            phase_ns: [0; 4],
            lwk_free_bytes: 0,
            lwk_total_bytes: 0,
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
    fn threads_fit_the_enclave() {
        let e = enclave(4, ENCLAVE_RUNNING);
        assert_eq!(cpu_count(&e, None).unwrap(), 0);
        assert_eq!(cpu_count(&e, Some(1)).unwrap(), 1);
        assert_eq!(cpu_count(&e, Some(4)).unwrap(), 4);
        let err = cpu_count(&e, Some(5)).unwrap_err();
        assert_eq!(err.to_string(), "--threads 5: enclave web has only 4 CPUs");
        assert_eq!(err.status(), FAILED);
        let err = cpu_count(&enclave(4, ENCLAVE_CRASHED), None).unwrap_err();
        assert_eq!(err.to_string(), "enclave web is crashed: programs run only in a running enclave");
        assert_eq!(cores(&e, &Cores::List(vec![0, 3])).unwrap(), (2, 0b1001));
        assert_eq!(cores(&e, &Cores::All).unwrap(), (0, 0));
        let err = cores(&e, &Cores::List(vec![1, 4])).unwrap_err();
        assert_eq!(err.to_string(), "--cpus: enclave web has LWK CPUs 0-3, not 4");
    }

    #[test]
    fn request() {
        let regions = vec![
            Region { start: 0x40_0000, size: 0x2000, prot: PROT_READ, flags: 0, offset: 0 },
            program::regions::stack_region(),
        ];
        let layout = Layout { regions: regions.clone(), brk_start: 0x40_2000 };
        let req = run_request(&enclave(2, ENCLAVE_RUNNING), 2, &layout, Path::new("/bin/a-rather-long-name"));
        assert_eq!(atoll_abi::c_str(&req.comm), "a-rather-long-n");
        assert_eq!((req.id, req.cpu_count, req.region_count, req.brk_start), (4, 2, 2, 0x40_2000));
        assert_eq!(req.region[..2], regions[..]);
        assert!(req.region[2..MAX_REGIONS].iter().all(|r| *r == Region::default()));
    }

    #[test]
    fn finds_and_reads_the_program() {
        let e = read_program(OsStr::new("/nonexistent/prog")).unwrap_err();
        assert_eq!(
            (e.to_string().as_str(), e.status()),
            ("cannot read /nonexistent/prog: No such file or directory", 127)
        );
        let e = read_program(OsStr::new("no-such-command-anywhere")).unwrap_err();
        assert_eq!((e.to_string().as_str(), e.status()), ("no-such-command-anywhere: command not found", 127));
        let e = read_program(OsStr::new("/")).unwrap_err();
        assert_eq!(e.status(), 126);
        let e = read_program(OsStr::new("/proc/self/cmdline")).unwrap_err();
        assert_eq!(e.status(), 126);
        assert!(e.to_string().ends_with("is not an ELF file: only x86-64 ELF programs run in an enclave"), "{e}");
        // Debian's env is dynamically linked: its loader comes too.
        let (path, files) = read_program(OsStr::new("/usr/bin/env")).unwrap();
        assert_eq!(path, PathBuf::from("/usr/bin/env"));
        assert!(!files.program.is_empty() && files.interp.as_ref().is_some_and(|l| l.starts_with(b"\x7fELF")));
    }

    #[test]
    fn pmix_asks_the_launcher() {
        let with = |names: &'static [&'static str]| launcher_settings(move |n| names.contains(&n));
        assert_eq!(with(&["PMIX_NAMESPACE"]), Some(b"PMIX_MCA_gds=hash".to_vec()));
        assert_eq!(with(&["PMIX_NAMESPACE", "PMIX_MCA_gds"]), None);
        assert_eq!(with(&[]), None);
    }

    #[test]
    fn environment_strings() {
        let env = environment();
        assert!(env.iter().all(|s| s.contains(&b'=')));
        if let Some(path) = std::env::var_os("PATH") {
            assert!(env.contains(&[b"PATH=", path.as_bytes()].concat()));
        }
    }
}
