//! The one-slot message path's length, for `kmsg-bench`'s polling mode
//! (test image): TSC ticks from the call that polls the ring to the entry
//! of the message's handler (receive), and from the call into `send` to
//! its return (send), each the least over the rounds, less what reading
//! the TSC itself takes. Under QEMU's -icount the TSC counts instructions
//! (2^shift ticks each), so these are exact instruction counts on any host.

use core::sync::atomic::{AtomicU64, Ordering};

use hal::cpu;
use hal::println;

static HANDLER_AT: AtomicU64 = AtomicU64::new(0);
static RECEIVE: AtomicU64 = AtomicU64::new(u64::MAX);
static SEND: AtomicU64 = AtomicU64::new(u64::MAX);

/// Starts counting afresh (the responder, before its rounds).
pub fn reset() {
    HANDLER_AT.store(0, Ordering::Relaxed);
    RECEIVE.store(u64::MAX, Ordering::Relaxed);
    SEND.store(u64::MAX, Ordering::Relaxed);
}

/// First thing in the handler.
#[inline(always)]
pub fn handler_entered() {
    HANDLER_AT.store(cpu::rdtsc(), Ordering::Relaxed);
}

/// After a poll that began at `t0`: counts it if the handler ran in it.
#[inline(always)]
pub fn polled(t0: u64) {
    let at = HANDLER_AT.load(Ordering::Relaxed);
    if at > t0 {
        RECEIVE.fetch_min(at - t0, Ordering::Relaxed);
    }
}

/// Times `send` (the call into the send function until it returns).
#[inline(always)]
pub fn timed_send<T>(send: impl FnOnce() -> T) -> T {
    let t0 = cpu::rdtsc();
    let r = send();
    SEND.fetch_min(cpu::rdtsc() - t0, Ordering::Relaxed);
    r
}

/// Prints the counts, for bench/smoke_bench.py.
pub fn report() {
    let (receive, send) = (RECEIVE.load(Ordering::Relaxed), SEND.load(Ordering::Relaxed));
    if receive == u64::MAX || send == u64::MAX {
        println!("kmsg-path: lwk: no one-slot message was received and answered");
        return;
    }
    let tsc = rdtsc_cost();
    println!(
        "kmsg-path: lwk send={} receive={} ticks (the TSC's own read, {}, taken off)",
        send.saturating_sub(tsc),
        receive.saturating_sub(tsc),
        tsc
    );
}

/// Ticks between two reads of the TSC back to back (the least of a few).
fn rdtsc_cost() -> u64 {
    (0..16)
        .map(|_| {
            let t0 = cpu::rdtsc();
            cpu::rdtsc() - t0
        })
        .min()
        .unwrap_or(0)
}
