//! Each core's scheduling state: its run queue, its idle thread, whether it
//! takes work (a leaving core does not, hotplug.rs) and its counters.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use hal::{SpinLock, MAX_CPUS};

use super::user::Thread;

/// `presence`: the core takes work.
pub(super) const ACTIVE: u8 = 0;
/// Asked to leave: its idle thread parks it at its next chance.
pub(super) const LEAVING: u8 = 1;
/// Its idle thread is parking it.
pub(super) const PARKING: u8 = 2;

pub(super) struct RunQueue {
    pub(super) threads: VecDeque<Arc<Thread>>,
    /// The core has left: threads queued for it go elsewhere.
    pub(super) gone: bool,
}

pub struct CpuSched {
    pub(super) ready: SpinLock<RunQueue>,
    pub(super) idle: SpinLock<Option<Arc<Thread>>>,
    pub(super) need_resched: AtomicBool,
    /// ACTIVE, LEAVING or PARKING.
    pub(super) presence: AtomicU8,
    pub context_switches: AtomicU64,
}

impl CpuSched {
    const fn new() -> Self {
        CpuSched {
            ready: SpinLock::new(RunQueue { threads: VecDeque::new(), gone: false }),
            idle: SpinLock::new(None),
            need_resched: AtomicBool::new(false),
            presence: AtomicU8::new(ACTIVE),
            context_switches: AtomicU64::new(0),
        }
    }

    pub fn ready_len(&self) -> usize {
        self.ready.lock().threads.len()
    }

    pub(super) fn idle(&self) -> Arc<Thread> {
        self.idle.lock().clone().expect("idle thread")
    }
}

pub(super) static CPUS: [CpuSched; MAX_CPUS] = [const { CpuSched::new() }; MAX_CPUS];

/// Threads waiting to run on `cpu`: how busy it is, for placing work.
pub fn load_of(cpu: usize) -> usize {
    CPUS[cpu].ready_len()
}

pub fn this_cpu() -> &'static CpuSched {
    &CPUS[hal::cpu_index()]
}

/// A core (re)starting at `index`: it takes work again.
pub(super) fn reset(index: usize) {
    let c = &CPUS[index];
    c.ready.lock().gone = false;
    c.need_resched.store(false, Ordering::Relaxed);
    c.presence.store(ACTIVE, Ordering::Release);
}

pub fn is_leaving(cpu: usize) -> bool {
    CPUS[cpu].presence.load(Ordering::Acquire) != ACTIVE
}

/// Cores that take work: online and not leaving.
pub fn active_cpus() -> impl Iterator<Item = usize> {
    hal::smp::online_cpus().filter(|&c| !is_leaving(c))
}

/// Where a thread goes when its core leaves: a program's thread to one of
/// the cores it may use, a kernel thread to the boot core.
pub fn new_home(t: &Thread) -> usize {
    t.user.as_ref().and_then(|u| u.new_home()).unwrap_or(0)
}
