//! Kernel threads, each bound to one core (the Nautilus model).

use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

use hal::task::Context;

use super::user::UserPart;
use crate::sync::WaitQueue;
use hal::SpinLock;

pub type ThreadId = u64;
const STACK_SIZE: usize = 64 * 1024;
pub const NO_TIMER: usize = usize::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    Ready = 0,
    Running = 1,
    Blocked = 2,
    Dead = 3,
}

type Entry = Box<dyn FnOnce() + Send>;

pub struct Thread {
    pub id: ThreadId,
    pub name: String,
    /// The core whose run queue holds it (migrate_current, move_thread, or
    /// a new home when its core leaves).
    cpu: AtomicUsize,
    /// Preemptive threads are switched out by the timer when others wait;
    /// cooperative ones (the default) run until they yield or block.
    pub preemptive: bool,
    pub(super) is_idle: bool,
    /// The core whose timer list holds its wake-up, or NO_TIMER.
    pub(super) timer_cpu: AtomicUsize,
    /// On a run queue (set by whoever queues it, cleared when taken off).
    pub(super) queued: AtomicBool,
    /// Sections that must stay on one core (`sched::no_preempt`).
    pub(super) no_preempt: AtomicU32,
    /// Switched out while moving to another core: to queue there once off
    /// this one.
    pub(super) hand_over: AtomicBool,
    state: AtomicU8,
    context: Context,
    entry: SpinLock<Option<Entry>>,
    finished: AtomicBool,
    pub(super) joiners: WaitQueue,
    /// Present for threads of a user program.
    pub user: Option<Box<dyn UserPart>>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Thread {
    pub(super) fn new(name: &str, cpu: usize, preemptive: bool, entry: Entry) -> Arc<Thread> {
        Self::build(name, cpu, preemptive, entry, |_| None)
    }

    /// A thread of a user program: `user` gets the kernel stack's top.
    pub fn new_user(
        name: &str,
        cpu: usize,
        entry: Entry,
        user: impl FnOnce(u64) -> Box<dyn UserPart>,
    ) -> Arc<Thread> {
        Self::build(name, cpu, true, entry, |top| Some(user(top)))
    }

    fn build(
        name: &str,
        cpu: usize,
        preemptive: bool,
        entry: Entry,
        user: impl FnOnce(u64) -> Option<Box<dyn UserPart>>,
    ) -> Arc<Thread> {
        let context = Context::new(STACK_SIZE, super::thread_start);
        let top = context.stack_top().expect("a new context has its own stack");
        Arc::new(Thread {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name: name.into(),
            cpu: AtomicUsize::new(cpu),
            preemptive,
            is_idle: false,
            timer_cpu: AtomicUsize::new(NO_TIMER),
            queued: AtomicBool::new(false),
            no_preempt: AtomicU32::new(0),
            hand_over: AtomicBool::new(false),
            state: AtomicU8::new(State::Ready as u8),
            context,
            entry: SpinLock::new(Some(entry)),
            finished: AtomicBool::new(false),
            joiners: WaitQueue::new(),
            user: user(top),
        })
    }

    /// Wraps the context that is already running on a CPU (its boot stack).
    pub(super) fn adopt_running(name: &str, cpu: usize, is_idle: bool) -> Arc<Thread> {
        Arc::new(Thread {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name: name.into(),
            cpu: AtomicUsize::new(cpu),
            preemptive: false,
            is_idle,
            timer_cpu: AtomicUsize::new(NO_TIMER),
            queued: AtomicBool::new(false),
            no_preempt: AtomicU32::new(0),
            hand_over: AtomicBool::new(false),
            state: AtomicU8::new(State::Running as u8),
            context: Context::running(),
            entry: SpinLock::new(None),
            finished: AtomicBool::new(false),
            joiners: WaitQueue::new(),
            user: None,
        })
    }

    pub fn cpu(&self) -> usize {
        self.cpu.load(Ordering::Acquire)
    }

    pub(super) fn set_cpu(&self, cpu: usize) {
        self.cpu.store(cpu, Ordering::Release);
    }

    pub fn state(&self) -> State {
        match self.state.load(Ordering::Acquire) {
            0 => State::Ready,
            1 => State::Running,
            2 => State::Blocked,
            _ => State::Dead,
        }
    }

    pub(super) fn set_state(&self, s: State) {
        self.state.store(s as u8, Ordering::Release);
    }

    /// Blocked -> Ready; false if someone else already woke it.
    pub(super) fn try_unblock(&self) -> bool {
        self.state
            .compare_exchange(
                State::Blocked as u8,
                State::Ready as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    pub fn mark_blocked(&self) {
        self.set_state(State::Blocked);
    }

    pub(super) fn take_entry(&self) -> Option<Entry> {
        self.entry.lock().take()
    }

    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    pub(super) fn mark_finished(&self) {
        self.finished.store(true, Ordering::Release);
    }
}

impl hal::task::Task for Thread {
    fn context(&self) -> &Context {
        &self.context
    }

    /// A thread that moved to another core is queued there once off this one.
    fn left_cpu(thread: &Arc<Thread>) {
        if thread.hand_over.swap(false, Ordering::AcqRel) {
            super::enqueue(thread, true);
        }
    }
}
