//! Linux system calls for static programs. One table says, per call, how
//! the LWK answers it locally; the calls it delegates to `atoll run` on
//! Linux are the ABI's list (`atoll_abi::DELEGATED_SYSCALLS`, which `atoll
//! run` performs). Anything else returns ENOSYS and is reported once. One
//! file per family.

mod files;
mod memory;
mod msg;
mod process;
mod signal;
mod sync;
mod system;
mod time;
mod timer;

use alloc::sync::Arc;
use hal::TrapFrame;
use lwk_logic::errno::{self, SysResult, ENOSYS};

use crate::process::signal::Finished;
use crate::process::{delegate, Process, UserThread};
use crate::sched::Thread;

/// One system call in progress.
pub struct Call<'a> {
    pub thread: &'a Thread,
    pub user: &'a UserThread,
    pub process: &'a Arc<Process>,
    pub frame: &'a mut TrapFrame,
    pub args: [u64; 6],
    /// The handler replaced every register (rt_sigreturn).
    pub replaced_registers: bool,
}

type Handler = fn(&mut Call) -> SysResult;

#[derive(Clone, Copy)]
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

/// (number, name, how) of the calls answered in the LWK.
static TABLE: &[(u64, &str, How)] = &[
    (9, "mmap", Local(memory::mmap)),
    (10, "mprotect", Local(memory::mprotect)),
    (11, "munmap", Local(memory::munmap)),
    (12, "brk", Local(memory::brk)),
    (13, "rt_sigaction", Local(signal::rt_sigaction)),
    (14, "rt_sigprocmask", Local(signal::rt_sigprocmask)),
    (15, "rt_sigreturn", Local(signal::rt_sigreturn)),
    (24, "sched_yield", Local(system::sched_yield)),
    (25, "mremap", Local(memory::mremap)),
    (28, "madvise", Local(memory::madvise)),
    (34, "pause", Local(signal::pause)),
    (35, "nanosleep", Local(time::nanosleep)),
    (36, "getitimer", Local(timer::getitimer)),
    (37, "alarm", Local(timer::alarm)),
    (38, "setitimer", Local(timer::setitimer)),
    (39, "getpid", Quick(process::getpid)),
    (56, "clone", Local(process::clone)),
    (60, "exit", Local(process::exit)),
    (62, "kill", Local(signal::kill)),
    (63, "uname", Local(system::uname)),
    (99, "sysinfo", Local(system::sysinfo)),
    (96, "gettimeofday", Quick(time::gettimeofday)),
    (110, "getppid", Quick(process::getppid)),
    (127, "rt_sigpending", Local(signal::rt_sigpending)),
    (128, "rt_sigtimedwait", Local(signal::rt_sigtimedwait)),
    (130, "rt_sigsuspend", Local(signal::rt_sigsuspend)),
    (131, "sigaltstack", Local(signal::sigaltstack)),
    (158, "arch_prctl", Local(process::arch_prctl)),
    (186, "gettid", Quick(process::gettid)),
    (200, "tkill", Local(signal::tkill)),
    (202, "futex", Local(sync::futex)),
    (203, "sched_setaffinity", Local(system::sched_setaffinity)),
    (204, "sched_getaffinity", Local(system::sched_getaffinity)),
    (218, "set_tid_address", Local(process::set_tid_address)),
    (228, "clock_gettime", Quick(time::clock_gettime)),
    (229, "clock_getres", Local(time::clock_getres)),
    (230, "clock_nanosleep", Local(time::clock_nanosleep)),
    (231, "exit_group", Local(process::exit_group)),
    (234, "tgkill", Local(signal::tgkill)),
    (273, "set_robust_list", Local(process::set_robust_list)),
    (302, "prlimit64", Local(system::prlimit64)),
    (309, "getcpu", Quick(system::getcpu)),
    (318, "getrandom", Local(system::getrandom)),
    (334, "rseq", Local(process::rseq)),
    (435, "clone3", Local(process::clone3)),
    (atoll_abi::SYS_MSG_SEND, "atoll_msg_send", Local(msg::msg_send)),
    (atoll_abi::SYS_MSG_RECV, "atoll_msg_recv", Local(msg::msg_recv)),
];

/// Both lists indexed by number, built once.
static BY_NUMBER: spin::Once<alloc::vec::Vec<Option<How>>> = spin::Once::new();

fn lookup(nr: u64) -> Option<How> {
    let index = BY_NUMBER.call_once(|| {
        let mut v = alloc::vec![None; 1024];
        let local = TABLE.iter().map(|&(n, _, how)| (n, how));
        let delegated = atoll_abi::DELEGATED_SYSCALLS.iter().map(|&(n, _)| (n, Delegated));
        for (n, how) in local.chain(delegated) {
            assert!(v[n as usize].is_none(), "system call {n} is in both lists");
            v[n as usize] = Some(how);
        }
        v
    });
    index.get(nr as usize).copied().flatten()
}

hal::syscall_handler!(dispatch);

/// The system call in `frame` (from ring 3); its result goes in rax. True
/// if every register must be restored from the frame on the way out.
fn dispatch(frame: &mut TrapFrame) -> bool {
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
        let mut replaced = false;
        let result = match how {
            Some(Quick(handler)) | Some(Local(handler)) => {
                let mut c = Call { thread, user, process, frame, args, replaced_registers: false };
                let r = handler(&mut c);
                replaced = c.replaced_registers;
                r
            }
            Some(Delegated) => files::delegate(user, nr, args),
            None => unsupported(user, nr),
        };
        frame.rax = errno::to_return(result);
        let before = (frame.rip, frame.rsp);
        crate::process::return_to_user(thread, frame, Some(Finished { nr, result }));
        // A handler to run: SYSRET is fine (it owes rcx and r11 nothing).
        replaced && before == (frame.rip, frame.rsp)
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
