//! Signals, to the level static C libraries need: dispositions, masks and
//! alternate stacks are kept and reported back; no handler ever runs. A
//! signal a program sends itself (abort's SIGABRT) ends it, as the default
//! action of those signals does.

use core::sync::atomic::Ordering;

use lwk_logic::errno::*;

use super::Call;
use crate::process::uaccess;

const SIG_BLOCK: u64 = 0;
const SIG_UNBLOCK: u64 = 1;
const SIG_SETMASK: u64 = 2;
const SIGKILL: u64 = 9;
const SIGSTOP: u64 = 19;

/// rt_sigaction(sig, act, oldact, sigsetsize): struct sigaction is four
/// words (handler, flags, restorer, mask).
pub fn rt_sigaction(c: &mut Call) -> SysResult {
    let [sig, act, old, size, ..] = c.args;
    if sig == 0 || sig > 64 || size != 8 || (act != 0 && (sig == SIGKILL || sig == SIGSTOP)) {
        return Err(EINVAL);
    }
    let new = if act != 0 { Some(uaccess::read_words::<4>(c.process, act)?) } else { None };
    let mut s = c.process.signals.lock();
    let prev = s.actions[sig as usize];
    if let Some(w) = new {
        s.actions[sig as usize] = w;
    }
    drop(s);
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
        c.user
            .signal_mask
            .store(new & !((1 << (SIGKILL - 1)) | (1 << (SIGSTOP - 1))), Ordering::Relaxed);
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
    if ss != 0 {
        *c.user.altstack.lock() = uaccess::read_words::<3>(c.process, ss)?;
    }
    if old != 0 {
        let mut w = prev;
        if w[0] == 0 {
            w[1] = 2; // SS_DISABLE
        }
        uaccess::write_words(c.process, old, &w)?;
    }
    Ok(0)
}

/// A signal to this program: 0 probes, anything else ends it.
fn send(c: &mut Call, target_ok: bool, sig: u64) -> SysResult {
    if !target_ok {
        return Err(ESRCH);
    }
    if sig > 64 {
        return Err(EINVAL);
    }
    if sig != 0 {
        c.process.begin_exit(sig as u32);
    }
    Ok(0)
}

pub fn kill(c: &mut Call) -> SysResult {
    let ok = c.args[0] as u32 == c.process.pid || c.args[0] == 0;
    send(c, ok, c.args[1])
}

pub fn tkill(c: &mut Call) -> SysResult {
    send(c, true, c.args[1])
}

pub fn tgkill(c: &mut Call) -> SysResult {
    let ok = c.args[0] as u32 == c.process.pid;
    send(c, ok, c.args[2])
}
