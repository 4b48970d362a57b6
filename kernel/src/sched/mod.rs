//! Per-core scheduling. Every core has its own run queue and idle thread;
//! threads never migrate. Cross-core wake-ups put the thread on its core's
//! queue and (by default) kick that core with an IPI.

mod thread;
pub mod timer;

use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Once;

use crate::arch::{self, cpu, percpu::MAX_CPUS};
use crate::sync::SpinLock;
pub use thread::{State, Thread, ThreadId};

pub struct CpuSched {
    ready: SpinLock<VecDeque<Arc<Thread>>>,
    current: SpinLock<Option<Arc<Thread>>>,
    idle: Once<Arc<Thread>>,
    /// A thread that died and whose stack we are leaving; freed after the switch.
    zombie: SpinLock<Option<Arc<Thread>>>,
    /// A thread moving to another core; queued there once off this stack.
    migrating: SpinLock<Option<Arc<Thread>>>,
    pub(crate) need_resched: AtomicBool,
    pub context_switches: AtomicU64,
}

impl CpuSched {
    const fn new() -> Self {
        CpuSched {
            ready: SpinLock::new(VecDeque::new()),
            current: SpinLock::new(None),
            idle: Once::new(),
            zombie: SpinLock::new(None),
            migrating: SpinLock::new(None),
            need_resched: AtomicBool::new(false),
            context_switches: AtomicU64::new(0),
        }
    }

    pub fn ready_len(&self) -> usize {
        self.ready.lock().len()
    }
}

static CPUS: [CpuSched; MAX_CPUS] = [const { CpuSched::new() }; MAX_CPUS];

pub fn this_cpu() -> &'static CpuSched {
    &CPUS[arch::percpu::cpu_index()]
}

/// Makes the running boot context a thread of this CPU. On the boot CPU it is
/// the "main" thread and a fresh idle thread is made; on the others the boot
/// context itself becomes the idle thread.
pub fn init_cpu(index: usize, boot_context_is_idle: bool) {
    let me = &CPUS[index];
    if boot_context_is_idle {
        let idle = Thread::adopt_running("idle", index, true);
        arch::percpu::set_running(&idle);
        me.idle.call_once(|| idle.clone());
        *me.current.lock() = Some(idle);
    } else {
        let main = Thread::adopt_running("main", index, false);
        arch::percpu::set_running(&main);
        *me.current.lock() = Some(main);
        me.idle.call_once(|| Thread::new("idle", index, false, Box::new(|| { idle_loop(); })));
    }
}

/// The idle thread: run whatever is ready, else halt until an interrupt.
pub fn idle_loop() -> ! {
    loop {
        cpu::disable_interrupts();
        if this_cpu().ready.lock().is_empty() {
            cpu::enable_interrupts_and_halt();
        } else {
            cpu::enable_interrupts();
        }
        schedule();
    }
}

pub fn current() -> Arc<Thread> {
    this_cpu().current.lock().clone().expect("scheduler not initialised on this CPU")
}

/// (id, name) of the current thread, for fault reports; never blocks.
pub fn describe_current() -> (ThreadId, alloc::string::String) {
    match this_cpu().current.try_lock() {
        Some(g) => g.as_ref().map_or((0, "none".into()), |t| (t.id, t.name.clone())),
        None => (0, "?".into()),
    }
}

/// Picks the next thread on this CPU and switches to it. Returns when the
/// calling thread runs again (at once if nothing else is ready).
pub fn schedule() {
    let irqs = cpu::save_and_disable_interrupts();
    let me = this_cpu();
    me.need_resched.store(false, Ordering::Relaxed);
    let prev = current();
    let next = me.ready.lock().pop_front();
    let next = match next {
        Some(t) => t,
        None if prev.state() == State::Running && prev.cpu() == arch::percpu::cpu_index() => {
            cpu::restore_interrupts(irqs);
            return;
        }
        None => me.idle.get().expect("idle thread").clone(),
    };
    if Arc::ptr_eq(&prev, &next) {
        next.set_state(State::Running);
        cpu::restore_interrupts(irqs);
        return;
    }
    if prev.state() == State::Running {
        prev.set_state(State::Ready);
        if prev.cpu() != arch::percpu::cpu_index() {
            *me.migrating.lock() = Some(prev.clone());
        } else if !prev.is_idle {
            me.ready.lock().push_back(prev.clone());
        }
    }
    if prev.state() == State::Dead {
        *me.zombie.lock() = Some(prev.clone());
    }
    next.set_state(State::Running);
    arch::percpu::set_running(&next);
    *me.current.lock() = Some(next.clone());
    me.context_switches.fetch_add(1, Ordering::Relaxed);
    timer::rearm();
    crate::process::switch_threads(&prev, &next);
    switch(prev, next);
    finish_switch();
    cpu::restore_interrupts(irqs);
}

/// Switches stacks. Both threads stay referenced elsewhere (run queue, wait
/// queue, `current` or `zombie`), so the Arcs can be dropped first: a dead
/// thread never returns here to drop them.
#[allow(unsafe_code)]
fn switch(prev: Arc<Thread>, next: Arc<Thread>) {
    let (p, n) = (Arc::as_ptr(&prev), Arc::as_ptr(&next));
    drop(prev);
    drop(next);
    // SAFETY: both threads are kept alive by the scheduler's own references
    // (see above) until `prev` is resumed or reaped by finish_switch();
    // interrupts are off, and `next` is a suspended context of this CPU.
    unsafe { arch::context::switch(&(*p).context, &(*n).context) };
}

/// Runs on the new thread right after a switch: frees a dead predecessor
/// and hands a migrating one to its new core.
fn finish_switch() {
    let zombie = this_cpu().zombie.lock().take();
    drop(zombie);
    let moving = this_cpu().migrating.lock().take();
    if let Some(t) = moving {
        enqueue(&t, true);
    }
}

/// Moves the running thread to `cpu`; returns running there.
pub fn migrate_current(cpu: usize) {
    let me = current();
    if me.cpu() == cpu || me.is_idle {
        return;
    }
    assert!(crate::smp::is_online(cpu), "CPU {} is not online", cpu);
    me.set_cpu(cpu);
    drop(me);
    schedule();
}

fn enqueue(t: &Arc<Thread>, kick: bool) {
    let cpu = t.cpu();
    CPUS[cpu].ready.lock().push_back(t.clone());
    if cpu == arch::percpu::cpu_index() {
        timer::rearm();
    } else if kick {
        crate::ipi::send(cpu, crate::ipi::RESCHED_VECTOR);
    }
}

/// First Rust code of every new thread.
pub fn thread_start() -> ! {
    finish_switch();
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
    let allowed = me
        .current
        .lock()
        .as_ref()
        .map_or(false, |t| t.is_idle || (t.preemptive && t.state() == State::Running));
    if allowed {
        schedule();
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

    pub fn preemptive(mut self) -> Self {
        self.preemptive = true;
        self
    }

    pub fn start<T, F>(self, f: F) -> JoinHandle<T>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        assert!(crate::smp::is_online(self.cpu), "CPU {} is not online", self.cpu);
        let result = Arc::new(SpinLock::new(None));
        let slot = result.clone();
        let thread = Thread::new(self.name, self.cpu, self.preemptive, Box::new(move || {
            let v = f();
            *slot.lock() = Some(v);
        }));
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
    let deadline = cpu::rdtsc() + arch::tsc::ns_to_cycles(ns);
    timer::sleep_until(deadline);
}
