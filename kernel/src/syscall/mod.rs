//! Linux system calls for static programs. One table says, per call,
//! whether the LWK answers it locally or delegates it to `atoll run` on
//! Linux; anything not in the table returns ENOSYS and is reported once.
//! One file per family.

mod files;
mod memory;
mod process;
mod signal;
mod sync;
mod system;
mod time;

use alloc::sync::Arc;
use hal::TrapFrame;
use lwk_logic::errno::{self, SysResult, ENOSYS};

use crate::process::{delegate, Process, UserThread};
use crate::sched::Thread;

/// One system call in progress.
pub struct Call<'a> {
    pub thread: &'a Thread,
    pub user: &'a UserThread,
    pub process: &'a Arc<Process>,
    pub frame: &'a mut TrapFrame,
    pub args: [u64; 6],
}

type Handler = fn(&mut Call) -> SysResult;

pub enum How {
    /// Answered in the LWK at once, with interrupts still masked (a few
    /// loads and stores: identity and clocks).
    Quick(Handler),
    /// Answered in the LWK, never leaving the enclave.
    Local(Handler),
    /// Performed by `atoll run` on Linux.
    Delegated,
}

use How::{Delegated, Local, Quick};

/// (number, name, how).
pub static TABLE: &[(u64, &str, How)] = &[
    (0, "read", Delegated),
    (1, "write", Delegated),
    (2, "open", Delegated),
    (3, "close", Delegated),
    (4, "stat", Delegated),
    (5, "fstat", Delegated),
    (6, "lstat", Delegated),
    (8, "lseek", Delegated),
    (9, "mmap", Local(memory::mmap)),
    (10, "mprotect", Local(memory::mprotect)),
    (11, "munmap", Local(memory::munmap)),
    (12, "brk", Local(memory::brk)),
    (13, "rt_sigaction", Local(signal::rt_sigaction)),
    (14, "rt_sigprocmask", Local(signal::rt_sigprocmask)),
    (16, "ioctl", Delegated),
    (17, "pread64", Delegated),
    (18, "pwrite64", Delegated),
    (19, "readv", Delegated),
    (20, "writev", Delegated),
    (21, "access", Delegated),
    (24, "sched_yield", Local(system::sched_yield)),
    (25, "mremap", Local(memory::mremap)),
    (28, "madvise", Local(memory::madvise)),
    (32, "dup", Delegated),
    (33, "dup2", Delegated),
    (35, "nanosleep", Local(time::nanosleep)),
    (39, "getpid", Quick(process::getpid)),
    (56, "clone", Local(process::clone)),
    (60, "exit", Local(process::exit)),
    (62, "kill", Local(signal::kill)),
    (63, "uname", Local(system::uname)),
    (72, "fcntl", Delegated),
    (79, "getcwd", Delegated),
    (80, "chdir", Delegated),
    (82, "rename", Delegated),
    (83, "mkdir", Delegated),
    (87, "unlink", Delegated),
    (89, "readlink", Delegated),
    (96, "gettimeofday", Quick(time::gettimeofday)),
    (110, "getppid", Quick(process::getppid)),
    (131, "sigaltstack", Local(signal::sigaltstack)),
    (158, "arch_prctl", Local(process::arch_prctl)),
    (186, "gettid", Quick(process::gettid)),
    (200, "tkill", Local(signal::tkill)),
    (202, "futex", Local(sync::futex)),
    (203, "sched_setaffinity", Local(system::sched_setaffinity)),
    (204, "sched_getaffinity", Local(system::sched_getaffinity)),
    (217, "getdents64", Delegated),
    (218, "set_tid_address", Local(process::set_tid_address)),
    (228, "clock_gettime", Quick(time::clock_gettime)),
    (229, "clock_getres", Local(time::clock_getres)),
    (230, "clock_nanosleep", Local(time::clock_nanosleep)),
    (231, "exit_group", Local(process::exit_group)),
    (234, "tgkill", Local(signal::tgkill)),
    (257, "openat", Delegated),
    (262, "newfstatat", Delegated),
    (269, "faccessat", Delegated),
    (273, "set_robust_list", Local(process::set_robust_list)),
    (292, "dup3", Delegated),
    (302, "prlimit64", Local(system::prlimit64)),
    (309, "getcpu", Quick(system::getcpu)),
    (318, "getrandom", Local(system::getrandom)),
    (332, "statx", Delegated),
    (334, "rseq", Local(process::rseq)),
    (435, "clone3", Local(process::clone3)),
    (439, "faccessat2", Delegated),
];

/// The table indexed by number, built once.
static BY_NUMBER: spin::Once<alloc::vec::Vec<Option<&'static How>>> = spin::Once::new();

fn lookup(nr: u64) -> Option<&'static How> {
    let index = BY_NUMBER.call_once(|| {
        let mut v = alloc::vec![None; 512];
        for (n, _, how) in TABLE {
            v[*n as usize] = Some(how);
        }
        v
    });
    index.get(nr as usize).copied().flatten()
}

/// Registers the system-call handler with the hardware layer.
pub fn init() {
    hal::user::set_syscall_handler(dispatch);
}

/// The system call in `frame` (from ring 3); its result goes in rax.
fn dispatch(frame: &mut TrapFrame) {
    crate::sched::with_current(|thread| {
        let Some(user) = thread.user.as_deref() else {
            panic!("system call from a kernel thread");
        };
        let process = &user.process;
        let nr = frame.rax;
        let args = [frame.rdi, frame.rsi, frame.rdx, frame.r10, frame.r8, frame.r9];
        let how = lookup(nr);
        if !matches!(how, Some(Quick(_))) {
            hal::cpu::enable_interrupts();
        }
        let ret = match how {
            Some(Quick(handler)) | Some(Local(handler)) => {
                handler(&mut Call { thread, user, process, frame, args })
            }
            Some(Delegated) => files::delegate(user, nr, args),
            None => unsupported(user, nr),
        };
        frame.rax = errno::to_return(ret);
        crate::process::kill_check(thread);
    })
}

/// Not provided: ENOSYS, and the first time `atoll run` says so.
fn unsupported(user: &UserThread, nr: u64) -> SysResult {
    if user.process.first_report(nr) {
        crate::println!(
            "program {}: system call {} is not supported: ENOSYS",
            user.process.pid,
            nr
        );
        // Only for `atoll run` to print; the answer does not matter.
        let _ = delegate::call(user, atoll_abi::CALL_UNSUPPORTED, nr, [0; 6]);
    }
    Err(ENOSYS)
}
