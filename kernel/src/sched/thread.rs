//! A kernel thread's own data, each thread bound to one core (the Nautilus
//! model): what run queues, timer lists and waiters hold. The lowest file of
//! the scheduler: it is generic over the part a program's thread adds, which
//! user.rs names, and takes the code a new thread starts in from its maker.

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::string::String;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

use hal::task::Context;
use hal::SpinLock;

pub type ThreadId = u64;
const STACK_SIZE: usize = 64 * 1024;
/// `timer_cpu` of a thread no core's timer list holds.
pub const NO_TIMER: usize = usize::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum State {
    Ready = 0,
    Running = 1,
    Blocked = 2,
    Dead = 3,
}

pub type Entry = Box<dyn FnOnce() + Send>;

/// Threads waiting for something, first come first (wait.rs blocks and
/// wakes them).
pub type Waiters<T> = SpinLock<VecDeque<Arc<T>>>;

/// A thread; `U` is what a thread of a user program adds (`user::Thread`).
pub struct ThreadOf<U: ?Sized> {
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
    /// A program's own hold on its core (`sched::hold`): the TSC when it
    /// began, 0 when none.
    pub(super) held_since: AtomicU64,
    /// Switched out while moving to another core: to queue there once off
    /// this one.
    pub(super) hand_over: AtomicBool,
    state: AtomicU8,
    pub(super) context: Context,
    entry: SpinLock<Option<Entry>>,
    finished: AtomicBool,
    pub(super) joiners: Waiters<Self>,
    /// Present for threads of a user program.
    pub user: Option<Box<U>>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl<U: ?Sized> ThreadOf<U> {
    /// A thread on a stack of its own, which enters `start` (its maker's
    /// trampoline, which runs `entry`); `user` gets the stack's top.
    pub(super) fn new(
        name: &str,
        cpu: usize,
        preemptive: bool,
        entry: Entry,
        start: fn() -> !,
        user: impl FnOnce(u64) -> Option<Box<U>>,
    ) -> Arc<Self> {
        let context = Context::new(STACK_SIZE, start);
        let top = context.stack_top().expect("a new context has its own stack");
        Arc::new(ThreadOf {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name: name.into(),
            cpu: AtomicUsize::new(cpu),
            preemptive,
            is_idle: false,
            timer_cpu: AtomicUsize::new(NO_TIMER),
            queued: AtomicBool::new(false),
            no_preempt: AtomicU32::new(0),
            held_since: AtomicU64::new(0),
            hand_over: AtomicBool::new(false),
            state: AtomicU8::new(State::Ready as u8),
            context,
            entry: SpinLock::new(Some(entry)),
            finished: AtomicBool::new(false),
            joiners: SpinLock::new(VecDeque::new()),
            user: user(top),
        })
    }

    /// Wraps the context that is already running on a CPU (its boot stack).
    pub(super) fn adopt_running(name: &str, cpu: usize, is_idle: bool) -> Arc<Self> {
        Arc::new(ThreadOf {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            name: name.into(),
            cpu: AtomicUsize::new(cpu),
            preemptive: false,
            is_idle,
            timer_cpu: AtomicUsize::new(NO_TIMER),
            queued: AtomicBool::new(false),
            no_preempt: AtomicU32::new(0),
            held_since: AtomicU64::new(0),
            hand_over: AtomicBool::new(false),
            state: AtomicU8::new(State::Running as u8),
            context: Context::running(),
            entry: SpinLock::new(None),
            finished: AtomicBool::new(false),
            joiners: SpinLock::new(VecDeque::new()),
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
