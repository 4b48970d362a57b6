//! Linux system calls. The ABI's table (`atoll_abi::syscalls`) says per
//! call whether the LWK answers it (quick or local: a handler here), `atoll
//! run` performs it on Linux (delegated), or it is refused; anything else
//! returns ENOSYS and is reported once. One file per family.

mod call;
mod entry;
mod file_map;
mod files;
mod hrt;
mod mapping;
mod memory;
mod msg;
mod pipe_fds;
mod pipe_io;
mod pipe_move;
mod pipes;
mod proc_maps;
mod process;
mod process_vm;
mod scratch;
mod shm;
mod signal;
mod sync;
mod system;
mod time;
mod timer;
mod usage;
mod wait;
mod write_back;
mod xemem;

use atoll_abi::syscalls::{self, How};
use hal::TrapFrame;
use lwk_logic::errno::{self, SysResult, ENOSYS};

use crate::process::signal::{Finished, RED_ZONE};
use crate::process::{delegate, UserThread};
use crate::sched::Thread;
use call::Call;

type Handler = fn(&mut Call) -> SysResult;

/// The LWK's handler for each call the ABI's table
/// (`atoll_abi::syscalls::SYSCALLS`) marks quick or local: exactly those,
/// checked when the kernel is built.
const HANDLERS: &[(u64, Handler)] = &[
    (9, memory::mmap),
    (10, memory::mprotect),
    (11, memory::munmap),
    (12, memory::brk),
    (13, signal::rt_sigaction),
    (14, signal::rt_sigprocmask),
    (15, signal::rt_sigreturn),
    (24, system::sched_yield),
    (25, memory::mremap),
    (26, write_back::msync),
    (28, memory::madvise),
    (29, shm::shmget),
    (30, shm::shmat),
    (31, shm::shmctl),
    (34, signal::pause),
    (35, time::nanosleep),
    (36, timer::getitimer),
    (37, timer::alarm),
    (38, timer::setitimer),
    (39, process::getpid),
    (56, process::clone),
    (57, process::fork),
    (58, process::vfork),
    (59, process::execve),
    (60, process::exit),
    (61, wait::wait4),
    (62, signal::kill),
    (63, system::uname),
    (67, shm::shmdt),
    (98, usage::getrusage),
    (99, system::sysinfo),
    (100, usage::times),
    (96, time::gettimeofday),
    (110, process::getppid),
    (127, signal::rt_sigpending),
    (128, signal::rt_sigtimedwait),
    (130, signal::rt_sigsuspend),
    (131, signal::sigaltstack),
    (109, process::setpgid),
    (111, process::getpgrp),
    (112, process::setsid),
    (121, process::getpgid),
    (124, process::getsid),
    (157, system::prctl),
    (158, process::arch_prctl),
    (186, process::gettid),
    (200, signal::tkill),
    (201, time::time),
    (202, sync::futex),
    (203, system::sched_setaffinity),
    (204, system::sched_getaffinity),
    (218, process::set_tid_address),
    (222, timer::timer_create),
    (223, timer::timer_settime),
    (224, timer::timer_gettime),
    (225, timer::timer_getoverrun),
    (226, timer::timer_delete),
    (228, time::clock_gettime),
    (229, time::clock_getres),
    (230, time::clock_nanosleep),
    (231, process::exit_group),
    (234, signal::tgkill),
    (237, memory::set_mempolicy), // mbind
    (238, memory::set_mempolicy),
    (239, memory::get_mempolicy),
    (247, wait::waitid),
    (273, process::set_robust_list),
    (302, system::prlimit64), // prlimit64
    (309, system::getcpu),
    (310, process_vm::process_vm_readv),
    (311, process_vm::process_vm_writev),
    (318, system::getrandom),
    (334, process::rseq),
    (435, process::clone3), // clone3
    (atoll_abi::SYS_MSG_SEND, msg::msg_send),
    (atoll_abi::SYS_MSG_RECV, msg::msg_recv),
    (atoll_abi::SYS_XEMEM, xemem::xemem),
    (atoll_abi::SYS_HRT_DIRECT_CALL, hrt::direct_call),
    (atoll_abi::SYS_HRT, hrt::hrt),
];

const _: () = assert!(handlers_match_the_table(), "HANDLERS and atoll_abi::syscalls disagree");

/// Every handler is for a quick or local call, each once, and every quick
/// or local call has one.
const fn handlers_match_the_table() -> bool {
    let mut i = 0;
    while i < HANDLERS.len() {
        let mut j = i + 1;
        while j < HANDLERS.len() {
            if HANDLERS[i].0 == HANDLERS[j].0 {
                return false;
            }
            j += 1;
        }
        if !syscalls::is_local(HANDLERS[i].0) {
            return false;
        }
        i += 1;
    }
    HANDLERS.len() == syscalls::local_count()
}

/// What the dispatcher does with a call.
#[derive(Clone, Copy)]
enum Route {
    Quick(Handler),
    Local(Handler),
    Delegated,
    Refused,
}

/// Calls by number, built once.
static BY_NUMBER: spin::Once<alloc::vec::Vec<Option<Route>>> = spin::Once::new();

fn lookup(nr: u64) -> Option<Route> {
    let index = BY_NUMBER.call_once(|| {
        let mut v = alloc::vec![None; 1024];
        let handler = |n| HANDLERS.iter().find(|&&(h, _)| h == n).map(|&(_, f)| f);
        for &(n, _, how) in syscalls::SYSCALLS {
            v[n as usize] = Some(match how {
                How::Quick => Route::Quick(handler(n).expect("checked at build")),
                How::Local => Route::Local(handler(n).expect("checked at build")),
                How::Delegated => Route::Delegated,
                How::Refused(_) => Route::Refused,
            });
        }
        v
    });
    index.get(nr as usize).copied().flatten()
}

hal::syscall_handler!(dispatch);

/// The kernel-mode programs' direct entry into the HRT API.
pub fn init() {
    hal::user::set_hrt_handlers(hal::user::HrtHandlers {
        call: hrt::direct,
        deliver: crate::process::return_current_to_user,
    });
}

/// The system call in `frame` (from ring 3); its result goes in rax. True
/// if every register must be restored from the frame on the way out.
fn dispatch(frame: &mut TrapFrame) -> bool {
    crate::sched::with_current(|thread| match thread.user.as_deref() {
        Some(user) => user.system_call(thread, frame),
        None => panic!("system call from a kernel thread"),
    })
}

/// The system call in `frame` of `user`, the running thread's user part.
fn handle(thread: &Thread, user: &UserThread, frame: &mut TrapFrame) -> bool {
    let process = &user.process;
    user.cpu_time.enter_kernel();
    let nr = frame.rax;
    let args = [frame.rdi, frame.rsi, frame.rdx, frame.r10, frame.r8, frame.r9];
    let route = lookup(nr);
    if !matches!(route, Some(Route::Quick(_))) {
        hal::cpu::enable_interrupts();
        // A buffer on the stack may have no memory yet: `atoll run`
        // (a delegated call) and direct copies reach only what has.
        process.grow_stack(frame.rsp.saturating_sub(RED_ZONE));
    }
    let mut replaced = false;
    let result = match route {
        Some(Route::Quick(handler)) | Some(Route::Local(handler)) => {
            let mut c = Call { thread, user, process, frame, args, replaced_registers: false };
            let r = handler(&mut c);
            replaced = c.replaced_registers;
            r
        }
        Some(Route::Delegated) => {
            let mut c = Call { thread, user, process, frame, args, replaced_registers: false };
            proc_maps::open(&mut c, nr)
                .or_else(|| pipes::call(&mut c, nr))
                .unwrap_or_else(|| files::delegate(user, nr, args))
        }
        Some(Route::Refused) | None => unsupported(user, nr),
    };
    frame.rax = errno::to_return(result);
    let before = (frame.rip, frame.rsp);
    crate::process::return_to_user(user, frame, Some(Finished { nr, result }));
    user.cpu_time.leave_kernel();
    // A handler to run: SYSRET is fine (it owes rcx and r11 nothing).
    replaced && before == (frame.rip, frame.rsp)
}

/// Not provided: ENOSYS, and the first time `atoll run` says so.
fn unsupported(user: &UserThread, nr: u64) -> SysResult {
    if user.process.first_report(nr) {
        hal::println!("program {}: system call {} is not supported: ENOSYS", user.process.pid, nr);
        // Only for `atoll run` to print; the answer does not matter.
        let _ = delegate::call(user, atoll_abi::CALL_UNSUPPORTED, nr, [0; 6]);
    }
    Err(ENOSYS)
}
