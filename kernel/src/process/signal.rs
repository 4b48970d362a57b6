//! Signals: sending them to a process or one of its threads, waiting
//! while none comes, and delivery on the way back to user mode: a handler
//! runs on a Linux x86-64 rt_sigframe (siginfo, ucontext with every
//! register, the signal mask and the FPU state), which rt_sigreturn reads
//! back. What a signal leaves pending is sigstate.rs's.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use super::itimer::Target;
use super::sigstate::UNBLOCKABLE;
use super::sigstate::{bit, default_ignores, SigInfo, SIGKILL, SIGSEGV, SIG_DFL, SIG_IGN};
use super::types::{Process, UserThread};
use crate::mm::uaccess;
use crate::sched;
use hal::paging::is_user_address;
use hal::user::{FpuImage, FPU_STATE_SIZE};
use hal::TrapFrame;
use lwk_logic::errno::*;

const SA_SIGINFO: u64 = 4;
const SA_ONSTACK: u64 = 0x0800_0000;
const SA_RESTORER: u64 = 0x0400_0000;
const SA_RESTART: u64 = 0x1000_0000;
const SA_NODEFER: u64 = 0x4000_0000;
const SA_RESETHAND: u64 = 0x8000_0000;
const SS_ONSTACK: u64 = 1;
const SS_DISABLE: u64 = 2;

/// True if `sig` would be thrown away on arrival (ignored, explicitly or by
/// default); such a signal is never made pending.
fn discarded(p: &Process, sig: u32) -> bool {
    let handler = p.actions.lock().0[sig as usize][0];
    handler == SIG_IGN || (handler == SIG_DFL && default_ignores(sig))
}

/// Sends `info` to the process: one of its threads that does not block it
/// takes it. SIGKILL ends the process at once.
pub fn send_to_process(p: &Arc<Process>, info: SigInfo) {
    if info.signo == SIGKILL {
        p.begin_exit(SIGKILL);
        return;
    }
    if discarded(p, info.signo) {
        return;
    }
    p.shared_pending.add(info);
    let unblocked = |t: &&Arc<crate::sched::Thread>| {
        UserThread::of(t)
            .is_some_and(|u| u.signal_mask.load(Ordering::Acquire) & bit(info.signo) == 0)
    };
    let taker = p.threads.lock().iter().find(unblocked).cloned();
    // If every thread blocks it, it waits until one unblocks it.
    if let Some(t) = taker {
        sched::kick(&t);
    }
}

/// Sends `info` to thread `tid` of the process (tkill, tgkill, timers);
/// signal 0 only asks whether the thread exists.
pub fn send_to_thread(p: &Arc<Process>, tid: u32, info: SigInfo) -> Result<(), Errno> {
    let t = p
        .threads
        .lock()
        .iter()
        .find(|t| UserThread::of(t).is_some_and(|u| u.tid == tid))
        .cloned()
        .ok_or(ESRCH)?;
    if info.signo == 0 {
        return Ok(());
    }
    if info.signo == SIGKILL {
        p.begin_exit(SIGKILL);
        return Ok(());
    }
    if !discarded(p, info.signo) {
        UserThread::of(&t).expect("a user thread").pending.add(info);
        sched::kick(&t);
    }
    Ok(())
}

/// Signals pending for the thread (its own and its process's).
pub fn pending_set(u: &UserThread) -> u64 {
    u.pending.set() | u.process.shared_pending.set()
}

/// Signals pending for a timer's target: the process, or one thread.
pub fn pending_set_of(p: &Process, target: Target) -> u64 {
    match target {
        Target::Thread(tid) => p
            .threads
            .lock()
            .iter()
            .find_map(|t| UserThread::of(t).filter(|u| u.tid == tid).map(|u| u.pending.set()))
            .unwrap_or(0),
        _ => p.shared_pending.set(),
    }
}

/// True if a signal the thread does not block is pending: a blocking
/// call it makes ends early.
pub fn has_deliverable(u: &UserThread) -> bool {
    pending_set(u) & !u.signal_mask.load(Ordering::Acquire) != 0
}

/// A blocking call should end: the program is ending or a signal came.
pub fn interrupted(u: &UserThread) -> bool {
    u.must_leave() || has_deliverable(u)
}

/// Blocks the calling thread while `waiting()` holds, until the TSC
/// deadline if there is one. A sender makes its signal pending, then wakes
/// the thread; looking again after marking the thread blocked catches one
/// that came in between.
pub fn sleep_while(deadline: Option<u64>, waiting: impl Fn() -> bool) {
    while waiting() && deadline.is_none_or(|d| hal::cpu::rdtsc() < d) {
        let me = sched::current();
        me.mark_blocked();
        if !waiting() {
            sched::wake(&me, true);
            drop(me);
            sched::schedule();
            break;
        }
        drop(me);
        sched::timer::block_until(deadline);
    }
}

/// Takes the next signal in `allowed`: the thread's own first.
pub fn take(u: &UserThread, allowed: u64) -> Option<SigInfo> {
    u.pending.take(allowed).or_else(|| u.process.shared_pending.take(allowed))
}

/// The mask to restore after the handler, when it is not the current one
/// (sigsuspend and pselect-style calls replace the mask while they wait).
pub fn set_saved_mask(u: &UserThread, mask: u64) {
    *u.saved_mask.lock() = Some(mask);
}

/// A system call's number and result, for delivery right after it.
pub struct Finished {
    pub nr: u64,
    pub result: SysResult,
}

/// On the way back to user mode with `frame`: delivers pending signals.
/// `call` is the system call just made, if any (restarts and EINTR depend
/// on it). A signal that ends the program makes it begin its exit.
pub fn deliver(u: &UserThread, frame: &mut TrapFrame, call: Option<Finished>) {
    if !has_deliverable(u) && call.as_ref().is_none_or(|c| !restartable(c.result)) {
        return;
    }
    let mut restart = call.filter(|c| restartable(c.result));
    let mut handled = false;
    while let Some(info) = take(u, !u.signal_mask.load(Ordering::Acquire)) {
        let action = u.process.actions.lock().0[info.signo as usize];
        let handler = action[0];
        if handler == SIG_IGN || (handler == SIG_DFL && default_ignores(info.signo)) {
            continue;
        }
        if handler == SIG_DFL {
            u.process.begin_exit(info.signo);
            return;
        }
        if let Some(c) = restart.take() {
            if c.result == Err(ERESTARTSYS) && action[1] & SA_RESTART != 0 {
                restart_call(frame, c.nr);
            } else {
                frame.rax = EINTR.to_return();
            }
        }
        if run_handler(u, frame, info, action).is_err() {
            // No room for the frame, or no way back: Linux's answer too.
            u.process.begin_exit(SIGSEGV);
        }
        handled = true;
        break;
    }
    // A call interrupted by a signal no handler took runs again.
    if let Some(c) = restart {
        restart_call(frame, c.nr);
    }
    // sigsuspend's mask lasts until a handler runs (then its frame has the
    // saved one, which rt_sigreturn restores).
    let saved = u.saved_mask.lock().take();
    if let (Some(mask), false) = (saved, handled) {
        u.signal_mask.store(mask, Ordering::Release);
    }
}

fn restartable(result: SysResult) -> bool {
    result == Err(ERESTARTSYS) || result == Err(ERESTARTNOHAND)
}

/// Re-executes system call `nr` (SYSCALL is two bytes; the arguments are
/// still in their registers). A kernel-mode program's direct call is made
/// again as if just called: its return address back on top of its stack,
/// the kernel's entry next.
fn restart_call(frame: &mut TrapFrame, nr: u64) {
    frame.rax = nr;
    if frame.vector == hal::user::DIRECT_CALL_MARK {
        frame.rsp -= 8;
        frame.rip = hal::user::direct_call_entry();
    } else {
        frame.rip -= 2;
    }
}

// The frame: ucontext (uc_flags, uc_link, uc_stack: 3 words, the 256-byte
// sigcontext, uc_sigmask), siginfo, and below the return address.
const UC_MCONTEXT: u64 = 40;
const UC_SIGMASK: u64 = UC_MCONTEXT + 256;
const UCONTEXT_SIZE: u64 = UC_SIGMASK + 8;
const FRAME_SIZE: u64 = 8 + UCONTEXT_SIZE + 128;
/// sigcontext words after the 18 registers: cs/gs/fs/ss, err, trapno,
/// oldmask, cr2, fpstate.
const SC_FPSTATE: usize = 24;
pub const RED_ZONE: u64 = 128;

/// The registers in sigcontext order (r8..r15, rdi, rsi, rbp, rbx, rdx,
/// rax, rcx, rsp, rip, eflags).
fn registers(f: &TrapFrame) -> [u64; 18] {
    [
        f.r8, f.r9, f.r10, f.r11, f.r12, f.r13, f.r14, f.r15, f.rdi, f.rsi, f.rbp, f.rbx, f.rdx,
        f.rax, f.rcx, f.rsp, f.rip, f.rflags,
    ]
}

fn set_registers(f: &mut TrapFrame, r: &[u64]) {
    [f.r8, f.r9, f.r10, f.r11, f.r12, f.r13, f.r14, f.r15] = r[0..8].try_into().unwrap();
    [f.rdi, f.rsi, f.rbp, f.rbx, f.rdx, f.rax, f.rcx, f.rsp, f.rip] = r[8..17].try_into().unwrap();
    // Only the flags a program may change (Linux's FIX_EFLAGS).
    const USER_FLAGS: u64 = 0x0005_0dd5;
    f.rflags = (f.rflags & !USER_FLAGS) | (r[17] & USER_FLAGS);
}

fn run_handler(
    u: &UserThread,
    frame: &mut TrapFrame,
    info: SigInfo,
    action: [u64; 4],
) -> Result<(), Errno> {
    let [handler, flags, restorer, mask] = action;
    if flags & SA_RESTORER == 0 || !is_user_address(handler) || !is_user_address(restorer) {
        return Err(EFAULT);
    }
    let p = &u.process;
    let [ss_sp, ss_flags, ss_size] = *u.altstack.lock();
    let on_altstack = ss_size != 0 && frame.rsp.wrapping_sub(ss_sp) < ss_size;
    let mut sp =
        if flags & SA_ONSTACK != 0 && ss_flags & SS_DISABLE == 0 && ss_size != 0 && !on_altstack {
            ss_sp + ss_size
        } else {
            frame.rsp - RED_ZONE
        };
    // The FPU state, 64-byte aligned, then the frame, so that the handler
    // starts as if called: (rsp + 8) a multiple of 16.
    sp = (sp - FPU_STATE_SIZE as u64) & !63;
    let fpstate = sp;
    sp = ((sp - FRAME_SIZE) & !15) - 8;

    let old_mask = u.saved_mask.lock().unwrap_or(u.signal_mask.load(Ordering::Acquire));
    let uc = sp + 8;
    let stack_flags = if ss_size == 0 {
        SS_DISABLE
    } else if on_altstack {
        SS_ONSTACK
    } else {
        0
    };
    let mut sc = [0u64; 32];
    sc[..18].copy_from_slice(&registers(frame));
    sc[18] = frame.ss << 48 | frame.cs; // cs, gs, fs, ss: the mode it ran in
    sc[19] = frame.error_code;
    sc[20] = frame.vector;
    sc[21] = old_mask;
    sc[22] = info.addr.unwrap_or(0);
    sc[SC_FPSTATE] = fpstate;
    // The frame by words from sp up: the return address, the ucontext
    // (flags, link, stack, sigcontext, mask), the siginfo.
    let mut words = [0u64; FRAME_SIZE as usize / 8];
    words[..6].copy_from_slice(&[restorer, 0, 0, ss_sp, stack_flags, ss_size]);
    let at = |offset: u64| ((uc + offset - sp) / 8) as usize;
    words[at(UC_MCONTEXT)..at(UC_SIGMASK)].copy_from_slice(&sc);
    words[at(UC_SIGMASK)] = old_mask;
    let siginfo = uc + UCONTEXT_SIZE;
    for (w, b) in words[at(UCONTEXT_SIZE)..].iter_mut().zip(info.to_bytes().chunks_exact(8)) {
        *w = u64::from_le_bytes(b.try_into().expect("8 bytes"));
    }
    // The frame and the FPU state written in place under one lock (few
    // large copies: each copy costs much under emulation).
    let fpu_len = FPU_STATE_SIZE as u64;
    uaccess::with_writable(p, sp, fpstate + fpu_len - sp, |span| {
        span.write(sp, words.map(u64::to_le_bytes).as_flattened());
        if !span.save_fpu(fpstate) {
            span.write(fpstate, &hal::user::save_fpu());
        }
    })?;

    frame.rip = handler;
    frame.rsp = sp;
    frame.rdi = info.signo.into();
    frame.rsi = if flags & SA_SIGINFO != 0 { siginfo } else { 0 };
    frame.rdx = if flags & SA_SIGINFO != 0 { uc } else { 0 };
    frame.rax = 0;
    frame.rflags &= !(1 << 10 | 1 << 8); // DF and TF clear, as for a call
    let mut blocked = old_mask | mask;
    if flags & SA_NODEFER == 0 {
        blocked |= bit(info.signo);
    }
    u.signal_mask.store(blocked & !UNBLOCKABLE, Ordering::Release);
    if flags & SA_RESETHAND != 0 {
        p.actions.lock().0[info.signo as usize] = [SIG_DFL, 0, 0, 0];
    }
    Ok(())
}

/// A fault raised `sig` at `addr`: if the thread has a handler for it that
/// it does not block, the handler runs (true); else the fault is fatal.
pub fn catch_fault(
    u: &UserThread,
    frame: &mut TrapFrame,
    sig: u32,
    addr: u64,
    protection: bool,
) -> bool {
    let handler = u.process.actions.lock().0[sig as usize][0];
    if handler == SIG_DFL
        || handler == SIG_IGN
        || u.signal_mask.load(Ordering::Acquire) & bit(sig) != 0
    {
        return false;
    }
    const SEGV_MAPERR: i32 = 1;
    const SEGV_ACCERR: i32 = 2;
    let code = if sig == SIGSEGV && protection { SEGV_ACCERR } else { SEGV_MAPERR };
    u.pending.add(SigInfo { signo: sig, code, addr: Some(addr), ..Default::default() });
    deliver(u, frame, None);
    // The handler could not be set up: the program ends with the fault's signal.
    !u.process.is_exiting()
}

/// rt_sigreturn: the registers, mask and FPU state of the frame at `rsp`
/// (where the handler's return left it).
pub fn sigreturn(u: &UserThread, frame: &mut TrapFrame) -> Result<(), Errno> {
    let p = &u.process;
    let uc = frame.rsp;
    // The sigcontext and the mask in one read.
    let [sc @ .., mask] = uaccess::read_words::<33>(p, uc + UC_MCONTEXT)?;
    if sc[SC_FPSTATE] != 0 {
        let mut image = FpuImage::new();
        uaccess::read_bytes(p, sc[SC_FPSTATE], image.bytes_mut())?;
        hal::user::load_fpu(&mut image);
    }
    set_registers(frame, &sc[..18]);
    u.signal_mask.store(mask & !UNBLOCKABLE, Ordering::Release);
    Ok(())
}
