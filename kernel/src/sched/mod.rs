//! Per-core scheduling. Every core has its own run queue and idle thread;
//! a thread stays on its core unless it is moved (`move_thread`: its core
//! leaves, or a new core takes some of the work). Cross-core wake-ups put
//! the thread on its core's queue and (by default) kick that core.
//!
//! This file only gathers the parts, and nothing in sched/ imports it. Each
//! part imports only parts listed before it: thread (a thread's data), user
//! (what a program's thread adds), cpus (each core's run queue), running
//! (each core's running thread), oneshot (each core's timer and sleepers),
//! switch (the core: schedule, wake, preemption), timer (sleeping, the timer
//! interrupt), wait (waiting on a list), spawn (threads' start, end and
//! join), hotplug (cores leaving), idle (a core's start and idle thread).

mod cpus;
pub mod hotplug;
mod idle;
mod oneshot;
mod running;
mod spawn;
mod switch;
mod thread;
pub mod timer;
pub mod user;
pub mod wait;

pub use cpus::{load_of, this_cpu};
pub use idle::{idle_loop, init_cpu};
pub use running::{current, describe_current, with_current};
pub use spawn::{exit_current, spawn, start};
// Only the self-tests and benchmarks name these.
use atoll_abi::{RESCHED_VECTOR, TIMER_VECTOR};
#[cfg(feature = "testing")]
pub use spawn::{JoinHandle, Spawn};
pub(crate) use switch::request_resched;
pub use switch::yield_now;
pub use switch::{
    hold, kick, migrate_current, move_thread, no_preempt, preempt_point, schedule, wake, wake_first,
};
#[cfg(feature = "testing")]
pub use thread::State;
pub use thread::Waiters;
pub use timer::sleep_ns;
pub use user::Thread;

/// The timer and reschedule interrupts.
pub fn init() {
    running::switcher();
    hal::irq::register(TIMER_VECTOR, |_| timer::on_interrupt());
    hal::irq::register(RESCHED_VECTOR, |_| request_resched());
}
