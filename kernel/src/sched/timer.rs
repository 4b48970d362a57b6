//! Sleeping, and the timer interrupt that ends sleeps and time slices.
//! Each core's list of sleepers and its timer are oneshot.rs's.

use hal::cpu;

use super::oneshot;
// The self-tests' measures.
#[cfg(feature = "testing")]
pub use super::oneshot::{interrupts_on, QUANTUM_NS};
use super::running::current;
use super::switch::{request_resched, schedule, wake};

/// Sleeps the current thread for at least `ns` nanoseconds.
pub fn sleep_ns(ns: u64) {
    let deadline = cpu::rdtsc() + hal::tsc::ns_to_cycles(ns);
    sleep_until(deadline);
}

pub fn sleep_until(deadline: u64) {
    current().mark_blocked();
    block_until(Some(deadline));
}

/// Blocks the current thread, which the caller has already marked blocked
/// and made findable by its waker, until it is woken or, with a deadline,
/// until then. Returns true if the deadline passed.
pub fn block_until(deadline: Option<u64>) -> bool {
    let irqs = cpu::save_and_disable_interrupts();
    let me = current();
    if let Some(d) = deadline {
        oneshot::add(&me, d);
    }
    schedule();
    cpu::restore_interrupts(irqs);
    let Some(d) = deadline else { return false };
    // Woken early: take the timer entry back so it cannot wake a later block.
    oneshot::cancel(&me);
    cpu::rdtsc() >= d
}

/// The timer interrupt: wake expired sleepers, ask for a reschedule.
pub(super) fn on_interrupt() {
    for th in &oneshot::fired() {
        wake(th, true); // a sleeper moved elsewhere needs its core woken
    }
    request_resched();
    oneshot::rearm();
}
