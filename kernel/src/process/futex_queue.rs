//! A process's futex queues: the threads waiting on each word of its
//! memory, keyed by user address (one process, one address space).
//! Waiting and waking are futex.rs's.

use alloc::collections::{BTreeMap, VecDeque};
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::sched::{self, Thread};
use crate::sync::SpinLock;

pub(super) struct Waiter {
    pub(super) thread: Arc<Thread>,
    pub(super) bitset: u32,
    pub(super) woken: AtomicBool,
    /// The queue it is in (requeue moves it).
    pub(super) key: AtomicU64,
}

pub struct FutexTable {
    pub(super) queues: SpinLock<BTreeMap<u64, VecDeque<Arc<Waiter>>>>,
}

pub(super) type Queues = BTreeMap<u64, VecDeque<Arc<Waiter>>>;

/// Wakes up to `n` waiters of `key` whose bitset meets `bitset`; `first`:
/// each runs next on its core (`sched::wake_first`).
pub(super) fn wake_locked(q: &mut Queues, key: u64, n: u32, bitset: u32, first: bool) -> u32 {
    let Some(list) = q.get_mut(&key) else { return 0 };
    let mut woken = 0;
    list.retain(|w| {
        if woken < n && w.bitset & bitset != 0 {
            w.woken.store(true, Ordering::Release);
            if first {
                sched::wake_first(&w.thread);
            } else {
                sched::wake(&w.thread, true);
            }
            woken += 1;
            false
        } else {
            true
        }
    });
    if list.is_empty() {
        q.remove(&key);
    }
    woken
}

pub(super) fn remove_locked(q: &mut Queues, w: &Arc<Waiter>) {
    let key = w.key.load(Ordering::Relaxed);
    if let Some(list) = q.get_mut(&key) {
        list.retain(|x| !Arc::ptr_eq(x, w));
        if list.is_empty() {
            q.remove(&key);
        }
    }
}

impl FutexTable {
    pub const fn new() -> Self {
        FutexTable { queues: SpinLock::new(BTreeMap::new()) }
    }
}
