//! User programs: any number of processes per enclave (one program area
//! each), their threads (round robin over their cores), address spaces,
//! and their lives from the host's "create" to the memory's release.
//! Arrive from the host in `launch`.
//!
//! This file only gathers the parts, and nothing in process/ imports it.
//! Each part imports only parts listed before it. First the leaves, the
//! state each part keeps in a process or thread: area (the program area
//! shared with the host), call_times, cputime, vdso, cpu_set (a program's
//! cores), sigstate (signal numbers, pending sets, dispositions), itimer
//! (timers), in_flight (delegated calls in flight), family_tree (parent,
//! children, group, server), exec_state, lending (vfork's), futex_queue.
//! Then types (`Process` and `UserThread`), vfork (whose memory a process
//! runs on; what `mm::uaccess` reads and writes it through), memory (the
//! stack, faults, shootdowns), signal (sending, waiting, delivery), futex,
//! itimer_thread (arming timers), programs (the enclave's programs by
//! area), cpus (cores joining and leaving), unserved (children without a
//! server yet), family (groups, a child's end, wait), xemem, ending (a
//! program's end), call_slots (delegated calls posted and answered),
//! deferred_server (a forked child's server made), delegate (a thread's
//! delegated calls), thread (a program's threads: start, end, faults),
//! hrt (the hybrid-runtime API's calls), exec (execve), launch (the host's
//! requests), fork.

mod area;
pub mod call_slots;
mod call_times;
mod cpu_set;
pub mod cpus;
pub mod cputime;
pub mod deferred_server;
pub mod delegate;
mod ending;
pub mod exec;
mod exec_state;
pub mod family;
mod family_tree;
pub mod fork;
mod futex;
mod futex_queue;
pub mod hrt;
mod in_flight;
pub mod itimer;
pub mod itimer_thread;
pub mod launch;
mod lending;
mod memory;
pub mod programs;
pub mod signal;
pub mod sigstate;
mod thread;
mod types;
mod unserved;
mod vdso;
pub mod vfork;
pub mod xemem;

pub use cpus::cpu_joined;
pub use memory::with_both_vms;
pub use thread::{
    exit_current_thread, return_current_to_user, return_to_user, spawn_user_thread, user_fault,
};
pub use types::{new_tid, Process, UserThread};
