//! Per-core scheduling. Every core has its own run queue and idle thread;
//! a thread stays on its core unless it is moved (`move_thread`: its core
//! leaves, or a new core takes some of the work). Cross-core wake-ups put
//! the thread on its core's queue and (by default) kick that core.

pub mod hotplug;
mod thread;
pub mod timer;
pub mod user;

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use atoll_abi::{RESCHED_VECTOR, TIMER_VECTOR};
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use hal::task::Switcher;
use hal::{cpu, MAX_CPUS};
use spin::Once;

use hal::SpinLock;
pub use thread::{State, Thread, ThreadId};

struct RunQueue {
    threads: VecDeque<Arc<Thread>>,
    /// The core has left: threads queued for it go elsewhere.
    gone: bool,
}

pub struct CpuSched {
    ready: SpinLock<RunQueue>,
    idle: SpinLock<Option<Arc<Thread>>>,
    need_resched: AtomicBool,
    /// hotplug::ACTIVE, LEAVING or PARKING.
    presence: AtomicU8,
    pub context_switches: AtomicU64,
}

impl CpuSched {
    const fn new() -> Self {
        CpuSched {
            ready: SpinLock::new(RunQueue { threads: VecDeque::new(), gone: false }),
            idle: SpinLock::new(None),
            need_resched: AtomicBool::new(false),
            presence: AtomicU8::new(hotplug::ACTIVE),
            context_switches: AtomicU64::new(0),
        }
    }

    pub fn ready_len(&self) -> usize {
        self.ready.lock().threads.len()
    }

    fn idle(&self) -> Arc<Thread> {
        self.idle.lock().clone().expect("idle thread")
    }
}

static CPUS: [CpuSched; MAX_CPUS] = [const { CpuSched::new() }; MAX_CPUS];
/// Each core's running thread, and the switch between threads.
static SWITCHER: Once<Switcher<Thread>> = Once::new();

fn switcher() -> &'static Switcher<Thread> {
    SWITCHER.call_once(Switcher::claim)
}

/// Threads waiting to run on `cpu`: how busy it is, for placing work.
pub fn load_of(cpu: usize) -> usize {
    CPUS[cpu].ready_len()
}

pub fn this_cpu() -> &'static CpuSched {
    &CPUS[hal::cpu_index()]
}

/// The timer and reschedule interrupts.
pub fn init() {
    switcher();
    hal::irq::register(TIMER_VECTOR, |_| timer::on_interrupt());
    hal::irq::register(RESCHED_VECTOR, |_| request_resched());
}

/// Makes the running boot context a thread of this CPU. On the boot CPU it is
/// the "main" thread and a fresh idle thread is made; on the others the boot
/// context itself becomes the idle thread.
pub fn init_cpu(index: usize, boot_context_is_idle: bool) {
    let me = &CPUS[index];
    hotplug::reset(index);
    let idle = if boot_context_is_idle {
        let idle = Thread::adopt_running("idle", index, true);
        switcher().adopt(idle.clone());
        idle
    } else {
        switcher().adopt(Thread::adopt_running("main", index, false));
        Thread::new("idle", index, false, Box::new(|| idle_loop()))
    };
    *me.idle.lock() = Some(idle);
}

/// The idle thread: run whatever is ready, else halt until an interrupt;
/// park the core once it is asked to leave.
pub fn idle_loop() -> ! {
    loop {
        cpu::disable_interrupts();
        if hotplug::park_requested() {
            hotplug::park();
        }
        if this_cpu().ready.lock().threads.is_empty() {
            cpu::enable_interrupts_and_halt();
        } else {
            cpu::enable_interrupts();
        }
        schedule();
    }
}

pub fn current() -> Arc<Thread> {
    switcher().running()
}

/// Runs `f` with the thread running here, without a lock or a reference
/// count (the system-call fast path).
pub fn with_current<R>(f: impl FnOnce(&Thread) -> R) -> R {
    switcher().with_running(f)
}

/// Runs `f` with the current thread's id and name, for fault reports:
/// never blocks or allocates, and works before the scheduler does.
pub fn describe_current<R>(f: impl FnOnce(ThreadId, &str) -> R) -> R {
    let mut f = Some(f);
    let described = SWITCHER
        .get()
        .and_then(|s| s.try_with_running(|t| f.take().map(|f| f(t.id, &t.name))))
        .flatten();
    match (described, f) {
        (Some(r), _) => r,
        (None, Some(f)) => f(0, "boot"),
        (None, None) => unreachable!("the description ran but gave nothing"),
    }
}

/// Picks the next thread on this CPU and switches to it. Returns when the
/// calling thread runs again (at once if nothing else is ready).
pub fn schedule() {
    let irqs = cpu::save_and_disable_interrupts();
    let me = this_cpu();
    me.need_resched.store(false, Ordering::Relaxed);
    let prev = current();
    let leaving = hotplug::is_leaving(hal::cpu_index());
    if leaving && !prev.is_idle && prev.cpu() == hal::cpu_index() {
        // Queued on its new core once off this one (Thread::left_cpu).
        prev.set_cpu(hotplug::new_home(&prev));
    }
    let next = if leaving { None } else { pop_mine(me) };
    let next = match next {
        Some(t) => t,
        None if prev.state() == State::Running && prev.cpu() == hal::cpu_index() => {
            cpu::restore_interrupts(irqs);
            return;
        }
        None => me.idle(),
    };
    if Arc::ptr_eq(&prev, &next) {
        next.set_state(State::Running);
        cpu::restore_interrupts(irqs);
        return;
    }
    // A preempted thread is queued here, or, if it moves to another core,
    // there once off this one (Thread::left_cpu); a dead one is freed then.
    // A thread a waker made ready is the waker's to queue.
    if prev.state() == State::Running {
        prev.set_state(State::Ready);
        if prev.is_idle {
            // The idle thread is never queued: schedule() falls back on it.
        } else if prev.cpu() != hal::cpu_index() {
            prev.hand_over.store(true, Ordering::Release);
        } else if !prev.queued.swap(true, Ordering::AcqRel) {
            me.ready.lock().threads.push_back(prev.clone());
        }
    }
    // A thread woken while its old core was still switching it out: that
    // core decides about it (hand over or not) from its state, so it
    // becomes Running only once it is off that core.
    switcher().wait_off_cpu(&next);
    next.set_state(State::Running);
    me.context_switches.fetch_add(1, Ordering::Relaxed);
    timer::rearm_for(&next);
    user::switch(prev.user.as_deref(), next.user.as_deref());
    drop(prev);
    switcher().switch_to(next);
    cpu::restore_interrupts(irqs);
}

/// The next ready thread of this core; one moved to another core while
/// queued here goes there instead.
fn pop_mine(me: &CpuSched) -> Option<Arc<Thread>> {
    loop {
        let t = me.ready.lock().threads.pop_front()?;
        t.queued.store(false, Ordering::Release);
        if t.cpu() == hal::cpu_index() {
            return Some(t);
        }
        enqueue(&t, true);
    }
}

/// Moves the running thread to `cpu`; returns running there. A core that
/// is leaving (or gone) takes nothing: the thread stays where it is.
pub fn migrate_current(cpu: usize) {
    let me = current();
    if me.cpu() == cpu || me.is_idle || !hotplug::active_cpus().any(|c| c == cpu) {
        return;
    }
    me.set_cpu(cpu);
    drop(me);
    schedule();
}

/// Moves thread `t` to core `to`, whatever it is doing: queued elsewhere,
/// its old core hands it on; running, it is switched out there and queued
/// on `to`; blocked, its waker queues it on `to`.
pub fn move_thread(t: &Arc<Thread>, to: usize) {
    let from = t.cpu();
    if from == to || t.is_idle {
        return;
    }
    t.set_cpu(to);
    if from == hal::cpu_index() {
        request_resched();
    } else {
        hal::irq::send(from, RESCHED_VECTOR);
    }
}

/// Queues `t` on its core; a core that has left hands it to a new home.
/// A thread is on one queue at most: one already queued (perhaps on the
/// core it was moved away from, which hands it on) stays where it is.
fn enqueue(t: &Arc<Thread>, kick: bool) {
    if t.queued.swap(true, Ordering::AcqRel) {
        return;
    }
    let cpu = loop {
        let cpu = t.cpu();
        let mut q = CPUS[cpu].ready.lock();
        if !q.gone {
            q.threads.push_back(t.clone());
            break cpu;
        }
        drop(q);
        t.set_cpu(hotplug::new_home(t));
    };
    if cpu == hal::cpu_index() {
        timer::rearm();
    } else if kick {
        hal::irq::send(cpu, RESCHED_VECTOR);
    }
}

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

/// Ends the current thread and wakes its joiners.
pub fn exit_current() -> ! {
    let me = current();
    cpu::disable_interrupts();
    me.mark_finished();
    me.joiners.wake_all(true);
    me.set_state(State::Dead);
    drop(me);
    schedule();
    unreachable!("a dead thread was scheduled again");
}

/// Makes a blocked thread runnable on its own core.
pub fn wake(t: &Arc<Thread>, kick: bool) {
    if t.try_unblock() {
        enqueue(t, kick);
    }
}

/// Makes `t` look at its state soon: woken if it is blocked, interrupted
/// if it runs on another core (it checks on its way back to user mode).
pub fn kick(t: &Arc<Thread>) {
    wake(t, true);
    if t.cpu() != hal::cpu_index() {
        hal::irq::send(t.cpu(), RESCHED_VECTOR);
    }
}

/// Starts a thread made with `Thread::new_user`.
pub fn start(t: &Arc<Thread>) {
    t.mark_blocked();
    wake(t, true);
}

/// Lets other ready threads on this core run.
pub fn yield_now() {
    schedule();
}

/// Called on the way out of an interrupt: switch if asked and allowed.
pub fn preempt_point() {
    let me = this_cpu();
    if !me.need_resched.load(Ordering::Relaxed) {
        return;
    }
    // A thread that has marked itself blocked is on its way into schedule()
    // and may not be registered with its waker (or timer) yet: leave it be.
    let allowed = with_current(|t| {
        t.is_idle
            || (t.preemptive
                && t.state() == State::Running
                && t.no_preempt.load(Ordering::Relaxed) == 0)
    });
    if allowed {
        schedule();
    }
}

/// While it lives, the current thread is not preempted, so it stays on
/// its core (it must not block): for code that works on "this core"
/// with interrupts on. A reschedule asked for meanwhile happens at its end.
pub struct NoPreempt(());

pub fn no_preempt() -> NoPreempt {
    with_current(|t| t.no_preempt.fetch_add(1, Ordering::Relaxed));
    NoPreempt(())
}

impl Drop for NoPreempt {
    fn drop(&mut self) {
        let irqs = cpu::save_and_disable_interrupts();
        if with_current(|t| t.no_preempt.fetch_sub(1, Ordering::Relaxed)) == 1 {
            preempt_point();
        }
        cpu::restore_interrupts(irqs);
    }
}

/// A spawned thread; `join` waits for it and returns its result.
pub struct JoinHandle<T> {
    thread: Arc<Thread>,
    result: Arc<SpinLock<Option<T>>>,
}

impl<T> JoinHandle<T> {
    pub fn join(self) -> T {
        let t = self.thread.clone();
        t.joiners.wait_until(|| t.is_finished());
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
        let cpu = if hal::smp::is_online(self.cpu) || hotplug::is_leaving(self.cpu) {
            self.cpu
        } else {
            0
        };
        let result = Arc::new(SpinLock::new(None));
        let slot = result.clone();
        let thread = Thread::new(
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

/// Sleeps the current thread for at least `ns` nanoseconds.
pub fn sleep_ns(ns: u64) {
    let deadline = cpu::rdtsc() + hal::tsc::ns_to_cycles(ns);
    timer::sleep_until(deadline);
}

/// Asks this core to reschedule on its way out of the interrupt.
pub(crate) fn request_resched() {
    this_cpu().need_resched.store(true, Ordering::Relaxed);
}
