//! The one table of the Linux system calls a program in an enclave makes:
//! per call, how it is answered. The LWK answers the quick and local ones
//! itself (its handlers are checked against this table when it is built),
//! `atoll run` performs the delegated ones on Linux (its argument rules
//! are tested against it), and the README's table is printed from it
//! (`atoll syscalls`). A call missing here returns ENOSYS, reported once.

use crate::{SYS_HRT, SYS_HRT_DIRECT_CALL, SYS_MSG_RECV, SYS_MSG_SEND, SYS_XEMEM};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// In the LWK at once, with interrupts still masked (a few loads and
    /// stores: identity and clocks).
    Quick,
    /// In the LWK: memory, threads, scheduling, signals, time, processes.
    Local,
    /// By `atoll run` on Linux, with the program's memory mirrored:
    /// everything whose effect lives on Linux (files, pipes, sockets,
    /// waiting on descriptors, identity).
    Delegated,
    /// Refused with ENOSYS and this reason, reported once.
    Refused(&'static str),
}

use How::{Delegated, Local, Quick, Refused};

/// (number, name, how), by number.
pub const SYSCALLS: &[(u64, &str, How)] = &[
    (0, "read", Delegated),
    (1, "write", Delegated),
    (2, "open", Delegated),
    (3, "close", Delegated),
    (4, "stat", Delegated),
    (5, "fstat", Delegated),
    (6, "lstat", Delegated),
    (7, "poll", Delegated),
    (8, "lseek", Delegated),
    (9, "mmap", Local),
    (10, "mprotect", Local),
    (11, "munmap", Local),
    (12, "brk", Local),
    (13, "rt_sigaction", Local),
    (14, "rt_sigprocmask", Local),
    (15, "rt_sigreturn", Local),
    (16, "ioctl", Delegated),
    (17, "pread64", Delegated),
    (18, "pwrite64", Delegated),
    (19, "readv", Delegated),
    (20, "writev", Delegated),
    (21, "access", Delegated),
    (22, "pipe", Delegated),
    (23, "select", Delegated),
    (24, "sched_yield", Local),
    (25, "mremap", Local),
    (26, "msync", Local),
    (28, "madvise", Local),
    (29, "shmget", Local),
    (30, "shmat", Local),
    (31, "shmctl", Local),
    (32, "dup", Delegated),
    (33, "dup2", Delegated),
    (34, "pause", Local),
    (35, "nanosleep", Local),
    (36, "getitimer", Local),
    (37, "alarm", Local),
    (38, "setitimer", Local),
    (39, "getpid", Quick),
    (40, "sendfile", Delegated),
    (41, "socket", Delegated),
    (42, "connect", Delegated),
    (43, "accept", Delegated),
    (44, "sendto", Delegated),
    (45, "recvfrom", Delegated),
    (46, "sendmsg", Delegated),
    (47, "recvmsg", Delegated),
    (48, "shutdown", Delegated),
    (49, "bind", Delegated),
    (50, "listen", Delegated),
    (51, "getsockname", Delegated),
    (52, "getpeername", Delegated),
    (53, "socketpair", Delegated),
    (54, "setsockopt", Delegated),
    (55, "getsockopt", Delegated),
    (56, "clone", Local),
    (57, "fork", Local),
    (58, "vfork", Local),
    (59, "execve", Local),
    (60, "exit", Local),
    (61, "wait4", Local),
    (62, "kill", Local),
    (63, "uname", Local),
    (67, "shmdt", Local),
    (72, "fcntl", Delegated),
    (73, "flock", Delegated),
    (74, "fsync", Delegated),
    (75, "fdatasync", Delegated),
    (76, "truncate", Delegated),
    (77, "ftruncate", Delegated),
    (79, "getcwd", Delegated),
    (80, "chdir", Delegated),
    (81, "fchdir", Delegated),
    (82, "rename", Delegated),
    (83, "mkdir", Delegated),
    (84, "rmdir", Delegated),
    (85, "creat", Delegated),
    (86, "link", Delegated),
    (87, "unlink", Delegated),
    (88, "symlink", Delegated),
    (89, "readlink", Delegated),
    (90, "chmod", Delegated),
    (91, "fchmod", Delegated),
    (92, "chown", Delegated),
    (93, "fchown", Delegated),
    (94, "lchown", Delegated),
    (95, "umask", Delegated),
    (96, "gettimeofday", Quick),
    (98, "getrusage", Local),
    (99, "sysinfo", Local),
    (100, "times", Local),
    (101, "ptrace", Refused("a debugger cannot attach to a program in an enclave")),
    (102, "getuid", Delegated),
    (104, "getgid", Delegated),
    (105, "setuid", Delegated),
    (106, "setgid", Delegated),
    (107, "geteuid", Delegated),
    (108, "getegid", Delegated),
    (109, "setpgid", Local),
    (110, "getppid", Quick),
    (111, "getpgrp", Local),
    (112, "setsid", Local),
    (113, "setreuid", Delegated),
    (114, "setregid", Delegated),
    (115, "getgroups", Delegated),
    (116, "setgroups", Delegated),
    (117, "setresuid", Delegated),
    (118, "getresuid", Delegated),
    (119, "setresgid", Delegated),
    (120, "getresgid", Delegated),
    (121, "getpgid", Local),
    (124, "getsid", Local),
    (127, "rt_sigpending", Local),
    (128, "rt_sigtimedwait", Local),
    (130, "rt_sigsuspend", Local),
    (131, "sigaltstack", Local),
    (132, "utime", Delegated),
    (133, "mknod", Delegated),
    (137, "statfs", Delegated),
    (138, "fstatfs", Delegated),
    (157, "prctl", Local),
    (158, "arch_prctl", Local),
    (162, "sync", Delegated),
    (186, "gettid", Quick),
    (187, "readahead", Delegated),
    (188, "setxattr", Delegated),
    (189, "lsetxattr", Delegated),
    (190, "fsetxattr", Delegated),
    (191, "getxattr", Delegated),
    (192, "lgetxattr", Delegated),
    (193, "fgetxattr", Delegated),
    (194, "listxattr", Delegated),
    (195, "llistxattr", Delegated),
    (196, "flistxattr", Delegated),
    (197, "removexattr", Delegated),
    (198, "lremovexattr", Delegated),
    (199, "fremovexattr", Delegated),
    (200, "tkill", Local),
    (201, "time", Local),
    (202, "futex", Local),
    (203, "sched_setaffinity", Local),
    (204, "sched_getaffinity", Local),
    (213, "epoll_create", Delegated),
    (217, "getdents64", Delegated),
    (218, "set_tid_address", Local),
    (221, "fadvise64", Delegated),
    (222, "timer_create", Local),
    (223, "timer_settime", Local),
    (224, "timer_gettime", Local),
    (225, "timer_getoverrun", Local),
    (226, "timer_delete", Local),
    (228, "clock_gettime", Quick),
    (229, "clock_getres", Local),
    (230, "clock_nanosleep", Local),
    (231, "exit_group", Local),
    (232, "epoll_wait", Delegated),
    (233, "epoll_ctl", Delegated),
    (234, "tgkill", Local),
    (235, "utimes", Delegated),
    (237, "mbind", Local),
    (238, "set_mempolicy", Local),
    (239, "get_mempolicy", Local),
    (247, "waitid", Local),
    (253, "inotify_init", Delegated),
    (254, "inotify_add_watch", Delegated),
    (255, "inotify_rm_watch", Delegated),
    (257, "openat", Delegated),
    (258, "mkdirat", Delegated),
    (259, "mknodat", Delegated),
    (260, "fchownat", Delegated),
    (261, "futimesat", Delegated),
    (262, "newfstatat", Delegated),
    (263, "unlinkat", Delegated),
    (264, "renameat", Delegated),
    (265, "linkat", Delegated),
    (266, "symlinkat", Delegated),
    (267, "readlinkat", Delegated),
    (268, "fchmodat", Delegated),
    (269, "faccessat", Delegated),
    (270, "pselect6", Delegated),
    (271, "ppoll", Delegated),
    (273, "set_robust_list", Local),
    (275, "splice", Delegated),
    (276, "tee", Delegated),
    (277, "sync_file_range", Delegated),
    (280, "utimensat", Delegated),
    (281, "epoll_pwait", Delegated),
    (282, "signalfd", Refused("signals are the LWK's: a signalfd on Linux would never see them")),
    (283, "timerfd_create", Delegated),
    (284, "eventfd", Delegated),
    (285, "fallocate", Delegated),
    (286, "timerfd_settime", Delegated),
    (287, "timerfd_gettime", Delegated),
    (288, "accept4", Delegated),
    (289, "signalfd4", Refused("signals are the LWK's: a signalfd on Linux would never see them")),
    (290, "eventfd2", Delegated),
    (291, "epoll_create1", Delegated),
    (292, "dup3", Delegated),
    (293, "pipe2", Delegated),
    (294, "inotify_init1", Delegated),
    (295, "preadv", Delegated),
    (296, "pwritev", Delegated),
    (302, "prlimit64", Local),
    (306, "syncfs", Delegated),
    (309, "getcpu", Quick),
    (310, "process_vm_readv", Local),
    (311, "process_vm_writev", Local),
    (316, "renameat2", Delegated),
    (318, "getrandom", Local),
    (326, "copy_file_range", Delegated),
    (327, "preadv2", Delegated),
    (328, "pwritev2", Delegated),
    (332, "statx", Delegated),
    (334, "rseq", Local),
    (435, "clone3", Local),
    (437, "openat2", Delegated),
    (439, "faccessat2", Delegated),
    (SYS_MSG_SEND, "atoll_msg_send", Local),
    (SYS_MSG_RECV, "atoll_msg_recv", Local),
    (SYS_XEMEM, "atoll_xemem", Local),
    (SYS_HRT_DIRECT_CALL, "atoll_hrt_direct_call", Quick),
    (SYS_HRT, "atoll_hrt", Local),
];

/// How call `nr` is answered; None: not provided (ENOSYS).
pub fn how(nr: u64) -> Option<How> {
    SYSCALLS.iter().find(|&&(n, _, _)| n == nr).map(|&(_, _, how)| how)
}

/// The delegated calls (number, name).
pub fn delegated() -> impl Iterator<Item = (u64, &'static str)> {
    SYSCALLS.iter().filter(|&&(_, _, how)| how == Delegated).map(|&(n, name, _)| (n, name))
}

/// True if call `nr` is answered in the LWK (quick or local).
pub const fn is_local(nr: u64) -> bool {
    let mut i = 0;
    while i < SYSCALLS.len() {
        if SYSCALLS[i].0 == nr {
            return matches!(SYSCALLS[i].2, Quick | Local);
        }
        i += 1;
    }
    false
}

/// The number of the call named `name` (at build time: a name not in the
/// table fails the build).
pub const fn number(name: &str) -> u64 {
    let mut i = 0;
    while i < SYSCALLS.len() {
        if same(SYSCALLS[i].1.as_bytes(), name.as_bytes()) {
            return SYSCALLS[i].0;
        }
        i += 1;
    }
    panic!("no system call of that name in SYSCALLS")
}

const fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// How many calls the LWK answers itself.
pub const fn local_count() -> usize {
    let (mut i, mut n) = (0, 0);
    while i < SYSCALLS.len() {
        if matches!(SYSCALLS[i].2, Quick | Local) {
            n += 1;
        }
        i += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_by_name() {
        assert_eq!(number("read"), 0);
        assert_eq!(number("pipe2"), 293);
        assert_eq!(number("openat2"), 437);
    }

    #[test]
    fn sorted_and_unique() {
        assert!(
            SYSCALLS.windows(2).all(|w| w[0].0 < w[1].0),
            "SYSCALLS must be sorted, each number once"
        );
    }

    #[test]
    fn lookups() {
        assert_eq!(how(0), Some(Delegated));
        assert_eq!(how(39), Some(Quick));
        assert_eq!(how(9), Some(Local));
        assert!(matches!(how(101), Some(Refused(_))));
        assert_eq!(how(4095), None);
        assert!(is_local(9) && !is_local(0) && !is_local(101));
        assert!(delegated().any(|(n, name)| (n, name) == (1, "write")));
    }
}
