//! Signals: dispositions (rt_sigaction), masks (rt_sigprocmask),
//! alternate stacks, sending (kill, tkill, tgkill) within the program and
//! to other programs of the enclave, waiting (pause, rt_sigsuspend,
//! rt_sigtimedwait, rt_sigpending) and the way back from a handler
//! (rt_sigreturn). Delivery itself is `process::signal`.

use core::sync::atomic::Ordering;

use lwk_logic::errno::*;

use super::call::Call;
use crate::mm::uaccess;
use crate::process::sigstate::{
    SigInfo, SIGKILL, SIGSEGV, SIGSTOP, SI_TKILL, SI_USER, UNBLOCKABLE,
};
use crate::process::{programs, signal};

const SIG_BLOCK: u64 = 0;
const SIG_UNBLOCK: u64 = 1;
const SIG_SETMASK: u64 = 2;
const SS_ONSTACK: u64 = 1;
const SS_DISABLE: u64 = 2;
const MINSIGSTKSZ: u64 = 2048;

fn valid(sig: u64) -> bool {
    (1..=64).contains(&sig)
}

/// rt_sigaction(sig, act, oldact, sigsetsize): struct sigaction is four
/// words (handler, flags, restorer, mask).
pub fn rt_sigaction(c: &mut Call) -> SysResult {
    let [sig, act, old, size, ..] = c.args;
    if !valid(sig) || size != 8 || (act != 0 && (sig == SIGKILL.into() || sig == SIGSTOP.into())) {
        return Err(EINVAL);
    }
    let new = if act != 0 { Some(uaccess::read_words::<4>(c.process, act)?) } else { None };
    let mut actions = c.process.actions.lock();
    let prev = actions.0[sig as usize];
    if let Some(mut w) = new {
        w[3] &= !UNBLOCKABLE;
        actions.0[sig as usize] = w;
    }
    drop(actions);
    if old != 0 {
        uaccess::write_words(c.process, old, &prev)?;
    }
    Ok(0)
}

pub fn rt_sigprocmask(c: &mut Call) -> SysResult {
    let [how, set, old, size, ..] = c.args;
    if size != 8 {
        return Err(EINVAL);
    }
    let cur = c.user.signal_mask.load(Ordering::Relaxed);
    if set != 0 {
        let s = uaccess::read_u64(c.process, set)?;
        let new = match how {
            SIG_BLOCK => cur | s,
            SIG_UNBLOCK => cur & !s,
            SIG_SETMASK => s,
            _ => return Err(EINVAL),
        };
        // Signals it unblocks are delivered on the way back.
        c.user.signal_mask.store(new & !UNBLOCKABLE, Ordering::Release);
    }
    if old != 0 {
        uaccess::write_u64(c.process, old, cur)?;
    }
    Ok(0)
}

/// sigaltstack(ss, old_ss): stack_t is (sp, flags + pad, size).
pub fn sigaltstack(c: &mut Call) -> SysResult {
    let [ss, old, ..] = c.args;
    let prev = *c.user.altstack.lock();
    let on_it = prev[2] != 0 && c.frame.rsp.wrapping_sub(prev[0]) < prev[2];
    if ss != 0 {
        if on_it {
            return Err(EPERM);
        }
        let [sp, flags, size] = uaccess::read_words::<3>(c.process, ss)?;
        let flags = flags & 0xffff_ffff;
        *c.user.altstack.lock() = match flags {
            SS_DISABLE => [0, SS_DISABLE, 0],
            0 | SS_ONSTACK if size < MINSIGSTKSZ => return Err(ENOMEM),
            0 | SS_ONSTACK => [sp, 0, size],
            _ => return Err(EINVAL),
        };
    }
    if old != 0 {
        let mut w = prev;
        if w[2] == 0 {
            w = [0, SS_DISABLE, 0];
        } else if on_it {
            w[1] = SS_ONSTACK;
        }
        uaccess::write_words(c.process, old, &w)?;
    }
    Ok(0)
}

/// rt_sigreturn: back from a handler to what it interrupted.
pub fn rt_sigreturn(c: &mut Call) -> SysResult {
    if signal::sigreturn(c.user, c.frame).is_err() {
        // A frame that cannot be read: Linux sends SIGSEGV.
        c.process.begin_exit(SIGSEGV);
        return Err(EFAULT);
    }
    c.replaced_registers = true;
    Ok(c.frame.rax)
}

fn check_signal(sig: u64) -> Result<u32, Errno> {
    if sig > 64 {
        return Err(EINVAL);
    }
    Ok(sig as u32)
}

/// kill(pid, sig): a program of the enclave by its LWK pid, the caller's
/// process group (0), group -pid, or every program of the enclave (-1,
/// the caller included).
pub fn kill(c: &mut Call) -> SysResult {
    let [pid, sig, ..] = c.args;
    let sig = check_signal(sig)?;
    let pid = pid as i64 as i32;
    let targets: alloc::vec::Vec<_> = match pid {
        p if p > 0 && p as u32 == c.process.pid => alloc::vec![c.process.clone()],
        p if p > 0 => alloc::vec![programs::find(p as u32).ok_or(ESRCH)?],
        -1 => programs::all(),
        p => {
            let pgid = if p == 0 { c.process.family.pgid() } else { p.unsigned_abs() };
            programs::all().into_iter().filter(|q| q.family.pgid() == pgid).collect()
        }
    };
    if targets.is_empty() {
        return Err(ESRCH);
    }
    // As Linux: those the caller may not signal are skipped, EPERM if all.
    let targets: alloc::vec::Vec<_> =
        targets.into_iter().filter(|t| t.reachable_by(c.process)).collect();
    if targets.is_empty() {
        return Err(EPERM);
    }
    if sig != 0 {
        for t in &targets {
            signal::send_to_process(t, SigInfo::user(sig, SI_USER, c.process.pid));
        }
    }
    Ok(0)
}

fn thread_kill(c: &mut Call, tid: u64, sig: u64) -> SysResult {
    let info = SigInfo::user(check_signal(sig)?, SI_TKILL, c.process.pid);
    signal::send_to_thread(c.process, tid as u32, info).map(|()| 0)
}

pub fn tkill(c: &mut Call) -> SysResult {
    thread_kill(c, c.args[0], c.args[1])
}

pub fn tgkill(c: &mut Call) -> SysResult {
    if c.args[0] as u32 != c.process.pid {
        return Err(ESRCH);
    }
    thread_kill(c, c.args[1], c.args[2])
}

pub fn rt_sigpending(c: &mut Call) -> SysResult {
    let [set, size, ..] = c.args;
    if size != 8 {
        return Err(EINVAL);
    }
    let pending = signal::pending_set(c.user) & c.user.signal_mask.load(Ordering::Acquire);
    uaccess::write_u64(c.process, set, pending).map(|()| 0)
}

/// Sleeps until a signal the thread does not block (or the program's end).
fn wait_for_signal(c: &Call) {
    signal::sleep_while(None, || !signal::interrupted(c.user));
}

/// pause: until a handler has run.
pub fn pause(c: &mut Call) -> SysResult {
    wait_for_signal(c);
    Err(ERESTARTNOHAND)
}

/// rt_sigsuspend(mask, size): waits with `mask` until a handler has run,
/// then the old mask is back.
pub fn rt_sigsuspend(c: &mut Call) -> SysResult {
    let [set, size, ..] = c.args;
    if size != 8 {
        return Err(EINVAL);
    }
    let mask = uaccess::read_u64(c.process, set)? & !UNBLOCKABLE;
    let old = c.user.signal_mask.swap(mask, Ordering::AcqRel);
    signal::set_saved_mask(c.user, old);
    wait_for_signal(c);
    Err(ERESTARTNOHAND)
}

/// rt_sigtimedwait(set, info, timeout, size): takes one of `set` when it is
/// pending, without running its handler.
pub fn rt_sigtimedwait(c: &mut Call) -> SysResult {
    let [set, info, timeout, size, ..] = c.args;
    if size != 8 {
        return Err(EINVAL);
    }
    let wanted = uaccess::read_u64(c.process, set)? & !UNBLOCKABLE;
    let deadline = match timeout {
        0 => None,
        t => Some(super::time::deadline_after(super::time::read_timespec(c.process, t)?)),
    };
    // Signals in the set wait for us, not for a handler: block them while
    // waiting (as Linux does) so that delivery does not take them first.
    let old = c.user.signal_mask.fetch_or(wanted, Ordering::AcqRel);
    let result = loop {
        if let Some(got) = signal::take(c.user, wanted) {
            break Ok(got);
        }
        if signal::interrupted(c.user) {
            break Err(EINTR);
        }
        if deadline.is_some_and(|d| hal::cpu::rdtsc() >= d) {
            break Err(EAGAIN);
        }
        let ready = || signal::pending_set(c.user) & wanted != 0 || signal::interrupted(c.user);
        signal::sleep_while(deadline, || !ready());
    };
    c.user.signal_mask.store(old, Ordering::Release);
    let got = result?;
    if info != 0 {
        uaccess::write_bytes(c.process, info, &got.to_bytes())?;
    }
    Ok(got.signo.into())
}
