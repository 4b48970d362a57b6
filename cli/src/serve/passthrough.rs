//! The raw pass-through: the system calls performed with a program's
//! addresses (its buffers, in the mirror) or descriptors, as they are or
//! with our own copies of the structs they point to, and the copies to and
//! from its memory (usercopy.rs). The only `unsafe` of the serving engine.
//!
//! All of it rests on one fact: the program area [USER_START, USER_END)
//! holds no memory of this process but the mirror of the program's, so
//! whatever the kernel writes there cannot break this process, and an
//! unmapped page there is EFAULT. Every address the kernel gets lies there
//! (`policy::Allowed` vouches for a call's own arguments; `policy::inside`
//! checks the rest here) or in our own memory, which outlives the call.

#[cfg(test)]
pub mod test_area;
pub mod usercopy;

use super::policy::{self, Allowed, IFCONF_SIZE, IOVEC_SIZE, IOV_MAX, MSGHDR_SIZE, SIGMASK_ARG_SIZE};
use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, IntoRawFd, OwnedFd, RawFd};
use usercopy::UserCopy;

/// Performs `call`: as it is, or with our own copies of the structs it
/// points to, every address in them checked. The result as the kernel
/// returns it: a value, or -errno. `reserved`: the descriptors a sendmsg
/// must not pass on.
pub fn perform(call: &Allowed, copier: &UserCopy, reserved: &[RawFd]) -> i64 {
    let (nr, args) = (call.nr(), call.args());
    if policy::is_vectored(nr) {
        return vectored(nr, args, copier).unwrap_or_else(negative);
    }
    if nr == libc::SYS_pselect6 as u64 && args[5] != 0 {
        return pselect(args, copier).unwrap_or_else(negative);
    }
    if nr == libc::SYS_sendmsg as u64 || nr == libc::SYS_recvmsg as u64 {
        return message(nr, args, copier, reserved).unwrap_or_else(negative);
    }
    if nr == libc::SYS_ioctl as u64 && args[1] as u32 as libc::Ioctl == libc::SIOCGIFCONF {
        return interfaces(args, copier).unwrap_or_else(negative);
    }
    if let Some(ret) = set_ids(nr, args) {
        return ret;
    }
    let [a, b, c, d, e, f] = args;
    // SAFETY: `call` is Allowed: of the delegated set, on descriptors that
    // are not this process's own, with every address argument inside the
    // program area for as many bytes as the call may touch; the calls with
    // addresses inside structs were dispatched above.
    raw_result(unsafe { libc::syscall(nr as libc::c_long, a, b, c, d, e, f) })
}

/// `call` with its path argument `i` replaced by `path`.
pub fn perform_with_path(call: &Allowed, i: usize, path: &CStr) -> i64 {
    if !policy::path_args(call.nr()).any(|p| p == i) {
        return negative(libc::EINVAL);
    }
    let mut args = call.args();
    args[i] = path.as_ptr() as u64;
    let [a, b, c, d, e, f] = args;
    // SAFETY: as in perform() (no call with a path points to structs), but
    // for argument i: a path, which the kernel only reads, our own string,
    // which outlives the call.
    raw_result(unsafe { libc::syscall(call.nr() as libc::c_long, a, b, c, d, e, f) })
}

/// pwrite64 on `fd` (a kept descriptor, kept_files.rs) of the program's
/// `len` bytes at `addr`; the result as perform's.
pub fn pwrite(fd: BorrowedFd<'_>, addr: u64, len: u64, offset: u64) -> i64 {
    if !policy::inside(addr, len) {
        return negative(libc::EFAULT);
    }
    // SAFETY: the buffer lies in the program area (checked), which pwrite64
    // only reads; `fd` is borrowed, so it stays open for the call.
    raw_result(unsafe { libc::syscall(libc::SYS_pwrite64, fd.as_raw_fd(), addr, len, offset) })
}

/// write() on `fd` (a kept pipe, kept_files.rs) of the program's `len`
/// bytes at `addr`, made non-blocking first (the kept description is
/// this process's own): bytes that do not fit are refused, never waited for.
pub fn write_now(fd: BorrowedFd<'_>, addr: u64, len: u64) -> i64 {
    if !policy::inside(addr, len) {
        return negative(libc::EFAULT);
    }
    if let Err(e) = rustix::fs::fcntl_setfl(fd, rustix::fs::OFlags::NONBLOCK) {
        return negative(e.raw_os_error());
    }
    // SAFETY: the buffer lies in the program area (checked), which write
    // only reads; `fd` is borrowed, so it stays open for the call.
    raw_result(unsafe { libc::write(fd.as_raw_fd(), addr as *const libc::c_void, len as usize) } as i64)
}

/// Closes `fd` with close's answer for the program (CALL_KEPT_FILE's drop).
pub fn close(fd: OwnedFd) -> i64 {
    // SAFETY: `fd` was ours alone, and into_raw_fd gave up the one handle.
    raw_result(unsafe { libc::close(fd.into_raw_fd()) }.into())
}

/// execve's last step on Linux's side: closes every descriptor below
/// `limit` that is marked close-on-exec (the program's; ours lie above).
pub fn close_on_exec_below(limit: RawFd) {
    let Ok(dir) = std::fs::read_dir("/proc/self/fd") else { return };
    let fds: Vec<RawFd> =
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).filter(|&fd| fd < limit).collect();
    for fd in fds {
        // SAFETY: F_GETFD reads a flag. The close ends a descriptor the
        // program asked to lose at exec: no Rust object here owns one below
        // `limit` but KeptFiles, which forgets its own once this is done
        // (exec_done), and the program's one thread waits in this execve,
        // so no worker opens one meanwhile.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 && flags & libc::FD_CLOEXEC != 0 {
                libc::close(fd);
            }
        }
    }
}

/// readv/writev with a copy of the program's iovec array, each buffer
/// checked, so the kernel only ever touches the program area.
fn vectored(nr: u64, args: [u64; 6], copier: &UserCopy) -> Result<i64, i32> {
    let iovecs = iovecs(copier, args[1], args[2])?;
    // preadv's offset and pwritev2's flags come after the array.
    let [fd, _, _, d, e, f] = args;
    // SAFETY: `iovecs` is our own array and outlives the call; each
    // buffer lies in the program area (checked), and the rest of the call
    // is Allowed, as in perform().
    Ok(raw_result(unsafe { libc::syscall(nr as libc::c_long, fd, iovecs.as_ptr(), iovecs.len(), d, e, f) }))
}

/// A copy of the program's iovec array at `at`, each buffer checked.
fn iovecs(copier: &UserCopy, at: u64, count: u64) -> Result<Vec<libc::iovec>, i32> {
    if count > IOV_MAX {
        return Err(libc::EMSGSIZE);
    }
    let mut raw = vec![0u8; (count * IOVEC_SIZE) as usize];
    copier.read(at, &mut raw)?;
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

/// sendmsg/recvmsg with our own copy of the msghdr: its name and control
/// buffers and every iovec checked to lie in the program area; descriptors
/// sent (SCM_RIGHTS) must not be `reserved`; what recvmsg reports in the
/// msghdr is written back to the program's.
fn message(nr: u64, args: [u64; 6], copier: &UserCopy, reserved: &[RawFd]) -> Result<i64, i32> {
    let mut raw = [0u8; MSGHDR_SIZE as usize];
    copier.read(args[1], &mut raw)?;
    let word = |at: usize| u64::from_le_bytes(raw[at..at + 8].try_into().unwrap_or_default());
    let (name, name_len) = (word(0), word(8) as u32);
    let (control, control_len) = (word(32), word(40));
    if (name != 0 && !policy::inside(name, name_len.into())) || (control != 0 && !policy::inside(control, control_len))
    {
        return Err(libc::EFAULT);
    }
    let mut iovecs = iovecs(copier, word(16), word(24))?;
    let sending = nr == libc::SYS_sendmsg as u64;
    // What the kernel reads is ours (checked); what recvmsg fills in stays the program's.
    let mut control_copy = vec![0u8; if sending && control != 0 { control_len as usize } else { 0 }];
    if !control_copy.is_empty() {
        copier.read(control, &mut control_copy)?;
        if policy::sends_reserved_descriptor(&control_copy, reserved) {
            return Err(libc::EBADF);
        }
    }
    // SAFETY: all-zero is a valid msghdr (null pointers, zero lengths).
    let mut hdr: libc::msghdr = unsafe { std::mem::zeroed() };
    hdr.msg_name = name as *mut libc::c_void;
    hdr.msg_namelen = name_len;
    hdr.msg_iov = iovecs.as_mut_ptr();
    hdr.msg_iovlen = iovecs.len();
    hdr.msg_control = if control_copy.is_empty() { control as *mut _ } else { control_copy.as_mut_ptr().cast() };
    hdr.msg_controllen = control_len as usize;
    // SAFETY: `hdr`, `iovecs` and `control_copy` are ours and outlive the
    // call; every address in them lies in the program area (checked above)
    // or in them, and the rest of the call is Allowed, as in perform().
    let ret = raw_result(unsafe { libc::syscall(nr as libc::c_long, args[0], &mut hdr as *mut libc::msghdr, args[2]) });
    if ret >= 0 && !sending {
        // msg_namelen, msg_controllen and msg_flags, as the kernel left them.
        copier.write(args[1] + 8, &hdr.msg_namelen.to_le_bytes())?;
        copier.write(args[1] + 40, &(hdr.msg_controllen as u64).to_le_bytes())?;
        copier.write(args[1] + 48, &hdr.msg_flags.to_le_bytes())?;
    }
    Ok(ret)
}

/// pselect6 with a copy of its {sigset pointer, size} pair, the pointer
/// checked, so the kernel reads the signal mask from the program area.
fn pselect(args: [u64; 6], copier: &UserCopy) -> Result<i64, i32> {
    let mut raw = [0u8; SIGMASK_ARG_SIZE as usize];
    copier.read(args[5], &mut raw)?;
    let pair = [
        u64::from_le_bytes(raw[..8].try_into().unwrap_or_default()),
        u64::from_le_bytes(raw[8..].try_into().unwrap_or_default()),
    ];
    if pair[0] != 0 && !policy::inside(pair[0], pair[1]) {
        return Err(libc::EFAULT);
    }
    let [a, b, c, d, e, _] = args;
    // SAFETY: the sixth argument is our own pair, which outlives the call,
    // whose pointer lies in the program area (checked); the rest of the
    // call is Allowed, as in perform().
    Ok(raw_result(unsafe { libc::syscall(libc::SYS_pselect6, a, b, c, d, e, pair.as_ptr()) }))
}

/// SIOCGIFCONF with our own copy of the struct ifconf, its buffer checked
/// to lie in the program area; the length the kernel reports goes back to
/// the program's.
fn interfaces(args: [u64; 6], copier: &UserCopy) -> Result<i64, i32> {
    let mut raw = [0u8; IFCONF_SIZE as usize];
    copier.read(args[2], &mut raw)?;
    let len = i32::from_le_bytes(raw[..4].try_into().unwrap_or_default());
    let buf = u64::from_le_bytes(raw[8..].try_into().unwrap_or_default());
    if buf != 0 && !policy::inside(buf, len.max(0) as u64) {
        return Err(libc::EFAULT);
    }
    // SAFETY: all-zero is a valid ifconf (a null buffer, length 0).
    let mut ours: libc::ifconf = unsafe { std::mem::zeroed() };
    ours.ifc_len = len;
    ours.ifc_ifcu.ifcu_buf = buf as *mut libc::c_char;
    // SAFETY: `ours` is our own and outlives the call; its buffer lies in
    // the program area (checked), and the descriptor is Allowed.
    let ret = raw_result(unsafe { libc::ioctl(args[0] as i32, libc::SIOCGIFCONF, &mut ours) }.into());
    if ret >= 0 {
        copier.write(args[2], &ours.ifc_len.to_le_bytes())?;
    }
    Ok(ret)
}

/// The calls that change who the program is, for the whole of `atoll run`
/// (its every thread makes the program's calls): libc's wrappers change
/// every thread's credentials, the kernel's calls only the caller's. None
/// for other calls. `args` are an Allowed call's.
fn set_ids(nr: u64, args: [u64; 6]) -> Option<i64> {
    let [a, b, c, ..] = args.map(|x| x as u32);
    // SAFETY: plain numbers but for setgroups, whose list policy::check
    // found inside the program area for as many gids as it counts; libc
    // only reads it.
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

/// -errno as the kernel answers it.
fn negative(errno: i32) -> i64 {
    -(errno as i64)
}

/// libc's -1 and errno as the kernel's -errno.
fn raw_result(value: libc::c_long) -> i64 {
    if value == -1 {
        negative(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
    } else {
        value
    }
}
