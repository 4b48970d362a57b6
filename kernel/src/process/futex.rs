//! Futexes: a program's threads sleep on a word of its memory until
//! another thread wakes that word (the queues are futex_queue.rs's).

use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::futex_queue::{remove_locked, wake_locked, FutexTable, Waiter};
use super::signal;
use super::types::{Process, UserThread};
use crate::mm::uaccess;
use crate::sched::{self, timer};
use lwk_logic::errno::*;

/// A signal or the program's end cuts the wait short.
fn interrupted(t: &sched::Thread) -> bool {
    UserThread::of(t).is_some_and(signal::interrupted)
}

impl FutexTable {
    /// FUTEX_WAIT(_BITSET): sleeps while `*uaddr == val`, until woken,
    /// the deadline (TSC) or the program's end.
    pub fn wait(
        &self,
        p: &Process,
        uaddr: u64,
        val: u32,
        deadline: Option<u64>,
        bitset: u32,
    ) -> SysResult {
        if bitset == 0 {
            return Err(EINVAL);
        }
        let me = sched::current();
        let w = Arc::new(Waiter {
            thread: me.clone(),
            bitset,
            woken: AtomicBool::new(false),
            key: AtomicU64::new(uaddr),
        });
        uaccess::with_futex(p, uaddr, |word| {
            let mut q = self.queues.lock();
            if word.load(Ordering::SeqCst) != val {
                return Err(EAGAIN);
            }
            me.mark_blocked();
            q.entry(uaddr).or_default().push_back(w.clone());
            Ok(())
        })?;
        // A signal sent before the thread was marked blocked woke nothing.
        if interrupted(&me) {
            sched::wake(&me, true);
        }
        loop {
            let timed_out = timer::block_until(deadline);
            let mut q = self.queues.lock();
            if w.woken.load(Ordering::Acquire) {
                return Ok(0);
            }
            if timed_out || interrupted(&me) {
                remove_locked(&mut q, &w);
                return Err(if timed_out { ETIMEDOUT } else { EINTR });
            }
            // A wake-up meant for something else: sleep on.
            me.mark_blocked();
        }
    }

    /// FUTEX_WAKE(_BITSET): wakes up to `n` waiters; returns how many.
    pub fn wake(&self, _p: &Process, uaddr: u64, n: u32, bitset: u32) -> SysResult {
        if bitset == 0 {
            return Err(EINVAL);
        }
        Ok(wake_locked(&mut self.queues.lock(), uaddr, n, bitset, false).into())
    }

    /// As `wake`, each woken thread running next on its core (the HRT
    /// API's HRT_WAKE_FIRST).
    pub fn wake_first(&self, uaddr: u64, n: u32) -> u32 {
        wake_locked(&mut self.queues.lock(), uaddr, n, u32::MAX, true)
    }

    /// FUTEX_(CMP_)REQUEUE: wakes `n` waiters of `uaddr`, moves up to
    /// `requeue` more to `uaddr2`; with `expect`, only if `*uaddr` still
    /// holds it.
    pub fn requeue(
        &self,
        p: &Process,
        uaddr: u64,
        n: u32,
        uaddr2: u64,
        requeue: u32,
        expect: Option<u32>,
    ) -> SysResult {
        let mut q = uaccess::with_futex(p, uaddr, |word| {
            let q = self.queues.lock();
            if expect.is_some_and(|v| word.load(Ordering::SeqCst) != v) {
                return Err(EAGAIN);
            }
            Ok(q)
        })?;
        let woken = wake_locked(&mut q, uaddr, n, u32::MAX, false);
        let mut moved = 0;
        if uaddr != uaddr2 {
            if let Some(mut list) = q.remove(&uaddr) {
                let take = list.len().min(requeue as usize);
                let rest = list.split_off(take);
                for w in &list {
                    w.key.store(uaddr2, Ordering::Relaxed);
                }
                moved = list.len() as u32;
                q.entry(uaddr2).or_default().extend(list);
                if !rest.is_empty() {
                    q.insert(uaddr, rest);
                }
            }
        }
        Ok((woken + if expect.is_some() { moved } else { 0 }).into())
    }

    /// FUTEX_WAKE_OP: changes `*uaddr2` by the encoded operation, wakes
    /// `n` waiters of `uaddr` and, if the old value passes the encoded
    /// comparison, `n2` waiters of `uaddr2`.
    pub fn wake_op(
        &self,
        p: &Process,
        uaddr: u64,
        n: u32,
        uaddr2: u64,
        n2: u32,
        encoded: u32,
    ) -> SysResult {
        let op = (encoded >> 28) & 7;
        let cmp = (encoded >> 24) & 15;
        let mut oparg = ((encoded << 8) as i32 >> 20) as u32;
        let cmparg = ((encoded << 20) as i32 >> 20) as u32;
        if encoded & (8 << 28) != 0 {
            oparg = 1u32.checked_shl(oparg).unwrap_or(0);
        }
        if op > 4 || cmp > 5 {
            return Err(ENOSYS);
        }
        let apply = |old: u32| match op {
            0 => oparg,
            1 => old.wrapping_add(oparg),
            2 => old | oparg,
            3 => old & !oparg,
            _ => old ^ oparg,
        };
        let old = uaccess::futex_update(p, uaddr2, apply)?;
        let mut q = self.queues.lock();
        let (o, c) = (old as i32, cmparg as i32);
        let pass = match cmp {
            0 => o == c,
            1 => o != c,
            2 => o < c,
            3 => o <= c,
            4 => o > c,
            _ => o >= c,
        };
        let mut woken = wake_locked(&mut q, uaddr, n, u32::MAX, false);
        if pass {
            woken += wake_locked(&mut q, uaddr2, n2, u32::MAX, false);
        }
        Ok(woken.into())
    }
}
