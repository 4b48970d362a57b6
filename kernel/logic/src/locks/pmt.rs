//! The preemptable ticket spinlock (pmtlock), compact-static variant.
//!
//! Ouyang & Lange, "Preemptable Ticket Spinlocks: Improving Consolidated
//! Performance in the Cloud" (VEE 2013).

use super::raw::RawLock;
use core::hint::spin_loop;
use core::sync::atomic::{AtomicU16, AtomicU32, Ordering::*};

/// Low bit of `head`: set while the lock is held.
const HELD: u16 = 1;
/// Tickets are even so that `head`'s low bit is free for [`HELD`].
const TICKET_STEP: u16 = 2;

/// Spin iterations granted per queue position before a waiter may take the
/// lock out of order; 2^10 is the paper's default.
static DEFAULT_TAU: AtomicU32 = AtomicU32::new(1024);

/// Sets the `tau` used by [`RawLock::lock`] on every [`RawPmtLock`].
pub fn set_default_tau(tau: u32) {
    DEFAULT_TAU.store(tau, Relaxed);
}

/// The `tau` used by [`RawLock::lock`] on every [`RawPmtLock`].
pub fn default_tau() -> u32 {
    DEFAULT_TAU.load(Relaxed)
}

/// Preemptable ticket lock.
///
/// *Lock-waiter preemption*: with a strict ticket lock, when the waiter
/// whose turn has come is not running (its vCPU was descheduled), the lock
/// sits free while all later waiters spin uselessly until it runs again.
/// pmtlock bounds that damage: a waiter at queue position `n` spins at most
/// `n * tau` iterations in FIFO order; after that it is *timed out* and may
/// grab the lock whenever it is free, skipping the absent waiter. A
/// skipped waiter, once back, finds `head` past its ticket and is itself
/// timed out immediately, so it still gets in.
///
/// Layout: waiters draw even tickets from `tail`; `head` is the even value
/// "now serving" plus 1 (the held bit) while held. Acquiring is a CAS of `head` from
/// an even `h` to `h + 1`, which is what keeps mutual exclusion independent
/// of ticket order; releasing is one `fetch_add(1)` that both clears the
/// held bit and advances to the next ticket. Each ticket acquires exactly
/// once, so `head` catches up with `tail` when everyone is done.
///
/// The threshold is *static*: computed once from the queue position seen at
/// request time. `tau = 0` degenerates to a test-and-set lock (any waiter
/// may take a free lock at once); `tau = u32::MAX` approximates a strict
/// ticket lock (the timeout is billions of spins per position).
///
/// Counters are `u16` and wrap; at most 16383 waiters may queue at once.
pub struct RawPmtLock {
    /// Even "now serving" ticket, plus [`HELD`] while the lock is held.
    head: AtomicU16,
    /// Next ticket to hand out (always even).
    tail: AtomicU16,
}

impl RawPmtLock {
    /// An unlocked lock.
    pub const fn new() -> Self {
        Self::with_counters(0, 0)
    }

    /// A lock whose counters start at arbitrary values (wrap-around tests).
    pub(crate) const fn with_counters(head: u16, tail: u16) -> Self {
        Self { head: AtomicU16::new(head), tail: AtomicU16::new(tail) }
    }

    /// Acquires the lock, allowing out-of-order entry after `tau` spins per
    /// waiter ahead in the queue (see the type docs).
    pub fn lock_with_tau(&self, tau: u32) {
        let ticket = self.tail.fetch_add(TICKET_STEP, Relaxed);
        self.acquire_ticket(ticket, tau);
    }

    /// Waits for `ticket`'s turn, or for its timeout and a free lock.
    fn acquire_ticket(&self, ticket: u16, tau: u32) {
        let snapshot = self.head.load(Relaxed);
        if snapshot == ticket && self.take(snapshot) {
            return;
        }
        let timeout = queue_position(ticket, snapshot).saturating_mul(u64::from(tau));
        let mut spins: u64 = 0;
        loop {
            let head = self.head.load(Relaxed);
            let free = head & HELD == 0;
            if free && (head == ticket || spins >= timeout) && self.take(head) {
                return;
            }
            spin_loop();
            spins = spins.saturating_add(1);
        }
    }

    /// Tries to move `head` from the free value `head` to held.
    fn take(&self, head: u16) -> bool {
        self.head.compare_exchange(head, head | HELD, Acquire, Relaxed).is_ok()
    }
}

/// Waiters ahead of `ticket` (counting the holder) given a `head` snapshot.
///
/// Tickets wrap, so the distance is taken as a signed 16-bit difference. A
/// negative distance means `head` already passed the ticket (it was skipped
/// by timed-out waiters): position 0, no reason to wait in line.
fn queue_position(ticket: u16, head: u16) -> u64 {
    let distance = ticket.wrapping_sub(head & !HELD) as i16;
    if distance <= 0 {
        0
    } else {
        (distance as u64) / u64::from(TICKET_STEP)
    }
}

impl Default for RawPmtLock {
    fn default() -> Self {
        Self::new()
    }
}

impl RawLock for RawPmtLock {
    fn lock(&self) {
        self.lock_with_tau(default_tau());
    }

    /// Succeeds only when the lock is free with no waiters (`head == tail`).
    ///
    /// It first claims ticket `t = head` by moving `tail` from `t` to
    /// `t + 2`; that ticket is then next in line and the CAS on `head`
    /// normally succeeds at once. A waiter that arrives right after us with
    /// an expired timeout (e.g. `tau = 0`) can win that CAS, though. A
    /// ticket cannot be handed back (every ticket must acquire once so
    /// `head` catches up with `tail`), so in that rare case we wait like a
    /// regular waiter. Our ticket is then behind `head`, so we are timed out
    /// immediately and only wait out that one critical section.
    fn try_lock(&self) -> bool {
        let head = self.head.load(Acquire);
        if head & HELD != 0 || self.tail.load(Relaxed) != head {
            return false;
        }
        if self
            .tail
            .compare_exchange(head, head.wrapping_add(TICKET_STEP), Relaxed, Relaxed)
            .is_err()
        {
            return false;
        }
        if !self.take(head) {
            self.acquire_ticket(head, default_tau());
        }
        true
    }

    fn unlock(&self) {
        self.head.fetch_add(1, Release);
    }

    fn is_locked(&self) -> bool {
        let head = self.head.load(Relaxed);
        head & HELD != 0 || head != self.tail.load(Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{arrival_order, contention_threads, hammer, wait_until};
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;

    impl RawPmtLock {
        /// Draws a ticket without waiting, simulating a waiter that got
        /// preempted right after queueing.
        fn take_ticket(&self) -> u16 {
            self.tail.fetch_add(TICKET_STEP, Relaxed)
        }

        /// Tickets drawn but not yet served, including the holder's.
        fn tickets_outstanding(&self) -> usize {
            let served = self.head.load(Relaxed) & !HELD;
            (self.tail.load(Relaxed).wrapping_sub(served) / TICKET_STEP) as usize
        }
    }

    #[test]
    fn mutual_exclusion_default_tau() {
        let lock = RawPmtLock::new();
        hammer(&lock, contention_threads(), 100_000, |l| l.lock());
    }

    #[test]
    fn mutual_exclusion_test_and_set_mode() {
        let lock = RawPmtLock::new();
        hammer(&lock, contention_threads(), 100_000, |l| l.lock_with_tau(0));
    }

    #[test]
    fn mutual_exclusion_mixed_taus_and_try_lock() {
        let lock = RawPmtLock::new();
        let n = std::sync::atomic::AtomicU32::new(0);
        hammer(&lock, contention_threads(), 50_000, |l| {
            let i = n.fetch_add(1, Relaxed);
            match i % 3 {
                0 => l.lock_with_tau(0),
                1 => l.lock_with_tau(64),
                _ => {
                    while !l.try_lock() {
                        std::hint::spin_loop();
                    }
                }
            }
        });
    }

    #[test]
    fn fifo_when_nobody_is_slow() {
        let lock = RawPmtLock::new();
        let order =
            arrival_order(&lock, 8, |l| l.lock_with_tau(u32::MAX), |l| l.tickets_outstanding());
        assert_eq!(order, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn timed_out_waiter_skips_absent_ticket_holder() {
        let lock = RawPmtLock::new();
        let absent = lock.take_ticket();
        // Position 1, tau 1000: enters after ~1000 spins despite the
        // earlier ticket never showing up.
        std::thread::scope(|s| {
            s.spawn(|| {
                lock.lock_with_tau(1000);
                lock.unlock();
            });
        });
        assert!(lock.is_locked(), "the absent waiter is still queued");
        // When it shows up, head is past its ticket: it enters at once.
        lock.acquire_ticket(absent, u32::MAX);
        lock.unlock();
        assert!(!lock.is_locked());
        assert_eq!(lock.head.load(Relaxed), lock.tail.load(Relaxed));
    }

    #[test]
    fn huge_tau_waits_for_absent_ticket_holder() {
        let lock = RawPmtLock::new();
        let absent = lock.take_ticket();
        let entered = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                lock.lock_with_tau(u32::MAX);
                entered.store(true, Relaxed);
                lock.unlock();
            });
            wait_until(|| lock.tickets_outstanding() == 2);
            std::thread::sleep(Duration::from_millis(100));
            assert!(!entered.load(Relaxed), "strict FIFO must wait for the earlier ticket");
            lock.acquire_ticket(absent, u32::MAX);
            lock.unlock();
        });
        assert!(entered.load(Relaxed));
        assert!(!lock.is_locked());
    }

    #[test]
    fn try_lock_semantics() {
        let lock = RawPmtLock::new();
        assert!(lock.try_lock());
        assert!(lock.is_locked());
        assert!(!lock.try_lock());
        lock.unlock();
        assert!(!lock.is_locked());
        // A queued (absent) waiter makes the lock busy even though free.
        let absent = lock.take_ticket();
        assert!(!lock.try_lock());
        lock.acquire_ticket(absent, 0);
        lock.unlock();
        assert!(lock.try_lock());
        lock.unlock();
        assert!(!lock.is_locked());
    }

    #[test]
    fn queue_position_handles_wrap_and_skips() {
        assert_eq!(queue_position(10, 10), 0);
        assert_eq!(queue_position(14, 11), 2);
        assert_eq!(queue_position(2, u16::MAX - 1), 2);
        assert_eq!(queue_position(0, u16::MAX), 1);
        assert_eq!(queue_position(8, 12), 0, "already skipped");
        assert_eq!(queue_position(u16::MAX - 1, 2), 0, "skipped across the wrap");
    }

    #[test]
    fn counters_wrap_around() {
        let start = u16::MAX - 5; // even
        let lock = RawPmtLock::with_counters(start, start);
        for _ in 0..6 {
            assert!(!lock.is_locked());
            lock.lock_with_tau(u32::MAX);
            assert!(lock.is_locked());
            assert!(!lock.try_lock());
            lock.unlock();
            assert!(lock.try_lock());
            lock.unlock();
        }
        assert_eq!(lock.head.load(Relaxed), start.wrapping_add(24));
        // Out-of-order entry across the wrap.
        let lock = RawPmtLock::with_counters(start + 4, start + 4);
        let absent = lock.take_ticket();
        lock.lock_with_tau(10);
        lock.unlock();
        lock.acquire_ticket(absent, 10);
        lock.unlock();
        assert!(!lock.is_locked());
        let lock = RawPmtLock::with_counters(start, start);
        hammer(&lock, contention_threads(), 20_000, |l| l.lock());
    }

    #[test]
    fn default_tau_is_settable() {
        assert_eq!(default_tau(), 1024);
        set_default_tau(7);
        assert_eq!(default_tau(), 7);
        set_default_tau(1024);
    }
}
