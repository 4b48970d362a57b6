//! x86-64 Linux system call names by number, for messages about calls the
//! LWK does not support. Numbers 0-334 and 424-462 (Linux 6.10); others have
//! no name here.

/// The first number of the second block: from 424 on every architecture uses
/// the same numbers, and x86-64 left 335-423 unused (up to Linux 6.10).
const HIGH_FIRST: u64 = 424;

#[rustfmt::skip]
const LOW: [&str; 335] = [
    /*   0 */ "read", "write", "open", "close", "stat", "fstat",
    /*   6 */ "lstat", "poll", "lseek", "mmap", "mprotect", "munmap",
    /*  12 */ "brk", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "ioctl", "pread64",
    /*  18 */ "pwrite64", "readv", "writev", "access", "pipe", "select",
    /*  24 */ "sched_yield", "mremap", "msync", "mincore", "madvise", "shmget",
    /*  30 */ "shmat", "shmctl", "dup", "dup2", "pause", "nanosleep",
    /*  36 */ "getitimer", "alarm", "setitimer", "getpid", "sendfile", "socket",
    /*  42 */ "connect", "accept", "sendto", "recvfrom", "sendmsg", "recvmsg",
    /*  48 */ "shutdown", "bind", "listen", "getsockname", "getpeername", "socketpair",
    /*  54 */ "setsockopt", "getsockopt", "clone", "fork", "vfork", "execve",
    /*  60 */ "exit", "wait4", "kill", "uname", "semget", "semop",
    /*  66 */ "semctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl",
    /*  72 */ "fcntl", "flock", "fsync", "fdatasync", "truncate", "ftruncate",
    /*  78 */ "getdents", "getcwd", "chdir", "fchdir", "rename", "mkdir",
    /*  84 */ "rmdir", "creat", "link", "unlink", "symlink", "readlink",
    /*  90 */ "chmod", "fchmod", "chown", "fchown", "lchown", "umask",
    /*  96 */ "gettimeofday", "getrlimit", "getrusage", "sysinfo", "times", "ptrace",
    /* 102 */ "getuid", "syslog", "getgid", "setuid", "setgid", "geteuid",
    /* 108 */ "getegid", "setpgid", "getppid", "getpgrp", "setsid", "setreuid",
    /* 114 */ "setregid", "getgroups", "setgroups", "setresuid", "getresuid", "setresgid",
    /* 120 */ "getresgid", "getpgid", "setfsuid", "setfsgid", "getsid", "capget",
    /* 126 */ "capset", "rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo", "rt_sigsuspend", "sigaltstack",
    /* 132 */ "utime", "mknod", "uselib", "personality", "ustat", "statfs",
    /* 138 */ "fstatfs", "sysfs", "getpriority", "setpriority", "sched_setparam", "sched_getparam",
    /* 144 */ "sched_setscheduler", "sched_getscheduler", "sched_get_priority_max", "sched_get_priority_min", "sched_rr_get_interval", "mlock",
    /* 150 */ "munlock", "mlockall", "munlockall", "vhangup", "modify_ldt", "pivot_root",
    /* 156 */ "_sysctl", "prctl", "arch_prctl", "adjtimex", "setrlimit", "chroot",
    /* 162 */ "sync", "acct", "settimeofday", "mount", "umount2", "swapon",
    /* 168 */ "swapoff", "reboot", "sethostname", "setdomainname", "iopl", "ioperm",
    /* 174 */ "create_module", "init_module", "delete_module", "get_kernel_syms", "query_module", "quotactl",
    /* 180 */ "nfsservctl", "getpmsg", "putpmsg", "afs_syscall", "tuxcall", "security",
    /* 186 */ "gettid", "readahead", "setxattr", "lsetxattr", "fsetxattr", "getxattr",
    /* 192 */ "lgetxattr", "fgetxattr", "listxattr", "llistxattr", "flistxattr", "removexattr",
    /* 198 */ "lremovexattr", "fremovexattr", "tkill", "time", "futex", "sched_setaffinity",
    /* 204 */ "sched_getaffinity", "set_thread_area", "io_setup", "io_destroy", "io_getevents", "io_submit",
    /* 210 */ "io_cancel", "get_thread_area", "lookup_dcookie", "epoll_create", "epoll_ctl_old", "epoll_wait_old",
    /* 216 */ "remap_file_pages", "getdents64", "set_tid_address", "restart_syscall", "semtimedop", "fadvise64",
    /* 222 */ "timer_create", "timer_settime", "timer_gettime", "timer_getoverrun", "timer_delete", "clock_settime",
    /* 228 */ "clock_gettime", "clock_getres", "clock_nanosleep", "exit_group", "epoll_wait", "epoll_ctl",
    /* 234 */ "tgkill", "utimes", "vserver", "mbind", "set_mempolicy", "get_mempolicy",
    /* 240 */ "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    /* 246 */ "kexec_load", "waitid", "add_key", "request_key", "keyctl", "ioprio_set",
    /* 252 */ "ioprio_get", "inotify_init", "inotify_add_watch", "inotify_rm_watch", "migrate_pages", "openat",
    /* 258 */ "mkdirat", "mknodat", "fchownat", "futimesat", "newfstatat", "unlinkat",
    /* 264 */ "renameat", "linkat", "symlinkat", "readlinkat", "fchmodat", "faccessat",
    /* 270 */ "pselect6", "ppoll", "unshare", "set_robust_list", "get_robust_list", "splice",
    /* 276 */ "tee", "sync_file_range", "vmsplice", "move_pages", "utimensat", "epoll_pwait",
    /* 282 */ "signalfd", "timerfd_create", "eventfd", "fallocate", "timerfd_settime", "timerfd_gettime",
    /* 288 */ "accept4", "signalfd4", "eventfd2", "epoll_create1", "dup3", "pipe2",
    /* 294 */ "inotify_init1", "preadv", "pwritev", "rt_tgsigqueueinfo", "perf_event_open", "recvmmsg",
    /* 300 */ "fanotify_init", "fanotify_mark", "prlimit64", "name_to_handle_at", "open_by_handle_at", "clock_adjtime",
    /* 306 */ "syncfs", "sendmmsg", "setns", "getcpu", "process_vm_readv", "process_vm_writev",
    /* 312 */ "kcmp", "finit_module", "sched_setattr", "sched_getattr", "renameat2", "seccomp",
    /* 318 */ "getrandom", "memfd_create", "kexec_file_load", "bpf", "execveat", "userfaultfd",
    /* 324 */ "membarrier", "mlock2", "copy_file_range", "preadv2", "pwritev2", "pkey_mprotect",
    /* 330 */ "pkey_alloc", "pkey_free", "statx", "io_pgetevents", "rseq",
];

#[rustfmt::skip]
const HIGH: [&str; 39] = [
    /* 424 */ "pidfd_send_signal", "io_uring_setup", "io_uring_enter", "io_uring_register", "open_tree", "move_mount",
    /* 430 */ "fsopen", "fsconfig", "fsmount", "fspick", "pidfd_open", "clone3",
    /* 436 */ "close_range", "openat2", "pidfd_getfd", "faccessat2", "process_madvise", "epoll_pwait2",
    /* 442 */ "mount_setattr", "quotactl_fd", "landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self", "memfd_secret",
    /* 448 */ "process_mrelease", "futex_waitv", "set_mempolicy_home_node", "cachestat", "fchmodat2", "map_shadow_stack",
    /* 454 */ "futex_wake", "futex_wait", "futex_requeue", "statmount", "listmount", "lsm_get_self_attr",
    /* 460 */ "lsm_set_self_attr", "lsm_list_modules", "mseal",
];

/// The name of x86-64 system call `nr`, if it is in the table.
pub fn name(nr: u64) -> Option<&'static str> {
    if nr < LOW.len() as u64 {
        Some(LOW[nr as usize])
    } else {
        nr.checked_sub(HIGH_FIRST).and_then(|i| HIGH.get(i as usize)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_libc_numbers() {
        let known = [
            (libc::SYS_read, "read"),
            (libc::SYS_write, "write"),
            (libc::SYS_mmap, "mmap"),
            (libc::SYS_getpid, "getpid"),
            (libc::SYS_clone, "clone"),
            (libc::SYS_fork, "fork"),
            (libc::SYS_execve, "execve"),
            (libc::SYS_exit, "exit"),
            (libc::SYS_getdents64, "getdents64"),
            (libc::SYS_nfsservctl, "nfsservctl"),
            (libc::SYS_exit_group, "exit_group"),
            (libc::SYS_openat, "openat"),
            (libc::SYS_newfstatat, "newfstatat"),
            (libc::SYS_pkey_free, "pkey_free"),
            (libc::SYS_statx, "statx"),
            (libc::SYS_rseq, "rseq"),
            (libc::SYS_pidfd_send_signal, "pidfd_send_signal"),
            (libc::SYS_clone3, "clone3"),
            (libc::SYS_faccessat2, "faccessat2"),
            (libc::SYS_set_mempolicy_home_node, "set_mempolicy_home_node"),
            (libc::SYS_fchmodat2, "fchmodat2"),
            (libc::SYS_mseal, "mseal"),
        ];
        for (nr, expected) in known {
            assert_eq!(name(nr as u64), Some(expected), "system call {nr}");
        }
        assert_eq!(name(174), Some("create_module"));
        assert_eq!(name(333), Some("io_pgetevents"));
        assert_eq!(name(451), Some("cachestat"));
    }

    #[test]
    fn every_listed_number_has_a_name() {
        for nr in (0..=334).chain(424..=462) {
            let n = name(nr).unwrap_or_else(|| panic!("no name for {nr}"));
            assert!(!n.is_empty() && n.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
        }
        for nr in [335, 400, 423, 463, 1000, u64::MAX] {
            assert_eq!(name(nr), None, "{nr}");
        }
    }
}
