//! Blocking the current thread on a list of waiters until a condition
//! holds, and waking them: what joins (spawn.rs) and `sync::WaitQueue`
//! are made of.

use alloc::collections::VecDeque;
use alloc::sync::Arc;

use super::running::current;
use super::switch::{schedule, wake};
use super::thread::Waiters;
use super::timer::block_until;
use super::user::Thread;

/// Blocks the current thread on `list` until `done()` holds. The condition
/// is checked under the list's lock, so a wake-up between the check and
/// the block is never lost.
pub fn until(list: &Waiters<Thread>, mut done: impl FnMut() -> bool) {
    loop {
        let mut q = list.lock();
        if done() {
            return;
        }
        let me = current();
        me.mark_blocked();
        q.push_back(me);
        drop(q);
        schedule();
    }
}

/// As `until`, giving up at `deadline` (TSC) if there is one; true if
/// `done()` holds. Whatever woke the thread (the list, the timer, the
/// program's end), it leaves the list before looking again.
pub fn until_deadline(
    list: &Waiters<Thread>,
    mut done: impl FnMut() -> bool,
    deadline: Option<u64>,
) -> bool {
    loop {
        let mut q = list.lock();
        if done() {
            return true;
        }
        if deadline.is_some_and(|d| hal::cpu::rdtsc() >= d) {
            return false;
        }
        let me = current();
        me.mark_blocked();
        q.push_back(me.clone());
        drop(q);
        block_until(deadline);
        list.lock().retain(|t| !Arc::ptr_eq(t, &me));
    }
}

/// Blocks the current thread on `list`, then releases `guard`; the caller
/// re-takes its lock after waking (condition-variable style, the test
/// image's CondVar).
#[cfg(feature = "testing")]
pub fn sleep_releasing<T>(list: &Waiters<Thread>, guard: hal::SpinLockGuard<'_, T>) {
    let mut q = list.lock();
    let me = current();
    me.mark_blocked();
    q.push_back(me);
    drop(q);
    drop(guard);
    schedule();
}

/// Wakes the first waiter on `list`; `kick` sends an IPI if it lives on
/// another core.
pub fn wake_one(list: &Waiters<Thread>, kick: bool) -> bool {
    let t = list.lock().pop_front();
    match t {
        Some(t) => {
            wake(&t, kick);
            true
        }
        None => false,
    }
}

/// Wakes every waiter on `list`; how many there were.
pub fn wake_all(list: &Waiters<Thread>, kick: bool) -> usize {
    let all: VecDeque<_> = core::mem::take(&mut *list.lock());
    let n = all.len();
    for t in all {
        wake(&t, kick);
    }
    n
}
