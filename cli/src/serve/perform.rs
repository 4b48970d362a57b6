//! Performing one delegated system call in this process, once
//! `policy::check` has let it through. The thin layer over libc::syscall.

use super::kept_files::{Held, KeptFiles};
use super::policy::{self, IFCONF_SIZE, IOVEC_SIZE, IOV_MAX, MSGHDR_SIZE, PATH_MAX, SIGMASK_ARG_SIZE};
use super::proc_paths::{self, Meaning};
use super::system_files::Memory;
use super::usercopy::UserCopy;
use crate::device::Device;
use atoll_abi::{MAX_TEXT_FILE, STAT_SIZE, TEXT_MAY_READ, TEXT_OPEN};
use std::borrow::Cow;
use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStringExt;

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

    /// The descriptors kept for write-back now.
    fn kept_snapshot(&self) -> Vec<RawFd> {
        Vec::new()
    }

    /// The program exec'ed (its close-on-exec descriptors are gone).
    fn exec_done(&self) {}
}

pub struct Performer {
    /// Descriptors the program must not touch.
    reserved: Vec<RawFd>,
    /// Descriptors kept for writing shared file mappings back: the program
    /// must not touch them either.
    kept: KeptFiles,
    copier: UserCopy,
    /// (/dev/atoll descriptor, enclave id): where to look up the programs
    /// of the enclave, for their /proc paths.
    programs: Option<(RawFd, u32)>,
}

impl Performer {
    /// `reserved` is extended with the copier's own descriptors.
    pub fn new(mut reserved: Vec<RawFd>, copier: UserCopy) -> Performer {
        reserved.extend(copier.fds());
        Performer { reserved, kept: KeptFiles::default(), copier, programs: None }
    }

    /// /proc/<pid> of a program in enclave `id` (listed through /dev/atoll
    /// descriptor `fd`) leads to its `atoll run` (proc_paths.rs).
    pub fn with_programs(mut self, fd: RawFd, id: u32) -> Performer {
        self.programs = Some((fd, id));
        self
    }

    /// The descriptors the program must not touch, with `kept` held.
    fn reserved<'a>(&'a self, kept: &Held<'_>) -> Cow<'a, [RawFd]> {
        if kept.is_empty() {
            Cow::Borrowed(&self.reserved)
        } else {
            Cow::Owned(self.reserved.iter().chain(kept.iter()).copied().collect())
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
    fn with_proc_paths(&self, nr: u64, args: [u64; 6]) -> Option<i64> {
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
        let mut ours = args;
        ours[i] = path.as_ptr() as u64;
        let [a, b, c, d, e, f] = ours;
        // SAFETY: as in perform(), but for argument i: our own string,
        // which outlives the call.
        Some(raw_result(unsafe { libc::syscall(nr as libc::c_long, a, b, c, d, e, f) }))
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

    /// A copy of the program's iovec array at `at`, each buffer checked.
    fn iovecs(&self, at: u64, count: u64) -> Result<Vec<libc::iovec>, i32> {
        if count > IOV_MAX {
            return Err(libc::EMSGSIZE);
        }
        let mut raw = vec![0u8; (count * IOVEC_SIZE) as usize];
        self.copier.read(at, &mut raw)?;
        raw.chunks_exact(IOVEC_SIZE as usize)
            .map(|entry| {
                let base = u64::from_le_bytes(entry[..8].try_into().unwrap_or_default());
                let len = u64::from_le_bytes(entry[8..].try_into().unwrap_or_default());
                policy::inside(base, len)
                    .then_some(libc::iovec { iov_base: base as *mut libc::c_void, iov_len: len as usize })
                    .ok_or(libc::EFAULT)
            })
            .collect()
    }

    /// readv/writev with a copy of the program's iovec array, each buffer
    /// checked, so the kernel only ever touches the program area.
    fn vectored(&self, nr: u64, args: [u64; 6]) -> i64 {
        let iovecs = match self.iovecs(args[1], args[2]) {
            Ok(v) => v,
            Err(errno) => return -(errno as i64),
        };
        // preadv's offset and pwritev2's flags come after the array.
        let [fd, _, _, d, e, f] = args;
        // SAFETY: `iovecs` is our own array and outlives the call; each
        // buffer lies in the program area (checked), which holds no memory
        // of this process, and a fault there is EFAULT.
        raw_result(unsafe { libc::syscall(nr as libc::c_long, fd, iovecs.as_ptr(), iovecs.len(), d, e, f) })
    }

    /// sendmsg/recvmsg with our own copy of the msghdr: its name and
    /// control buffers and every iovec checked to lie in the program area;
    /// descriptors sent (SCM_RIGHTS) must not be ours; what recvmsg reports
    /// in the msghdr is written back to the program's.
    fn message(&self, nr: u64, args: [u64; 6]) -> i64 {
        match self.message_checked(nr, args) {
            Ok(ret) => ret,
            Err(errno) => -(errno as i64),
        }
    }

    fn message_checked(&self, nr: u64, args: [u64; 6]) -> Result<i64, i32> {
        let mut raw = [0u8; MSGHDR_SIZE as usize];
        self.copier.read(args[1], &mut raw)?;
        let word = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().unwrap_or_default());
        let (name, name_len) = (word(0), word(8) as u32);
        let (control, control_len) = (word(32), word(40));
        if (name != 0 && !policy::inside(name, name_len.into()))
            || (control != 0 && !policy::inside(control, control_len))
        {
            return Err(libc::EFAULT);
        }
        let mut iovecs = self.iovecs(word(16), word(24))?;
        let sending = nr == libc::SYS_sendmsg as u64;
        // What the kernel reads is ours (checked); what recvmsg fills in stays the program's.
        let mut control_copy = vec![0u8; if sending && control != 0 { control_len as usize } else { 0 }];
        if !control_copy.is_empty() {
            self.copier.read(control, &mut control_copy)?;
            if sends_reserved_descriptor(&control_copy, &self.reserved(&self.kept.hold())) {
                return Err(libc::EBADF);
            }
        }
        // SAFETY: all-zero is a valid msghdr.
        let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
        hdr.msg_name = name as *mut libc::c_void;
        hdr.msg_namelen = name_len;
        hdr.msg_iov = iovecs.as_mut_ptr();
        hdr.msg_iovlen = iovecs.len();
        hdr.msg_control = if control_copy.is_empty() { control as *mut _ } else { control_copy.as_mut_ptr().cast() };
        hdr.msg_controllen = control_len as usize;
        // SAFETY: `hdr`, `iovecs` and `control_copy` are ours and outlive
        // the call; every pointer in them lies in the program area (checked
        // above) or in them, and a fault in the program area is EFAULT.
        let ret =
            raw_result(unsafe { libc::syscall(nr as libc::c_long, args[0], &mut hdr as *mut libc::msghdr, args[2]) });
        if ret >= 0 && !sending {
            // msg_namelen, msg_controllen and msg_flags, as the kernel left them.
            self.copier.write(args[1] + 8, &hdr.msg_namelen.to_le_bytes())?;
            self.copier.write(args[1] + 40, &(hdr.msg_controllen as u64).to_le_bytes())?;
            self.copier.write(args[1] + 48, &hdr.msg_flags.to_le_bytes())?;
        }
        Ok(ret)
    }

    /// pselect6 with a copy of its {sigset pointer, size} pair, the pointer
    /// checked, so the kernel reads the signal mask from the program area.
    fn pselect(&self, args: [u64; 6]) -> i64 {
        let mut raw = [0u8; SIGMASK_ARG_SIZE as usize];
        if let Err(errno) = self.copier.read(args[5], &mut raw) {
            return -(errno as i64);
        }
        let pair = [
            u64::from_le_bytes(raw[..8].try_into().unwrap_or_default()),
            u64::from_le_bytes(raw[8..].try_into().unwrap_or_default()),
        ];
        if pair[0] != 0 && !policy::inside(pair[0], pair[1]) {
            return -(libc::EFAULT as i64);
        }
        let [a, b, c, d, e, _] = args;
        // SAFETY: as in perform(), and the sixth argument is our own pair,
        // which outlives the call, whose pointer lies in the program area.
        raw_result(unsafe { libc::syscall(libc::SYS_pselect6, a, b, c, d, e, pair.as_ptr()) })
    }
}

impl Performer {
    /// SIOCGIFCONF with our own copy of the struct ifconf, its buffer
    /// checked to lie in the program area; the length the kernel reports
    /// goes back to the program's.
    fn interfaces(&self, args: [u64; 6]) -> i64 {
        let mut raw = [0u8; IFCONF_SIZE as usize];
        if let Err(errno) = self.copier.read(args[2], &mut raw) {
            return -(errno as i64);
        }
        let len = i32::from_le_bytes(raw[..4].try_into().unwrap_or_default());
        let buf = u64::from_le_bytes(raw[8..].try_into().unwrap_or_default());
        if buf != 0 && !policy::inside(buf, len.max(0) as u64) {
            return -(libc::EFAULT as i64);
        }
        // SAFETY: all-zero is a valid ifconf.
        let mut ours: libc::ifconf = unsafe { std::mem::zeroed() };
        ours.ifc_len = len;
        ours.ifc_ifcu.ifcu_buf = buf as *mut libc::c_char;
        // SAFETY: `ours` is our own and outlives the call; its buffer lies
        // in the program area (checked), where a fault is EFAULT.
        let ret = raw_result(unsafe { libc::ioctl(args[0] as i32, libc::SIOCGIFCONF, &mut ours) } as libc::c_long);
        if ret >= 0 {
            if let Err(errno) = self.copier.write(args[2], &ours.ifc_len.to_le_bytes()) {
                return -(errno as i64);
            }
        }
        ret
    }
}

impl proc_paths::Enclave for Performer {
    fn host_pid_of(&self, pid: u32) -> Option<u32> {
        let (fd, id) = self.programs?;
        let list = Device::programs_on(fd, id).ok()?;
        let n = (list.count as usize).min(list.program.len());
        list.program[..n].iter().find(|p| p.pid == pid).map(|p| p.host_pid)
    }

    fn memory(&self) -> Option<Memory> {
        let (fd, id) = self.programs?;
        let info = (0..).map_while(|index| Device::info_on(fd, index).ok().flatten()).find(|e| e.id == id)?;
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

    fn kept_snapshot(&self) -> Vec<RawFd> {
        self.kept.snapshot()
    }

    fn exec_done(&self) {
        self.kept.exec_done();
    }

    fn perform(&self, nr: u64, args: [u64; 6]) -> i64 {
        let kept = self.kept.hold();
        if let Err(errno) = policy::check(nr, &args, &self.reserved(&kept)) {
            return -(errno as i64);
        }
        // A close or dup2 keeps the kept set still until it is done (no
        // descriptor becomes kept between its check and the call); other
        // calls may block for long, and need not.
        let numbers = [libc::SYS_close, libc::SYS_dup2, libc::SYS_dup3];
        let _held = numbers.contains(&(nr as libc::c_long)).then_some(kept);
        if policy::is_vectored(nr) {
            return self.vectored(nr, args);
        }
        if nr == libc::SYS_pselect6 as u64 && args[5] != 0 {
            return self.pselect(args);
        }
        if nr == libc::SYS_sendmsg as u64 || nr == libc::SYS_recvmsg as u64 {
            return self.message(nr, args);
        }
        if nr == libc::SYS_ioctl as u64 && args[1] as u32 as libc::Ioctl == libc::SIOCGIFCONF {
            return self.interfaces(args);
        }
        if let Some(ret) = set_ids(nr, args) {
            return ret;
        }
        if let Some(ret) = self.with_proc_paths(nr, args) {
            return ret;
        }
        let [a, b, c, d, e, f] = args;
        // SAFETY: policy::check allowed only calls of the delegated set, on
        // descriptors that are not this process's own, with every pointer
        // argument inside the program area for as many bytes as the call
        // may touch. That area is the mirror: it holds no memory of this
        // process, so whatever the kernel writes there cannot break it, and
        // an unmapped page there makes the call fail with EFAULT.
        raw_result(unsafe { libc::syscall(nr as libc::c_long, a, b, c, d, e, f) })
    }
}

/// A descriptor (open's answer, with its O_CLOEXEC `flags`) of a file in
/// memory holding `text`, read from its start, opened read-only as the
/// file it stands for would be.
fn text_file(text: &[u8], flags: u64) -> i64 {
    // SAFETY: the name is a NUL-terminated literal.
    let fd = unsafe { libc::memfd_create(c"atoll-proc".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return raw_result(-1);
    }
    // SAFETY: `fd` was just made and nothing else has it; File closes it.
    let mut file = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    if let Err(e) = std::io::Write::write_all(&mut file, text) {
        return -(e.raw_os_error().unwrap_or(libc::EIO) as i64);
    }
    let cloexec = flags as i32 & libc::O_CLOEXEC;
    let path = CString::new(format!("/proc/self/fd/{fd}")).unwrap_or_default();
    // SAFETY: a NUL-terminated path of our own; a new description, at offset 0.
    raw_result(unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | cloexec) } as libc::c_long)
}

/// Whether control messages `control` pass one of `reserved` (SCM_RIGHTS).
fn sends_reserved_descriptor(control: &[u8], reserved: &[RawFd]) -> bool {
    const HEADER: usize = 16; // struct cmsghdr: len (8), level (4), type (4)
    let mut at = 0;
    while at + HEADER <= control.len() {
        let len = u64::from_le_bytes(control[at..at + 8].try_into().unwrap_or_default()) as usize;
        let level = i32::from_le_bytes(control[at + 8..at + 12].try_into().unwrap_or_default());
        let kind = i32::from_le_bytes(control[at + 12..at + 16].try_into().unwrap_or_default());
        if len < HEADER {
            return false; // the kernel refuses it (EINVAL)
        }
        if level == libc::SOL_SOCKET && kind == libc::SCM_RIGHTS {
            let fds = &control[at + HEADER..(at + len).min(control.len())];
            let mut ids = fds.chunks_exact(4).map(|b| i32::from_le_bytes(b.try_into().unwrap_or_default()));
            if ids.any(|fd| reserved.contains(&fd)) {
                return true;
            }
        }
        at += len.div_ceil(8) * 8;
    }
    false
}

/// The calls that change who the program is, for the whole of `atoll run`
/// (its every thread makes the program's calls): libc's wrappers change
/// every thread's credentials, the kernel's calls only the caller's. None
/// for other calls.
fn set_ids(nr: u64, args: [u64; 6]) -> Option<i64> {
    let [a, b, c, ..] = args.map(|x| x as u32);
    // SAFETY: plain numbers but for setgroups, whose list policy::check
    // found inside the program area (the mirror) for as many gids as it
    // counts; libc only reads it.
    let r = unsafe {
        match nr as libc::c_long {
            libc::SYS_setuid => libc::setuid(a),
            libc::SYS_setgid => libc::setgid(a),
            libc::SYS_setreuid => libc::setreuid(a, b),
            libc::SYS_setregid => libc::setregid(a, b),
            libc::SYS_setresuid => libc::setresuid(a, b, c),
            libc::SYS_setresgid => libc::setresgid(a, b, c),
            libc::SYS_setgroups => libc::setgroups(args[0] as usize, args[1] as *const libc::gid_t),
            _ => return None,
        }
    };
    Some(raw_result(r.into()))
}

/// libc::syscall's -1 and errno as the kernel's -errno.
pub(super) fn raw_result(value: libc::c_long) -> i64 {
    if value == -1 {
        -(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
    } else {
        value
    }
}

#[cfg(test)]
mod tests;
