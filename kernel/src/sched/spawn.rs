//! A thread's life: made (kernel threads with `Spawn`, a program's with
//! `Thread::new_user`), started, ended, and joined.

use alloc::boxed::Box;
use alloc::sync::Arc;
use hal::{cpu, SpinLock};

use super::cpus::is_leaving;
use super::running::current;
use super::switch::{schedule, wake};
use super::thread::{Entry, State};
use super::user::{Thread, UserPart};
use super::wait;

/// First code of every new thread, once the switch to it is complete.
fn thread_start() -> ! {
    cpu::enable_interrupts();
    let me = current();
    if let Some(entry) = me.take_entry() {
        drop(me);
        entry();
    } else {
        drop(me);
    }
    exit_current()
}

/// A kernel thread on `cpu` that runs `entry`, not started yet.
pub(super) fn new_kernel(name: &str, cpu: usize, preemptive: bool, entry: Entry) -> Arc<Thread> {
    Thread::new(name, cpu, preemptive, entry, thread_start, |_| None)
}

impl Thread {
    /// A thread of a user program: `user` gets the kernel stack's top.
    pub fn new_user(
        name: &str,
        cpu: usize,
        entry: Entry,
        user: impl FnOnce(u64) -> Box<dyn UserPart>,
    ) -> Arc<Thread> {
        Thread::new(name, cpu, true, entry, thread_start, |top| Some(user(top)))
    }
}

/// Ends the current thread and wakes its joiners.
pub fn exit_current() -> ! {
    let me = current();
    cpu::disable_interrupts();
    me.mark_finished();
    wait::wake_all(&me.joiners, true);
    me.set_state(State::Dead);
    drop(me);
    schedule();
    unreachable!("a dead thread was scheduled again");
}

/// Starts a thread made with `Thread::new_user`.
pub fn start(t: &Arc<Thread>) {
    t.mark_blocked();
    wake(t, true);
}

/// A spawned thread; `join` waits for it and returns its result.
pub struct JoinHandle<T> {
    thread: Arc<Thread>,
    result: Arc<SpinLock<Option<T>>>,
}

impl<T> JoinHandle<T> {
    pub fn join(self) -> T {
        let t = self.thread.clone();
        wait::until(&t.joiners, || t.is_finished());
        self.result.lock().take().expect("thread finished without a result")
    }

    /// The thread itself (the event benchmarks watch its state).
    #[cfg(feature = "testing")]
    pub fn thread(&self) -> &Arc<Thread> {
        &self.thread
    }
}

/// Options for a new thread.
pub struct Spawn<'a> {
    pub name: &'a str,
    pub cpu: usize,
    pub preemptive: bool,
}

impl<'a> Spawn<'a> {
    pub fn on(cpu: usize, name: &'a str) -> Self {
        Spawn { name, cpu, preemptive: false }
    }

    /// Preempted by the timer (the lock and event benchmarks' background threads).
    #[cfg(feature = "testing")]
    pub fn preemptive(mut self) -> Self {
        self.preemptive = true;
        self
    }

    pub fn start<T, F>(self, f: F) -> JoinHandle<T>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        assert!(self.cpu < hal::MAX_CPUS, "no CPU {}", self.cpu);
        // A core that left meanwhile hands the thread on (enqueue); one that
        // never came up would never run it: the boot core does.
        let cpu = if hal::smp::is_online(self.cpu) || is_leaving(self.cpu) { self.cpu } else { 0 };
        let result = Arc::new(SpinLock::new(None));
        let slot = result.clone();
        let thread = new_kernel(
            self.name,
            cpu,
            self.preemptive,
            Box::new(move || {
                let v = f();
                *slot.lock() = Some(v);
            }),
        );
        thread.mark_blocked();
        let handle = JoinHandle { thread: thread.clone(), result };
        wake(&thread, true);
        handle
    }
}

/// Spawns a cooperative thread on `cpu`.
pub fn spawn<T, F>(cpu: usize, name: &str, f: F) -> JoinHandle<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    Spawn::on(cpu, name).start(f)
}
