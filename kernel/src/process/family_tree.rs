//! A process's place in its family, as the process keeps it: its parent,
//! children, group and session, what a forked child starts with, and
//! whether a server on Linux holds it yet (family.rs, fork.rs and
//! deferred_server.rs act on it). Generic over the process type, which
//! holds it.

use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};

use super::cputime::Times;
use crate::sync::{SpinLock, WaitQueue};
use hal::TrapFrame;

/// A host file serves it (every program but the children below).
pub const HELD: u8 = 0;
/// A forked child whose server is not made yet.
pub const DEFERRED: u8 = 1;
/// Its server is being made.
pub const MAKING: u8 = 2;
/// It ended without ever having a server: freed at its end.
pub const NEVER: u8 = 3;

/// What a forked child's first thread starts with.
#[derive(Clone, Copy)]
pub struct ForkStart {
    pub frame: TrapFrame,
    pub fs_base: u64,
    pub clear_child_tid: u64,
    pub signal_mask: u64,
    pub altstack: [u64; 3],
}

pub struct Family<P> {
    pub(super) parent: Option<Weak<P>>,
    pub(super) children: SpinLock<Vec<Arc<P>>>,
    /// A child ended (wait4 sleeps here).
    pub(super) child_ended: WaitQueue,
    /// Set once its last thread has ended: its wait status is final.
    pub(super) ended: AtomicBool,
    /// It has called execve (a vfork parent waits for this or the end).
    pub(super) execed: AtomicBool,
    pub fork_start: SpinLock<Option<ForkStart>>,
    /// A forked child's first thread was started.
    pub ran: AtomicBool,
    /// CPU time of the children it has waited for (RUSAGE_CHILDREN, times).
    pub children_time: SpinLock<Times>,
    /// Process group and session (LWK pids of their leaders).
    pub(super) pgid: AtomicU32,
    pub(super) sid: AtomicU32,
    /// Whether a server on Linux holds it (HELD, DEFERRED, MAKING, NEVER),
    /// and the queue of those waiting while one is made.
    pub server: AtomicU8,
    pub server_made: WaitQueue,
    /// Its children whose servers are not made yet.
    pub unserved_children: AtomicU32,
}

impl<P> Family<P> {
    pub fn new(parent: Option<&Arc<P>>) -> Self {
        Family {
            parent: parent.map(Arc::downgrade),
            children: SpinLock::new(Vec::new()),
            child_ended: WaitQueue::new(),
            ended: AtomicBool::new(false),
            execed: AtomicBool::new(false),
            fork_start: SpinLock::new(None),
            ran: AtomicBool::new(false),
            children_time: SpinLock::new(Times::default()),
            pgid: AtomicU32::new(0),
            sid: AtomicU32::new(0),
            server: AtomicU8::new(HELD),
            server_made: WaitQueue::new(),
            unserved_children: AtomicU32::new(0),
        }
    }

    pub fn pgid(&self) -> u32 {
        self.pgid.load(Ordering::Acquire)
    }

    pub fn sid(&self) -> u32 {
        self.sid.load(Ordering::Acquire)
    }

    pub fn set_group(&self, pgid: u32, sid: u32) {
        self.pgid.store(pgid, Ordering::Release);
        self.sid.store(sid, Ordering::Release);
    }

    /// The parent, while it lives.
    pub fn parent(&self) -> Option<Arc<P>> {
        self.parent.as_ref().and_then(Weak::upgrade)
    }

    /// Its children, as they are now.
    pub fn children(&self) -> Vec<Arc<P>> {
        self.children.lock().clone()
    }

    /// Its last thread has ended.
    pub fn has_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }
}
