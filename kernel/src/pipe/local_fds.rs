//! A process's descriptors that are ends of local pipes, by number. Linux
//! keeps every descriptor of the program (its `atoll run` holds them, the
//! pipe's own among them), so the numbers are Linux's; this table follows
//! each change Linux makes to them (syscall/pipe_fds.rs), a forked child
//! starts with a copy, as its server does, and the program's end closes
//! them all.

use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};

use super::local_pipe::OpenEnd;
use crate::sync::{SpinLock, WaitQueue};

#[derive(Default)]
pub struct LocalFds {
    /// False while the table is empty: most programs' calls look no further.
    any: AtomicBool,
    table: SpinLock<BTreeMap<u32, Arc<OpenEnd>>>,
    /// Held across a change (Linux's call and the table's update), so that
    /// a fork copies the table as Linux has it at that moment.
    changing: AtomicBool,
    changed: WaitQueue,
}

impl LocalFds {
    /// A forked child's: the same ends at the same numbers.
    pub fn copy(&self) -> LocalFds {
        let table = self.while_changing(|| self.table.lock().clone());
        LocalFds {
            any: AtomicBool::new(!table.is_empty()),
            table: SpinLock::new(table),
            ..Default::default()
        }
    }

    /// Runs `f` (Linux's call and the table's update after it) with no
    /// other change and no fork's copy in between.
    pub fn while_changing<R>(&self, f: impl FnOnce() -> R) -> R {
        let take = || {
            self.changing
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        };
        self.changed.wait_until(take);
        let r = f();
        self.changing.store(false, Ordering::Release);
        self.changed.wake_one(true);
        r
    }

    /// True if some descriptor is a local pipe's.
    #[inline]
    pub fn any(&self) -> bool {
        self.any.load(Ordering::Acquire)
    }

    pub fn get(&self, fd: u64) -> Option<Arc<OpenEnd>> {
        if !self.any() {
            return None;
        }
        self.table.lock().get(&u32::try_from(fd).ok()?).cloned()
    }

    /// `fd` is now `end` (whatever it was before goes).
    pub fn insert(&self, fd: u32, end: Arc<OpenEnd>) {
        let old = {
            let mut t = self.table.lock();
            self.any.store(true, Ordering::Release);
            t.insert(fd, end)
        };
        drop(old);
    }

    /// `fd` is closed (or something else now).
    pub fn remove(&self, fd: u64) {
        let Ok(fd) = u32::try_from(fd) else { return };
        self.remove_where(|n| n == fd);
    }

    /// The program ended: every end it held closes.
    pub fn close_all(&self) {
        self.remove_where(|_| true);
    }

    /// The descriptors and their ends now.
    pub fn all(&self) -> Vec<(u32, Arc<OpenEnd>)> {
        self.table.lock().iter().map(|(&n, e)| (n, e.clone())).collect()
    }

    /// Ends close outside the lock: the last one wakes its pipe's waiters.
    fn remove_where(&self, gone: impl Fn(u32) -> bool) {
        let closed: Vec<Arc<OpenEnd>> = {
            let mut t = self.table.lock();
            let numbers: Vec<u32> = t.keys().copied().filter(|&n| gone(n)).collect();
            let closed = numbers.iter().filter_map(|n| t.remove(n)).collect();
            self.any.store(!t.is_empty(), Ordering::Release);
            closed
        };
        drop(closed);
    }
}
