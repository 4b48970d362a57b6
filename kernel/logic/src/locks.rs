//! Spinlock algorithms used by the kernel and benchmarked against each other.
//!
//! Both locks here are *raw*: they guard no data, they only order critical
//! sections. The kernel wraps them in its own guard types.
//!
//! * [`RawTicketLock`] — the classic FIFO ticket lock: fair, but if the waiter
//!   whose turn is next has been preempted (lock-waiter preemption, common for
//!   virtual CPUs), every waiter behind it stalls until it runs again.
//! * [`RawPmtLock`] — Ouyang & Lange's preemptable ticket lock, which keeps FIFO
//!   order while everyone is responsive but lets a waiter that has waited
//!   "long enough" take a free lock out of order.

mod pmt;
mod raw;
mod ticket;

pub use pmt::{default_tau, set_default_tau, RawPmtLock};
pub use raw::RawLock;
pub use ticket::RawTicketLock;

#[cfg(test)]
mod test_support;
