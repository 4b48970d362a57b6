//! Identity, threads, processes and ending: getpid, gettid, getppid, clone,
//! clone3, fork, vfork, set_tid_address, set_robust_list, arch_prctl,
//! exit, exit_group, rseq.

use core::sync::atomic::Ordering;

use lwk_logic::errno::*;

use super::call::Call;
use crate::mm::uaccess;
use crate::process::{self, deferred_server, family};

const CLONE_VM: u64 = 0x100;
const CLONE_FS: u64 = 0x200;
const CLONE_FILES: u64 = 0x400;
const CLONE_SIGHAND: u64 = 0x800;
const CLONE_THREAD: u64 = 0x10000;
const CLONE_SYSVSEM: u64 = 0x40000;
const CLONE_SETTLS: u64 = 0x80000;
const CLONE_PARENT_SETTID: u64 = 0x100000;
const CLONE_CHILD_CLEARTID: u64 = 0x200000;
const CLONE_DETACHED: u64 = 0x400000;
const CLONE_CHILD_SETTID: u64 = 0x1000000;
const THREAD_FLAGS: u64 = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
const SUPPORTED: u64 = THREAD_FLAGS
    | CLONE_FS
    | CLONE_FILES
    | CLONE_SYSVSEM
    | CLONE_SETTLS
    | CLONE_PARENT_SETTID
    | CLONE_CHILD_CLEARTID
    | CLONE_DETACHED
    | CLONE_CHILD_SETTID;

const CLONE_VFORK: u64 = 0x4000;
/// Flags a process-making clone may have (fork, vfork, posix_spawn's).
const PROCESS_FLAGS: u64 =
    0xff | CLONE_VM | CLONE_VFORK | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID;

const ARCH_SET_FS: u64 = 0x1002;
const ARCH_GET_FS: u64 = 0x1003;

pub fn getpid(c: &mut Call) -> SysResult {
    Ok(c.process.pid.into())
}

pub fn gettid(c: &mut Call) -> SysResult {
    Ok(c.user.tid.into())
}

/// The parent that forked it while that lives; else 1, as on Linux (a
/// program `atoll run` started has its parent on Linux).
pub fn getppid(c: &mut Call) -> SysResult {
    Ok(c.process.family.ppid().into())
}

/// setpgid(pid, pgid).
pub fn setpgid(c: &mut Call) -> SysResult {
    let [pid, pgid, ..] = c.args;
    if (pgid as i64 as i32) < 0 || (pid as i64 as i32) < 0 {
        return Err(EINVAL);
    }
    family::setpgid(c.process, pid as u32, pgid as u32).map(|()| 0)
}

/// `of(process)` for the caller (pid 0 or its own) or another program of
/// the enclave.
fn of_program(c: &Call, pid: u64, of: impl Fn(&process::Process) -> u32) -> SysResult {
    match pid as u32 {
        0 => Ok(of(c.process).into()),
        p if p == c.process.pid => Ok(of(c.process).into()),
        p => Ok(of(&*process::programs::find(p).ok_or(ESRCH)?).into()),
    }
}

pub fn getpgid(c: &mut Call) -> SysResult {
    of_program(c, c.args[0], |p| p.family.pgid())
}

pub fn getpgrp(c: &mut Call) -> SysResult {
    Ok(c.process.family.pgid().into())
}

pub fn getsid(c: &mut Call) -> SysResult {
    of_program(c, c.args[0], |p| p.family.sid())
}

pub fn setsid(c: &mut Call) -> SysResult {
    family::setsid(c.process).map(u64::from)
}

/// fork(): a child process with a copy of this one's memory.
pub fn fork(c: &mut Call) -> SysResult {
    const SIGCHLD: u64 = 17;
    process::fork::fork(c.process, c.user, c.frame, SIGCHLD, 0, 0).map(u64::from)
}

/// execve(path, argv, envp): a new program in this process.
pub fn execve(c: &mut Call) -> SysResult {
    super::write_back::all(c);
    let r = process::exec::execve(c.process, c.user, c.thread, c.frame, c.args);
    if r.is_ok() {
        c.replaced_registers = true;
        super::pipe_fds::after_exec(c);
    }
    r
}

/// vfork(): as fork, and the parent waits until the child is done.
pub fn vfork(c: &mut Call) -> SysResult {
    const SIGCHLD: u64 = 17;
    process::fork::fork(c.process, c.user, c.frame, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0)
        .map(u64::from)
}

/// Ends the calling thread; the program's status is the last thread's.
pub fn exit(c: &mut Call) -> SysResult {
    if c.process.thread_count() == 1 {
        // Its children's servers come from its own, which ends with it.
        deferred_server::serve_children(c.user);
        super::write_back::all(c);
        c.process.begin_exit(((c.args[0] & 0xff) as u32) << 8);
    }
    process::exit_current_thread()
}

pub fn exit_group(c: &mut Call) -> SysResult {
    deferred_server::serve_children(c.user);
    super::write_back::all(c);
    c.process.begin_exit(((c.args[0] & 0xff) as u32) << 8);
    process::exit_current_thread()
}

/// A new thread of this program, or a new process (no CLONE_THREAD).
fn new_thread(
    c: &mut Call,
    flags: u64,
    stack: u64,
    parent_tid: u64,
    child_tid: u64,
    tls: u64,
) -> SysResult {
    if flags & CLONE_THREAD == 0 && flags & !PROCESS_FLAGS == 0 {
        let pid = process::fork::fork(c.process, c.user, c.frame, flags, stack, child_tid)?;
        if flags & CLONE_PARENT_SETTID != 0 {
            uaccess::write_u32(c.process, parent_tid, pid)?;
        }
        return Ok(pid.into());
    }
    if flags & THREAD_FLAGS != THREAD_FLAGS || flags & !SUPPORTED & !0xff != 0 {
        hal::println!(
            "program {}: clone flags {:#x} (a new process) are not supported",
            c.process.pid,
            flags
        );
        return Err(ENOSYS);
    }
    let mut frame = *c.frame;
    frame.rax = 0;
    if stack != 0 {
        frame.rsp = stack;
    }
    let fs = if flags & CLONE_SETTLS != 0 { tls } else { c.user.cpu_state.fs_base() };
    // The tid words are written before the thread can run, as Linux does.
    let tid = process::new_tid();
    for (flag, at) in [(CLONE_PARENT_SETTID, parent_tid), (CLONE_CHILD_SETTID, child_tid)] {
        if flags & flag != 0 {
            uaccess::write_u32(c.process, at, tid)?;
        }
    }
    let clear = if flags & CLONE_CHILD_CLEARTID != 0 { child_tid } else { 0 };
    let mask = c.user.signal_mask.load(Ordering::Acquire);
    process::spawn_user_thread(c.process, frame, fs, clear, tid, mask, [0; 3])?;
    Ok(tid.into())
}

/// clone(flags, stack, parent_tid, child_tid, tls) (x86-64 order).
pub fn clone(c: &mut Call) -> SysResult {
    let [flags, stack, parent_tid, child_tid, tls, _] = c.args;
    new_thread(c, flags, stack, parent_tid, child_tid, tls)
}

/// clone3(struct clone_args *, size).
pub fn clone3(c: &mut Call) -> SysResult {
    let [args, size, ..] = c.args;
    if size < 64 {
        return Err(EINVAL);
    }
    // flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls
    let a: [u64; 8] = uaccess::read_words(c.process, args)?;
    let stack = if a[5] != 0 { a[5] + a[6] } else { 0 };
    new_thread(c, a[0], stack, a[3], a[2], a[7])
}

pub fn set_tid_address(c: &mut Call) -> SysResult {
    c.user.clear_child_tid.store(c.args[0], Ordering::Relaxed);
    Ok(c.user.tid.into())
}

/// Kept for the record: robust futexes matter only when a thread dies
/// holding a robust mutex, and a dying thread here ends the program.
pub fn set_robust_list(c: &mut Call) -> SysResult {
    if c.args[1] != 24 {
        return Err(EINVAL);
    }
    c.user.robust_list.store(c.args[0], Ordering::Relaxed);
    Ok(0)
}

pub fn arch_prctl(c: &mut Call) -> SysResult {
    match c.args[0] {
        ARCH_SET_FS => {
            if c.args[1] >= 0x0000_8000_0000_0000 {
                return Err(EPERM);
            }
            c.user.cpu_state.set_fs_base(c.args[1]);
            Ok(0)
        }
        ARCH_GET_FS => {
            uaccess::write_u64(c.process, c.args[1], c.user.cpu_state.fs_base()).map(|()| 0)
        }
        _ => Err(EINVAL),
    }
}

/// Restartable sequences are not provided; glibc and musl check for that
/// and carry on, so this is not reported as unsupported.
pub fn rseq(_c: &mut Call) -> SysResult {
    Err(ENOSYS)
}
