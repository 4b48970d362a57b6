//! Which delegated system calls this process performs for the program, and
//! the checks on their arguments. A pointer must lie in the program area
//! (where the mirror is, so the kernel reads and writes the program's memory
//! and never this process's own), and a descriptor must not be one this
//! process keeps for itself (/dev/atoll, its own stderr, its copy pipe).
//! The LWK delegates exactly the ABI table's delegated calls
//! (`atoll_abi::syscalls`), and a test
//! checks that these rules cover exactly that list; anything else is refused.

use atoll_abi::{USER_END, USER_START};
use libc::c_long;
use std::os::fd::RawFd;

/// Longest path the kernel reads (PATH_MAX), NUL included.
pub const PATH_MAX: u64 = 4096;
/// sizeof(struct stat), struct statx, struct statfs on x86-64.
const STAT_SIZE: u64 = 144;
const STATX_SIZE: u64 = 256;
const STATFS_SIZE: u64 = 120;
/// The kernel's struct termios (TCGETS), struct winsize, struct flock.
const TERMIOS_SIZE: u64 = 36;
const WINSIZE_SIZE: u64 = 8;
/// struct ifreq, struct ifconf (SIOCGIF*).
const IFREQ_SIZE: u64 = 40;
pub const IFCONF_SIZE: u64 = 16;
const FLOCK_SIZE: u64 = 32;
/// sizeof(struct iovec), and the most readv/writev take (UIO_MAXIOV).
pub const IOVEC_SIZE: u64 = 16;
pub const IOV_MAX: u64 = 1024;

/// sizeof(struct pollfd), struct timespec, a pair of them (utimensat), gid_t.
const POLLFD_SIZE: u64 = 8;
const TIMESPEC_SIZE: u64 = 16;
/// struct timeval, struct utimbuf (utimes, utime), loff_t (sendfile, splice).
const TIMEVAL_SIZE: u64 = 16;
const UTIMBUF_SIZE: u64 = 16;
const OFFSET_SIZE: u64 = 8;
const GID_SIZE: u64 = 4;
/// int[2] (pipe, pipe2, socketpair).
const FD_PAIR_SIZE: u64 = 8;
/// struct sockaddr_storage, socklen_t, struct epoll_event (packed on x86-64),
/// struct itimerspec.
const SOCKADDR_SIZE: u64 = 128;
const SOCKLEN_SIZE: u64 = 4;
const EPOLL_EVENT_SIZE: u64 = 12;
const ITIMERSPEC_SIZE: u64 = 32;
/// struct msghdr on x86-64 (sendmsg, recvmsg).
pub const MSGHDR_SIZE: u64 = 56;
/// pselect6's sixth argument: a sigset pointer and its size.
pub const SIGMASK_ARG_SIZE: u64 = 16;
/// getsockopt's value: its length is in the program's memory, so the rule
/// bounds it (no option the kernel returns is longer).
const SOCKOPT_MAX: u64 = 1024;

/// What one argument is.
#[derive(Clone, Copy)]
enum Arg {
    /// A file descriptor (or a directory descriptor, AT_FDCWD included).
    Fd(usize),
    /// A NUL-terminated path.
    Path(usize),
    /// A path, or NULL.
    OptPath(usize),
    /// A buffer at this argument, of this many bytes.
    Buf(usize, Len),
    /// A buffer, or NULL.
    OptBuf(usize, Len),
}

#[derive(Clone, Copy)]
enum Len {
    /// The value of another argument.
    Arg(usize),
    /// The value of another argument times a size (an array's elements).
    ArgTimes(usize, u64),
    /// An fd_set for descriptors below the value of another argument.
    FdSet(usize),
    Bytes(u64),
}

/// True if [addr, addr + len) lies in the program area (an empty buffer
/// is never touched, so it is always fine).
pub fn inside(addr: u64, len: u64) -> bool {
    len == 0 || (addr >= USER_START && addr.checked_add(len).is_some_and(|end| end <= USER_END))
}

/// The arguments of call `nr` that are paths (optional ones included).
pub fn path_args(nr: u64) -> impl Iterator<Item = usize> {
    rules(nr as c_long).unwrap_or_default().iter().filter_map(|rule| match rule {
        Arg::Path(i) | Arg::OptPath(i) => Some(*i),
        _ => None,
    })
}

/// A call `check` let through; only `check` makes one. Its descriptors are
/// not this process's own, and its addresses lie in the program area for
/// as many bytes as the call may touch, but for those inside the structs
/// it points to (an iovec array, a msghdr, pselect6's sigmask pair, an
/// ifconf), which the pass-through copies and checks.
pub struct Allowed {
    nr: u64,
    args: [u64; 6],
}

impl Allowed {
    pub fn nr(&self) -> u64 {
        self.nr
    }

    pub fn args(&self) -> [u64; 6] {
        self.args
    }
}

/// The call if it may be performed, else the errno to answer.
/// readv and writev pass with their iovec array checked; the pass-through
/// still checks each iovec's buffer, after copying the array (the program
/// could change it meanwhile).
pub fn check(nr: u64, args: &[u64; 6], reserved: &[RawFd]) -> Result<Allowed, i32> {
    let rules = rules(nr as c_long).ok_or(libc::ENOSYS)?;
    for &rule in rules {
        match rule {
            Arg::Fd(i) if reserved.contains(&(args[i] as u32 as RawFd)) => return Err(libc::EBADF),
            Arg::Fd(_) => {}
            Arg::OptPath(i) | Arg::OptBuf(i, _) if args[i] == 0 => {}
            Arg::Path(i) | Arg::OptPath(i) if !inside(args[i], PATH_MAX) => return Err(libc::EFAULT),
            Arg::Path(_) | Arg::OptPath(_) => {}
            Arg::Buf(i, len) | Arg::OptBuf(i, len) => {
                let len = match len {
                    Len::Arg(j) => Some(args[j]),
                    // Counts are ints and unsigned ints in the kernel: 32 bits.
                    Len::ArgTimes(j, size) => u64::from(args[j] as u32).checked_mul(size),
                    Len::FdSet(j) => Some(u64::from(args[j] as u32).div_ceil(64) * 8),
                    Len::Bytes(n) => Some(n),
                };
                if !len.is_some_and(|len| inside(args[i], len)) {
                    return Err(libc::EFAULT);
                }
            }
        }
    }
    match nr as c_long {
        libc::SYS_ioctl => ioctl(args),
        libc::SYS_fcntl => fcntl(args),
        _ if is_vectored(nr) => iovecs(args),
        _ => Ok(()),
    }?;
    Ok(Allowed { nr, args: *args })
}

fn rules(nr: c_long) -> Option<&'static [Arg]> {
    use Arg::{Buf, Fd, OptBuf, OptPath, Path};
    use Len::{ArgTimes, Bytes, FdSet};
    const ADDR: Len = Bytes(SOCKADDR_SIZE);
    const ADDRLEN: Len = Bytes(SOCKLEN_SIZE);
    Some(match nr {
        libc::SYS_socket
        | libc::SYS_eventfd2
        | libc::SYS_epoll_create
        | libc::SYS_epoll_create1
        | libc::SYS_timerfd_create => &[],
        libc::SYS_bind | libc::SYS_connect => &[Fd(0), Buf(1, Len::Arg(2))],
        libc::SYS_listen | libc::SYS_shutdown => &[Fd(0)],
        libc::SYS_accept | libc::SYS_accept4 => &[Fd(0), OptBuf(1, ADDR), OptBuf(2, ADDRLEN)],
        libc::SYS_getsockname | libc::SYS_getpeername => &[Fd(0), Buf(1, ADDR), Buf(2, ADDRLEN)],
        libc::SYS_sendto => &[Fd(0), Buf(1, Len::Arg(2)), OptBuf(4, Len::Arg(5))],
        libc::SYS_recvfrom => &[Fd(0), Buf(1, Len::Arg(2)), OptBuf(4, ADDR), OptBuf(5, ADDRLEN)],
        libc::SYS_setsockopt => &[Fd(0), OptBuf(3, Len::Arg(4))],
        libc::SYS_getsockopt => &[Fd(0), OptBuf(3, Bytes(SOCKOPT_MAX)), Buf(4, ADDRLEN)],
        libc::SYS_select => {
            &[OptBuf(1, FdSet(0)), OptBuf(2, FdSet(0)), OptBuf(3, FdSet(0)), OptBuf(4, Bytes(TIMESPEC_SIZE))]
        }
        // Its sixth argument points at {sigset pointer, size}: the performer
        // copies that pair and checks the pointer in it.
        libc::SYS_pselect6 => &[
            OptBuf(1, FdSet(0)),
            OptBuf(2, FdSet(0)),
            OptBuf(3, FdSet(0)),
            OptBuf(4, Bytes(TIMESPEC_SIZE)),
            OptBuf(5, Bytes(SIGMASK_ARG_SIZE)),
        ],
        libc::SYS_epoll_ctl => &[Fd(0), Fd(2), OptBuf(3, Bytes(EPOLL_EVENT_SIZE))],
        libc::SYS_epoll_wait => &[Fd(0), Buf(1, ArgTimes(2, EPOLL_EVENT_SIZE))],
        libc::SYS_epoll_pwait => &[Fd(0), Buf(1, ArgTimes(2, EPOLL_EVENT_SIZE)), OptBuf(4, Len::Arg(5))],
        libc::SYS_timerfd_settime => &[Fd(0), Buf(2, Bytes(ITIMERSPEC_SIZE)), OptBuf(3, Bytes(ITIMERSPEC_SIZE))],
        libc::SYS_timerfd_gettime => &[Fd(0), Buf(1, Bytes(ITIMERSPEC_SIZE))],
        libc::SYS_getuid | libc::SYS_getgid | libc::SYS_geteuid | libc::SYS_getegid | libc::SYS_umask => &[],
        libc::SYS_getgroups => &[Buf(1, ArgTimes(0, GID_SIZE))],
        libc::SYS_setuid
        | libc::SYS_setgid
        | libc::SYS_setreuid
        | libc::SYS_setregid
        | libc::SYS_setresuid
        | libc::SYS_setresgid => &[],
        libc::SYS_setgroups => &[Buf(1, ArgTimes(0, GID_SIZE))],
        libc::SYS_getresuid | libc::SYS_getresgid => {
            &[Buf(0, Bytes(GID_SIZE)), Buf(1, Bytes(GID_SIZE)), Buf(2, Bytes(GID_SIZE))]
        }
        libc::SYS_pipe | libc::SYS_pipe2 => &[Buf(0, Bytes(FD_PAIR_SIZE))],
        libc::SYS_socketpair => &[Buf(3, Bytes(FD_PAIR_SIZE))],
        libc::SYS_poll => &[Buf(0, ArgTimes(1, POLLFD_SIZE))],
        libc::SYS_ppoll => &[Buf(0, ArgTimes(1, POLLFD_SIZE)), OptBuf(2, Bytes(TIMESPEC_SIZE)), OptBuf(3, Len::Arg(4))],
        libc::SYS_fsync | libc::SYS_fdatasync | libc::SYS_ftruncate | libc::SYS_fchmod | libc::SYS_fchdir => &[Fd(0)],
        libc::SYS_truncate | libc::SYS_rmdir | libc::SYS_chmod => &[Path(0)],
        libc::SYS_link | libc::SYS_symlink => &[Path(0), Path(1)],
        libc::SYS_mkdirat | libc::SYS_unlinkat | libc::SYS_fchmodat => &[Fd(0), Path(1)],
        libc::SYS_linkat => &[Fd(0), Path(1), Fd(2), Path(3)],
        libc::SYS_symlinkat => &[Path(0), Fd(1), Path(2)],
        libc::SYS_renameat | libc::SYS_renameat2 => &[Fd(0), Path(1), Fd(2), Path(3)],
        libc::SYS_readlinkat => &[Fd(0), Path(1), Buf(2, Len::Arg(3))],
        libc::SYS_utimensat => &[Fd(0), OptPath(1), OptBuf(2, Bytes(2 * TIMESPEC_SIZE))],
        libc::SYS_read | libc::SYS_write | libc::SYS_pread64 | libc::SYS_pwrite64 | libc::SYS_getdents64 => {
            &[Fd(0), Buf(1, Len::Arg(2))]
        }
        libc::SYS_open | libc::SYS_access | libc::SYS_chdir | libc::SYS_mkdir | libc::SYS_unlink => &[Path(0)],
        libc::SYS_close | libc::SYS_lseek | libc::SYS_dup | libc::SYS_ioctl | libc::SYS_fcntl => &[Fd(0)],
        libc::SYS_readv | libc::SYS_writev => &[Fd(0)],
        // The performer copies the msghdr and checks what it points to.
        libc::SYS_sendmsg | libc::SYS_recvmsg => &[Fd(0), Buf(1, Bytes(MSGHDR_SIZE))],
        libc::SYS_stat | libc::SYS_lstat => &[Path(0), Buf(1, Bytes(STAT_SIZE))],
        libc::SYS_fstat => &[Fd(0), Buf(1, Bytes(STAT_SIZE))],
        libc::SYS_statfs => &[Path(0), Buf(1, Bytes(STATFS_SIZE))],
        libc::SYS_fstatfs => &[Fd(0), Buf(1, Bytes(STATFS_SIZE))],
        libc::SYS_dup2 | libc::SYS_dup3 => &[Fd(0), Fd(1)],
        libc::SYS_getcwd => &[Buf(0, Len::Arg(1))],
        libc::SYS_rename => &[Path(0), Path(1)],
        libc::SYS_readlink => &[Path(0), Buf(1, Len::Arg(2))],
        libc::SYS_openat | libc::SYS_faccessat | libc::SYS_faccessat2 => &[Fd(0), Path(1)],
        libc::SYS_newfstatat => &[Fd(0), Path(1), Buf(2, Bytes(STAT_SIZE))],
        libc::SYS_statx => &[Fd(0), Path(1), Buf(4, Bytes(STATX_SIZE))],
        // The rest of the file system: owners, times, nodes, locks, hints,
        // copies between descriptors, extended attributes, inotify.
        libc::SYS_creat | libc::SYS_chown | libc::SYS_lchown | libc::SYS_mknod => &[Path(0)],
        libc::SYS_fchownat | libc::SYS_mknodat => &[Fd(0), Path(1)],
        libc::SYS_utime => &[Path(0), OptBuf(1, Bytes(UTIMBUF_SIZE))],
        libc::SYS_utimes => &[Path(0), OptBuf(1, Bytes(2 * TIMEVAL_SIZE))],
        libc::SYS_futimesat => &[Fd(0), OptPath(1), OptBuf(2, Bytes(2 * TIMEVAL_SIZE))],
        libc::SYS_sync | libc::SYS_inotify_init | libc::SYS_inotify_init1 | libc::SYS_eventfd => &[],
        libc::SYS_fchown
        | libc::SYS_flock
        | libc::SYS_syncfs
        | libc::SYS_readahead
        | libc::SYS_fadvise64
        | libc::SYS_fallocate
        | libc::SYS_sync_file_range
        | libc::SYS_inotify_rm_watch => &[Fd(0)],
        libc::SYS_inotify_add_watch => &[Fd(0), Path(1)],
        libc::SYS_sendfile => &[Fd(0), Fd(1), OptBuf(2, Bytes(OFFSET_SIZE))],
        libc::SYS_tee => &[Fd(0), Fd(1)],
        libc::SYS_splice | libc::SYS_copy_file_range => {
            &[Fd(0), OptBuf(1, Bytes(OFFSET_SIZE)), Fd(2), OptBuf(3, Bytes(OFFSET_SIZE))]
        }
        libc::SYS_preadv | libc::SYS_pwritev | libc::SYS_preadv2 | libc::SYS_pwritev2 => &[Fd(0)],
        libc::SYS_openat2 => &[Fd(0), Path(1), Buf(2, Len::Arg(3))],
        // An attribute's name is a string, checked as a path is.
        libc::SYS_setxattr | libc::SYS_lsetxattr => &[Path(0), Path(1), Buf(2, Len::Arg(3))],
        libc::SYS_fsetxattr => &[Fd(0), Path(1), Buf(2, Len::Arg(3))],
        libc::SYS_getxattr | libc::SYS_lgetxattr => &[Path(0), Path(1), OptBuf(2, Len::Arg(3))],
        libc::SYS_fgetxattr => &[Fd(0), Path(1), OptBuf(2, Len::Arg(3))],
        libc::SYS_listxattr | libc::SYS_llistxattr => &[Path(0), OptBuf(1, Len::Arg(2))],
        libc::SYS_flistxattr => &[Fd(0), OptBuf(1, Len::Arg(2))],
        libc::SYS_removexattr | libc::SYS_lremovexattr => &[Path(0), Path(1)],
        libc::SYS_fremovexattr => &[Fd(0), Path(1)],
        _ => return None,
    })
}

/// Terminal ioctls, and the network interface queries MPI runtimes make
/// (SIOCGIFCONF's buffer is checked when it is performed); each one's
/// argument is a buffer of a known size.
fn ioctl(args: &[u64; 6]) -> Result<(), i32> {
    let size = match args[1] as u32 as libc::Ioctl {
        libc::TCGETS | libc::TCSETS | libc::TCSETSW | libc::TCSETSF => TERMIOS_SIZE,
        libc::TIOCGWINSZ | libc::TIOCSWINSZ => WINSIZE_SIZE,
        libc::TIOCGPGRP | libc::FIONREAD => 4,
        libc::SIOCGIFNAME
        | libc::SIOCGIFFLAGS
        | libc::SIOCGIFADDR
        | libc::SIOCGIFBRDADDR
        | libc::SIOCGIFNETMASK
        | libc::SIOCGIFMTU
        | libc::SIOCGIFHWADDR
        | libc::SIOCGIFINDEX => IFREQ_SIZE,
        libc::SIOCGIFCONF => IFCONF_SIZE,
        _ => return Err(libc::ENOTTY),
    };
    if inside(args[2], size) {
        Ok(())
    } else {
        Err(libc::EFAULT)
    }
}

/// fcntl commands that act on the descriptor alone; not the ones that
/// would send this process signals (F_SETOWN, F_SETSIG, leases, notify).
fn fcntl(args: &[u64; 6]) -> Result<(), i32> {
    match args[1] as u32 as i32 {
        libc::F_DUPFD
        | libc::F_DUPFD_CLOEXEC
        | libc::F_GETFD
        | libc::F_SETFD
        | libc::F_GETFL
        | libc::F_SETFL
        | libc::F_GETPIPE_SZ
        | libc::F_SETPIPE_SZ
        | libc::F_ADD_SEALS
        | libc::F_GET_SEALS => Ok(()),
        libc::F_GETLK | libc::F_SETLK | libc::F_SETLKW | libc::F_OFD_GETLK | libc::F_OFD_SETLK | libc::F_OFD_SETLKW => {
            if inside(args[2], FLOCK_SIZE) {
                Ok(())
            } else {
                Err(libc::EFAULT)
            }
        }
        _ => Err(libc::EINVAL),
    }
}

/// Calls that take an iovec array at argument 1, counted by argument 2.
pub fn is_vectored(nr: u64) -> bool {
    [libc::SYS_readv, libc::SYS_writev, libc::SYS_preadv, libc::SYS_pwritev, libc::SYS_preadv2, libc::SYS_pwritev2]
        .contains(&(nr as c_long))
}

/// Whether control messages `control` pass one of `reserved` (SCM_RIGHTS).
pub fn sends_reserved_descriptor(control: &[u8], reserved: &[RawFd]) -> bool {
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

fn iovecs(args: &[u64; 6]) -> Result<(), i32> {
    let count = args[2];
    if count > IOV_MAX {
        return Err(libc::EINVAL);
    }
    if inside(args[1], count * IOVEC_SIZE) {
        Ok(())
    } else {
        Err(libc::EFAULT)
    }
}

#[cfg(test)]
// The casts of ioctl requests are no-ops with glibc, not with musl.
#[allow(clippy::unnecessary_cast)]
mod tests {
    use super::*;

    const MINE: RawFd = 1000;
    const BUF: u64 = 0x40_0000;

    fn check6(nr: c_long, args: [u64; 6]) -> Result<(), i32> {
        check(nr as u64, &args, &[MINE, 1001]).map(drop)
    }

    #[test]
    fn delegated_set() {
        let ok = [
            (libc::SYS_read, [0, BUF, 10, 0, 0, 0]),
            (libc::SYS_write, [1, BUF, 0, 0, 0, 0]),
            (libc::SYS_open, [BUF, 0, 0, 0, 0, 0]),
            (libc::SYS_close, [3, 0, 0, 0, 0, 0]),
            (libc::SYS_stat, [BUF, BUF + 0x100, 0, 0, 0, 0]),
            (libc::SYS_fstat, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_statfs, [BUF, BUF + 0x100, 0, 0, 0, 0]),
            (libc::SYS_fstatfs, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_lstat, [BUF, BUF + 0x100, 0, 0, 0, 0]),
            (libc::SYS_lseek, [3, u64::MAX, 1, 0, 0, 0]),
            (libc::SYS_ioctl, [0, libc::TCGETS as u64, BUF, 0, 0, 0]),
            (libc::SYS_pread64, [3, BUF, 100, 7, 0, 0]),
            (libc::SYS_pwrite64, [3, BUF, 100, 7, 0, 0]),
            (libc::SYS_readv, [3, BUF, 2, 0, 0, 0]),
            (libc::SYS_writev, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_access, [BUF, 4, 0, 0, 0, 0]),
            (libc::SYS_dup, [1, 0, 0, 0, 0, 0]),
            (libc::SYS_dup2, [1, 7, 0, 0, 0, 0]),
            (libc::SYS_fcntl, [3, libc::F_GETFL as u64, 0, 0, 0, 0]),
            (libc::SYS_getcwd, [BUF, 4096, 0, 0, 0, 0]),
            (libc::SYS_chdir, [BUF, 0, 0, 0, 0, 0]),
            (libc::SYS_rename, [BUF, BUF + 10, 0, 0, 0, 0]),
            (libc::SYS_mkdir, [BUF, 0o755, 0, 0, 0, 0]),
            (libc::SYS_unlink, [BUF, 0, 0, 0, 0, 0]),
            (libc::SYS_readlink, [BUF, BUF + 10, 100, 0, 0, 0]),
            (libc::SYS_getdents64, [3, BUF, 4096, 0, 0, 0]),
            (libc::SYS_openat, [libc::AT_FDCWD as u64, BUF, 0, 0, 0, 0]),
            (libc::SYS_newfstatat, [libc::AT_FDCWD as u32 as u64, BUF, BUF, 0, 0, 0]),
            (libc::SYS_faccessat, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_dup3, [1, 7, libc::O_CLOEXEC as u64, 0, 0, 0]),
            (libc::SYS_statx, [3, BUF, 0, 0, BUF, 0]),
            (libc::SYS_faccessat2, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_poll, [BUF, 3, 100, 0, 0, 0]),
            (libc::SYS_pipe, [BUF, 0, 0, 0, 0, 0]),
            (libc::SYS_socketpair, [1, 1, 0, BUF, 0, 0]),
            (libc::SYS_fsync, [3, 0, 0, 0, 0, 0]),
            (libc::SYS_fdatasync, [3, 0, 0, 0, 0, 0]),
            (libc::SYS_truncate, [BUF, 10, 0, 0, 0, 0]),
            (libc::SYS_ftruncate, [3, 10, 0, 0, 0, 0]),
            (libc::SYS_fchdir, [3, 0, 0, 0, 0, 0]),
            (libc::SYS_rmdir, [BUF, 0, 0, 0, 0, 0]),
            (libc::SYS_link, [BUF, BUF + 10, 0, 0, 0, 0]),
            (libc::SYS_symlink, [BUF, BUF + 10, 0, 0, 0, 0]),
            (libc::SYS_chmod, [BUF, 0o644, 0, 0, 0, 0]),
            (libc::SYS_fchmod, [3, 0o644, 0, 0, 0, 0]),
            (libc::SYS_umask, [0o22, 0, 0, 0, 0, 0]),
            (libc::SYS_getuid, [0; 6]),
            (libc::SYS_getgid, [0; 6]),
            (libc::SYS_geteuid, [0; 6]),
            (libc::SYS_getegid, [0; 6]),
            (libc::SYS_getgroups, [0, 0, 0, 0, 0, 0]),
            (libc::SYS_mkdirat, [3, BUF, 0o755, 0, 0, 0]),
            (libc::SYS_unlinkat, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_renameat, [3, BUF, 4, BUF + 10, 0, 0]),
            (libc::SYS_readlinkat, [3, BUF, BUF + 10, 100, 0, 0]),
            (libc::SYS_ppoll, [BUF, 2, 0, 0, 8, 0]),
            (libc::SYS_utimensat, [3, 0, 0, 0, 0, 0]),
            (libc::SYS_pipe2, [BUF, libc::O_CLOEXEC as u64, 0, 0, 0, 0]),
            (libc::SYS_renameat2, [3, BUF, 4, BUF + 10, 0, 0]),
            (libc::SYS_linkat, [3, BUF, 4, BUF + 10, 0, 0]),
            (libc::SYS_symlinkat, [BUF, 3, BUF + 10, 0, 0, 0]),
            (libc::SYS_fchmodat, [3, BUF, 0o600, 0, 0, 0]),
            (libc::SYS_select, [4, BUF, 0, 0, BUF + 64, 0]),
            (libc::SYS_socket, [1, 1, 0, 0, 0, 0]),
            (libc::SYS_connect, [3, BUF, 110, 0, 0, 0]),
            (libc::SYS_accept, [3, 0, 0, 0, 0, 0]),
            (libc::SYS_sendto, [3, BUF, 10, 0, BUF + 64, 16]),
            (libc::SYS_recvfrom, [3, BUF, 10, 0, BUF + 64, BUF + 256]),
            (libc::SYS_shutdown, [3, 1, 0, 0, 0, 0]),
            (libc::SYS_bind, [3, BUF, 110, 0, 0, 0]),
            (libc::SYS_listen, [3, 5, 0, 0, 0, 0]),
            (libc::SYS_getsockname, [3, BUF, BUF + 128, 0, 0, 0]),
            (libc::SYS_getpeername, [3, BUF, BUF + 128, 0, 0, 0]),
            (libc::SYS_setsockopt, [3, 1, 8, BUF, 4, 0]),
            (libc::SYS_getsockopt, [3, 1, 8, BUF, BUF + 8, 0]),
            (libc::SYS_epoll_wait, [3, BUF, 8, 100, 0, 0]),
            (libc::SYS_epoll_ctl, [3, 1, 4, BUF, 0, 0]),
            (libc::SYS_epoll_pwait, [3, BUF, 8, 100, 0, 8]),
            (libc::SYS_timerfd_create, [1, 0, 0, 0, 0, 0]),
            (libc::SYS_timerfd_settime, [3, 0, BUF, 0, 0, 0]),
            (libc::SYS_timerfd_gettime, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_accept4, [3, BUF, BUF + 128, 0, 0, 0]),
            (libc::SYS_eventfd2, [0, 0, 0, 0, 0, 0]),
            (libc::SYS_epoll_create, [1, 0, 0, 0, 0, 0]),
            (libc::SYS_epoll_create1, [0, 0, 0, 0, 0, 0]),
            (libc::SYS_pselect6, [4, BUF, 0, 0, BUF + 64, BUF + 128]),
            (libc::SYS_sendmsg, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_recvmsg, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_setuid, [1001, 0, 0, 0, 0, 0]),
            (libc::SYS_setgid, [1001, 0, 0, 0, 0, 0]),
            (libc::SYS_setreuid, [1001, 1001, 0, 0, 0, 0]),
            (libc::SYS_setregid, [1001, 1001, 0, 0, 0, 0]),
            (libc::SYS_setresuid, [1001, 1001, 1001, 0, 0, 0]),
            (libc::SYS_setresgid, [1001, 1001, 1001, 0, 0, 0]),
            (libc::SYS_setgroups, [2, BUF, 0, 0, 0, 0]),
            (libc::SYS_getresuid, [BUF, BUF + 4, BUF + 8, 0, 0, 0]),
            (libc::SYS_getresgid, [BUF, BUF + 4, BUF + 8, 0, 0, 0]),
            (libc::SYS_creat, [BUF, 0o644, 0, 0, 0, 0]),
            (libc::SYS_chown, [BUF, 0, 0, 0, 0, 0]),
            (libc::SYS_lchown, [BUF, 0, 0, 0, 0, 0]),
            (libc::SYS_mknod, [BUF, 0, 0, 0, 0, 0]),
            (libc::SYS_fchownat, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_mknodat, [3, BUF, 0, 0, 0, 0]),
            (libc::SYS_utime, [BUF, 0, 0, 0, 0, 0]),
            (libc::SYS_utimes, [BUF, BUF + 64, 0, 0, 0, 0]),
            (libc::SYS_futimesat, [3, 0, BUF, 0, 0, 0]),
            (libc::SYS_sync, [0; 6]),
            (libc::SYS_inotify_init, [0; 6]),
            (libc::SYS_inotify_init1, [0; 6]),
            (libc::SYS_eventfd, [0; 6]),
            (libc::SYS_fchown, [3, 0, 0, 0, 0, 0]),
            (libc::SYS_flock, [3, 2, 0, 0, 0, 0]),
            (libc::SYS_syncfs, [3, 0, 0, 0, 0, 0]),
            (libc::SYS_readahead, [3, 0, 4096, 0, 0, 0]),
            (libc::SYS_fadvise64, [3, 0, 0, 0, 0, 0]),
            (libc::SYS_fallocate, [3, 0, 0, 4096, 0, 0]),
            (libc::SYS_sync_file_range, [3, 0, 0, 0, 0, 0]),
            (libc::SYS_inotify_rm_watch, [3, 1, 0, 0, 0, 0]),
            (libc::SYS_inotify_add_watch, [3, BUF, 2, 0, 0, 0]),
            (libc::SYS_sendfile, [3, 4, BUF, 100, 0, 0]),
            (libc::SYS_tee, [3, 4, 100, 0, 0, 0]),
            (libc::SYS_splice, [3, 0, 4, BUF, 100, 0]),
            (libc::SYS_copy_file_range, [3, BUF, 4, BUF + 8, 100, 0]),
            (libc::SYS_preadv, [3, BUF, 2, 0, 0, 0]),
            (libc::SYS_pwritev, [3, BUF, 2, 0, 0, 0]),
            (libc::SYS_preadv2, [3, BUF, 2, 0, 0, 0]),
            (libc::SYS_pwritev2, [3, BUF, 2, 0, 0, 0]),
            (libc::SYS_openat2, [3, BUF, BUF + 64, 24, 0, 0]),
            (libc::SYS_setxattr, [BUF, BUF + 64, BUF + 128, 8, 0, 0]),
            (libc::SYS_lsetxattr, [BUF, BUF + 64, BUF + 128, 8, 0, 0]),
            (libc::SYS_fsetxattr, [3, BUF + 64, BUF + 128, 8, 0, 0]),
            (libc::SYS_getxattr, [BUF, BUF + 64, 0, 0, 0, 0]),
            (libc::SYS_lgetxattr, [BUF, BUF + 64, BUF + 128, 8, 0, 0]),
            (libc::SYS_fgetxattr, [3, BUF + 64, BUF + 128, 8, 0, 0]),
            (libc::SYS_listxattr, [BUF, 0, 0, 0, 0, 0]),
            (libc::SYS_llistxattr, [BUF, BUF + 128, 64, 0, 0, 0]),
            (libc::SYS_flistxattr, [3, BUF + 128, 64, 0, 0, 0]),
            (libc::SYS_removexattr, [BUF, BUF + 64, 0, 0, 0, 0]),
            (libc::SYS_lremovexattr, [BUF, BUF + 64, 0, 0, 0, 0]),
            (libc::SYS_fremovexattr, [3, BUF + 64, 0, 0, 0, 0]),
        ];
        assert_eq!(ok.len(), atoll_abi::syscalls::delegated().count());
        for (nr, args) in ok {
            assert_eq!(check6(nr, args), Ok(()), "system call {nr}");
        }
        for nr in
            [libc::SYS_mmap, libc::SYS_getpid, libc::SYS_execve, libc::SYS_kill, libc::SYS_sendmmsg, libc::SYS_setfsuid]
        {
            assert_eq!(check6(nr, [0; 6]), Err(libc::ENOSYS), "system call {nr}");
        }
        assert_eq!(check(1 << 40, &[0; 6], &[]).map(drop), Err(libc::ENOSYS));
    }

    /// The calls with rules here are the ABI's delegated list, no more, no less.
    #[test]
    fn rules_cover_exactly_the_delegated_calls() {
        let delegated: Vec<u64> = atoll_abi::syscalls::delegated().map(|(nr, _)| nr).collect();
        for nr in 0..1024u64 {
            let has_rules = rules(nr as c_long).is_some();
            assert_eq!(has_rules, delegated.contains(&nr), "system call {nr}");
        }
    }

    #[test]
    fn keeps_our_descriptors() {
        for (nr, args) in [
            (libc::SYS_close, [MINE as u64, 0, 0, 0, 0, 0]),
            (libc::SYS_dup2, [1, MINE as u64, 0, 0, 0, 0]),
            (libc::SYS_dup2, [MINE as u64, 5, 0, 0, 0, 0]),
            (libc::SYS_dup3, [1, 1001, 0, 0, 0, 0]),
            (libc::SYS_read, [MINE as u64, BUF, 1, 0, 0, 0]),
            (libc::SYS_write, [1001, BUF, 1, 0, 0, 0]),
            (libc::SYS_fcntl, [MINE as u64, libc::F_SETFL as u64, 0, 0, 0, 0]),
            (libc::SYS_ioctl, [MINE as u64, libc::TCGETS as u64, BUF, 0, 0, 0]),
            (libc::SYS_openat, [MINE as u64, BUF, 0, 0, 0, 0]),
            // Only the low 32 bits of a descriptor count, as in the kernel.
            (libc::SYS_close, [(1 << 32) | MINE as u64, 0, 0, 0, 0, 0]),
        ] {
            assert_eq!(check6(nr, args), Err(libc::EBADF), "system call {nr} {args:?}");
        }
    }

    #[test]
    fn keeps_pointers_in_the_program_area() {
        let top = USER_END;
        for (nr, args) in [
            (libc::SYS_read, [0, 0x1000, 10, 0, 0, 0]),
            (libc::SYS_read, [0, top - 5, 10, 0, 0, 0]),
            (libc::SYS_read, [0, BUF, u64::MAX, 0, 0, 0]),
            (libc::SYS_write, [1, 0x7fff_0000_0000, 1, 0, 0, 0]),
            (libc::SYS_open, [0, 0, 0, 0, 0, 0]),
            (libc::SYS_open, [top - 100, 0, 0, 0, 0, 0]),
            (libc::SYS_fstat, [3, top - 100, 0, 0, 0, 0]),
            (libc::SYS_rename, [BUF, 0x5555_5555_0000, 0, 0, 0, 0]),
            (libc::SYS_getcwd, [top - 10, 4096, 0, 0, 0, 0]),
            (libc::SYS_statx, [3, BUF, 0, 0, top - 255, 0]),
            (libc::SYS_ioctl, [0, libc::TIOCGWINSZ as u64, top - 4, 0, 0, 0]),
            (libc::SYS_readv, [0, top - 16, 2, 0, 0, 0]),
            (libc::SYS_fcntl, [3, libc::F_SETLK as u64, 8, 0, 0, 0]),
            (libc::SYS_poll, [top - 8, 2, 0, 0, 0, 0]),
            (libc::SYS_pipe, [0, 0, 0, 0, 0, 0]),
            (libc::SYS_getgroups, [10, top - 8, 0, 0, 0, 0]),
            (libc::SYS_ppoll, [BUF, 1, top - 4, 0, 0, 0]),
            (libc::SYS_utimensat, [3, top - 1, 0, 0, 0, 0]),
            (libc::SYS_select, [1024, top - 64, 0, 0, 0, 0]),
            (libc::SYS_connect, [3, top - 10, 110, 0, 0, 0]),
            (libc::SYS_getsockopt, [3, 1, 8, top - 100, BUF, 0]),
            (libc::SYS_epoll_wait, [3, top - 12, 2, 0, 0, 0]),
            (libc::SYS_recvfrom, [3, BUF, 10, 0, 0x1000, BUF]),
        ] {
            assert_eq!(check6(nr, args), Err(libc::EFAULT), "system call {nr} {args:?}");
        }
        // Nothing to touch: any pointer will do, as in the kernel.
        assert_eq!(check6(libc::SYS_read, [0, 0, 0, 0, 0, 0]), Ok(()));
        assert!(inside(USER_START, USER_END - USER_START));
        assert!(!inside(USER_START - 1, 1));
        assert!(!inside(USER_END, 1));
    }

    #[test]
    fn terminal_ioctls_only() {
        for request in [libc::TCGETS, libc::TCSETS, libc::TCSETSW, libc::TCSETSF, libc::TIOCGWINSZ, libc::TIOCSWINSZ]
            .into_iter()
            .chain([libc::TIOCGPGRP, libc::FIONREAD])
        {
            assert_eq!(check6(libc::SYS_ioctl, [0, request as u64, BUF, 0, 0, 0]), Ok(()), "{request:#x}");
        }
        for request in [libc::SIOCGIFCONF, libc::SIOCGIFFLAGS, libc::SIOCGIFINDEX, libc::SIOCGIFHWADDR] {
            assert_eq!(check6(libc::SYS_ioctl, [3, request as u64, BUF, 0, 0, 0]), Ok(()), "{request:#x}");
            assert_eq!(check6(libc::SYS_ioctl, [3, request as u64, 0x1000, 0, 0, 0]), Err(libc::EFAULT));
        }
        // Changing an interface is Linux's business, not a program's.
        for request in [libc::SIOCSIFFLAGS, libc::SIOCSIFADDR, libc::SIOCSIFMTU] {
            assert_eq!(check6(libc::SYS_ioctl, [3, request as u64, BUF, 0, 0, 0]), Err(libc::ENOTTY));
        }
        for request in [libc::TIOCSTI, libc::TIOCSCTTY, libc::FIONBIO, libc::TIOCSPGRP, 0xc0a7_0008] {
            assert_eq!(check6(libc::SYS_ioctl, [0, request as u64, BUF, 0, 0, 0]), Err(libc::ENOTTY), "{request:#x}");
        }
    }

    #[test]
    fn fcntl_commands() {
        assert_eq!(check6(libc::SYS_fcntl, [3, libc::F_DUPFD_CLOEXEC as u64, 10, 0, 0, 0]), Ok(()));
        assert_eq!(check6(libc::SYS_fcntl, [3, libc::F_OFD_SETLKW as u64, BUF, 0, 0, 0]), Ok(()));
        // 10: F_SETSIG, which the libc crate does not name.
        for cmd in [libc::F_SETOWN, 10, libc::F_SETLEASE, libc::F_NOTIFY, 12345] {
            assert_eq!(check6(libc::SYS_fcntl, [3, cmd as u64, 0, 0, 0, 0]), Err(libc::EINVAL), "{cmd}");
        }
    }

    #[test]
    fn iovec_count() {
        assert_eq!(check6(libc::SYS_writev, [1, BUF, IOV_MAX, 0, 0, 0]), Ok(()));
        assert_eq!(check6(libc::SYS_writev, [1, BUF, IOV_MAX + 1, 0, 0, 0]), Err(libc::EINVAL));
        assert_eq!(check6(libc::SYS_readv, [1, BUF, u64::MAX, 0, 0, 0]), Err(libc::EINVAL));
    }
}
