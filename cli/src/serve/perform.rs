//! Performing one delegated system call in this process: `policy::check`
//! lets it through, /proc paths are given their meaning, and the raw
//! pass-through (passthrough.rs) performs it.

use super::kept_files::{Held, KeptFiles};
use super::passthrough::{self, usercopy::UserCopy};
use super::policy::{self, PATH_MAX};
use super::proc_paths::{self, Meaning};
use super::system_files::Memory;
use crate::device::Device;
use atoll_abi::{MAX_TEXT_FILE, STAT_SIZE, TEXT_MAY_READ, TEXT_OPEN};
use rustix::fs::{memfd_create, open, MemfdFlags, Mode, OFlags};
use std::borrow::Cow;
use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, IntoRawFd, RawFd};
use std::os::unix::ffi::OsStringExt;
use std::sync::OnceLock;

/// How an execve is performed (the program's device, the call's
/// arguments) -> 0 or -errno; set by `atoll run` (unset, execve fails with
/// ENOSYS).
pub static EXEC: OnceLock<fn(&Device, [u64; 6]) -> i64> = OnceLock::new();

/// Performs delegated system calls (a trait so the worker tests can block
/// and count at will).
pub trait Perform: Send + Sync + 'static {
    /// The result as the kernel returns it: a value, or -errno.
    fn perform(&self, nr: u64, args: [u64; 6]) -> i64;

    /// CALL_KEPT_FILE: `op` (KEPT_*) on a descriptor kept for writing a
    /// shared file mapping back; the result as perform's.
    fn kept_file(&self, _op: u64, _args: [u64; 6]) -> i64 {
        -(libc::ENOSYS as i64)
    }

    /// CALL_FILE_NAME: the stat and path of the file behind a program's
    /// descriptor, written to its memory; the path's length or -errno.
    fn file_name(&self, _args: [u64; 6]) -> i64 {
        -(libc::ENOSYS as i64)
    }

    /// CALL_TEXT_FILE: a descriptor of a file holding the program's bytes,
    /// or whether another program's may be read (TEXT_*).
    fn text_file(&self, _what: u64, _args: [u64; 6]) -> i64 {
        -(libc::ENOSYS as i64)
    }

    /// CALL_EXEC: 0 once the new program is in place, or -errno.
    fn exec(&self, _args: [u64; 6]) -> i64 {
        -(libc::ENOSYS as i64)
    }

    /// The descriptors kept for write-back now.
    fn kept_snapshot(&self) -> Vec<RawFd> {
        Vec::new()
    }
}

pub struct Performer {
    /// Descriptors the program must not touch.
    reserved: Vec<RawFd>,
    /// Descriptors kept for writing shared file mappings back: the program
    /// must not touch them either.
    kept: KeptFiles,
    copier: UserCopy,
    /// The program's /dev/atoll and its enclave's id: for execve, and for
    /// the /proc paths of the enclave's programs.
    device: Option<(Device, u32)>,
}

impl Performer {
    /// `reserved` is extended with the copier's own descriptors.
    pub fn new(mut reserved: Vec<RawFd>, copier: UserCopy) -> Performer {
        reserved.extend(copier.fds());
        Performer { reserved, kept: KeptFiles::default(), copier, device: None }
    }

    /// The program is bound to `device`, in enclave `id`: it may exec, and
    /// /proc/<pid> of a program in the enclave leads to its `atoll run`
    /// (proc_paths.rs).
    pub fn with_device(mut self, device: Device, id: u32) -> Performer {
        self.device = Some((device, id));
        self
    }

    /// The descriptors the program must not touch, with `kept` held.
    fn reserved<'a>(&'a self, kept: &Held<'_>) -> Cow<'a, [RawFd]> {
        if kept.is_empty() {
            Cow::Borrowed(&self.reserved)
        } else {
            Cow::Owned(self.reserved.iter().chain(kept.keys()).copied().collect())
        }
    }

    /// What the path at program address `at` means (None: itself, or not
    /// readable, which the call itself then reports).
    fn path_meaning(&self, at: u64) -> Option<Meaning> {
        let mut head = [0u8; 6];
        // Most paths are not under /proc or /sys: only their first bytes are read.
        self.copier.read(at, &mut head).ok()?;
        if &head != b"/proc/" && !head.starts_with(b"/sys/") {
            return None;
        }
        let path = self.copier.read_c_string(at, PATH_MAX as usize).ok()?;
        proc_paths::meaning(&path, self)
    }

    /// The call with its /proc paths replaced by what they mean, if any is
    /// (proc_paths.rs); None to perform it as it is.
    fn with_proc_paths(&self, call: &policy::Allowed) -> Option<i64> {
        let (nr, args) = (call.nr(), call.args());
        let (i, meaning) = policy::path_args(nr).find_map(|i| Some((i, self.path_meaning(args[i])?)))?;
        let path = match meaning {
            Meaning::Exe if nr == libc::SYS_readlink as u64 || nr == libc::SYS_readlinkat as u64 => {
                return Some(self.readlink_program(args[i + 1], args[i + 2]));
            }
            Meaning::Exe => proc_paths::program(),
            Meaning::Path(path) => path,
            Meaning::Text(text) if nr == libc::SYS_open as u64 || nr == libc::SYS_openat as u64 => {
                return Some(text_file(&text, args[i + 1]));
            }
            Meaning::Text(_) => return None,
        };
        let path = CString::new(path).ok()?;
        Some(passthrough::perform_with_path(call, i, &path))
    }

    /// readlink of /proc/self/exe: the program's path, cut to `size` bytes
    /// as readlink cuts it.
    fn readlink_program(&self, buf: u64, size: u64) -> i64 {
        let path = proc_paths::program();
        let n = path.len().min(size as u32 as usize);
        match self.copier.write(buf, &path[..n]) {
            Ok(()) => n as i64,
            Err(errno) => -(errno as i64),
        }
    }
}

impl proc_paths::Enclave for Performer {
    fn host_pid_of(&self, pid: u32) -> Option<u32> {
        let (device, id) = self.device.as_ref()?;
        let list = device.programs(*id).ok()?;
        let n = (list.count as usize).min(list.program.len());
        list.program[..n].iter().find(|p| p.pid == pid).map(|p| p.host_pid)
    }

    fn memory(&self) -> Option<Memory> {
        let (device, id) = self.device.as_ref()?;
        let info = (0..).map_while(|index| device.info(index).ok().flatten()).find(|e| e.id == *id)?;
        (info.lwk_total_bytes > 0).then_some(Memory { total: info.lwk_total_bytes, free: info.lwk_free_bytes })
    }
}

impl Perform for Performer {
    fn kept_file(&self, op: u64, args: [u64; 6]) -> i64 {
        self.kept.call(op, args)
    }

    fn file_name(&self, args: [u64; 6]) -> i64 {
        let [fd, buf, size, ..] = args;
        if size <= STAT_SIZE || !policy::inside(buf, size) {
            return -(libc::EINVAL as i64);
        }
        // The program's own descriptor: fstat's checks apply, and its stat
        // lands where the call says.
        let r = self.perform(libc::SYS_fstat as u64, [fd, buf, 0, 0, 0, 0]);
        if r < 0 {
            return r;
        }
        let path = match std::fs::read_link(format!("/proc/self/fd/{}", fd as i32)) {
            Ok(path) => path.into_os_string().into_vec(),
            Err(e) => return -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        let n = path.len().min((size - STAT_SIZE - 1) as usize);
        let with_nul = [&path[..n], b"\0"].concat();
        match self.copier.write(buf + STAT_SIZE, &with_nul) {
            Ok(()) => n as i64,
            Err(errno) => -(errno as i64),
        }
    }

    fn text_file(&self, what: u64, args: [u64; 6]) -> i64 {
        if what == TEXT_MAY_READ {
            // Another program's file: only if Linux lets this process open
            // the maps of the process serving it.
            let Some(host_pid) = proc_paths::Enclave::host_pid_of(self, args[0] as u32).filter(|&h| h != 0) else {
                return -(libc::ENOENT as i64);
            };
            return match std::fs::File::open(format!("/proc/{host_pid}/maps")) {
                Ok(_) => 0,
                Err(e) => -(e.raw_os_error().unwrap_or(libc::EACCES) as i64),
            };
        }
        let [at, len, flags, ..] = args;
        if what != TEXT_OPEN || len > MAX_TEXT_FILE || !policy::inside(at, len) {
            return -(libc::EINVAL as i64);
        }
        let mut text = vec![0u8; len as usize];
        match self.copier.read(at, &mut text) {
            Ok(()) => text_file(&text, flags),
            Err(errno) => -(errno as i64),
        }
    }

    fn exec(&self, args: [u64; 6]) -> i64 {
        let (Some(exec), Some((device, _))) = (EXEC.get(), &self.device) else { return -(libc::ENOSYS as i64) };
        let r = exec(device, args);
        if r == 0 {
            self.kept.exec_done();
        }
        r
    }

    fn kept_snapshot(&self) -> Vec<RawFd> {
        self.kept.snapshot()
    }

    fn perform(&self, nr: u64, args: [u64; 6]) -> i64 {
        let kept = self.kept.hold();
        let reserved = self.reserved(&kept);
        let call = match policy::check(nr, &args, &reserved) {
            Ok(call) => call,
            Err(errno) => return -(errno as i64),
        };
        // A close or dup2 keeps the kept set still until it is done (no
        // descriptor becomes kept between its check and the call); other
        // calls may block for long, and need not.
        let numbers = [libc::SYS_close, libc::SYS_dup2, libc::SYS_dup3];
        let _held = numbers.contains(&(nr as libc::c_long)).then_some(kept);
        if let Some(ret) = self.with_proc_paths(&call) {
            return ret;
        }
        passthrough::perform(&call, &self.copier, &reserved)
    }
}

/// A descriptor (open's answer, with its O_CLOEXEC `flags`) of a file in
/// memory holding `text`, read from its start, opened read-only as the
/// file it stands for would be.
fn text_file(text: &[u8], flags: u64) -> i64 {
    let memory = match memfd_create(c"atoll-proc", MemfdFlags::CLOEXEC) {
        Ok(fd) => std::fs::File::from(fd),
        Err(e) => return -(e.raw_os_error() as i64),
    };
    if let Err(e) = (&memory).write_all(text) {
        return -(e.raw_os_error().unwrap_or(libc::EIO) as i64);
    }
    let cloexec = if flags as i32 & libc::O_CLOEXEC != 0 { OFlags::CLOEXEC } else { OFlags::empty() };
    // A new description, at offset 0; the program's descriptor from here on.
    match open(format!("/proc/self/fd/{}", memory.as_raw_fd()), OFlags::RDONLY | cloexec, Mode::empty()) {
        Ok(fd) => fd.into_raw_fd().into(),
        Err(e) => -(e.raw_os_error() as i64),
    }
}

#[cfg(test)]
mod tests;
