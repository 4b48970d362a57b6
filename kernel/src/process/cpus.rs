//! What happens to programs' cores (cpu_set.rs) when the enclave grows or
//! shrinks: a program started on the whole enclave gets each core added
//! and some of its threads move there; a core that leaves is taken out of
//! every program's set and thread's affinity, and its threads get new
//! homes (a thread pinned to that core alone is pinned to its new one).

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::Ordering;

use super::programs;
use super::types::UserThread;
use crate::sched::{self, hotplug, Thread};

fn active_mask() -> u64 {
    hotplug::active_cpus().fold(0, |m, c| m | 1 << c)
}

/// The cores `u` may run on: its own affinity within its program's set,
/// or the whole set.
pub fn allowed(u: &UserThread) -> u64 {
    let set = u.process.cpus.mask();
    match u.affinity.load(Ordering::Acquire) & set {
        0 => set,
        mine => mine,
    }
}

/// A new core for a program thread whose core leaves: the least busy one
/// it may use; None if it may use none that stays.
pub fn home_for(u: &UserThread) -> Option<usize> {
    let allowed = allowed(u) & active_mask();
    (0..hal::MAX_CPUS).filter(|&c| allowed & 1 << c != 0).min_by_key(|&c| sched::load_of(c))
}

fn each_program_thread(mut f: impl FnMut(&Arc<Thread>, &UserThread)) {
    for p in programs::all_processes() {
        for t in p.threads_now() {
            if let Some(u) = UserThread::of(&t) {
                f(&t, u);
            }
        }
    }
}

/// Core `cpu` is leaving: out of every program's set and affinity, and
/// every program thread there moves to a core it may use.
pub fn cpu_leaving(cpu: usize) {
    let bit = 1u64 << cpu;
    for p in programs::all_processes() {
        let left = p.cpus.mask.fetch_and(!bit, Ordering::AcqRel) & !bit;
        if left & active_mask() == 0 {
            p.cpus.mask.store(1, Ordering::Release); // the boot core never leaves
        }
        p.area.set_cpus(p.cpus.mask());
    }
    each_program_thread(|t, u| {
        let had = u.affinity.fetch_and(!bit, Ordering::AcqRel);
        if t.cpu() != cpu {
            return;
        }
        let to = home_for(u).unwrap_or(0);
        if had & !bit & u.process.cpus.mask() == 0 && had != 0 {
            u.affinity.store(1 << to, Ordering::Release);
        }
        sched::move_thread(t, to);
    });
}

/// Core `cpu` has joined: programs started on the whole enclave get it, and
/// their threads spread so no core runs two more of them than another.
pub fn cpu_joined(cpu: usize) {
    let bit = 1u64 << cpu;
    for p in programs::all_processes().into_iter().filter(|p| p.cpus.whole_enclave) {
        p.cpus.mask.fetch_or(bit, Ordering::AcqRel);
        p.area.set_cpus(p.cpus.mask());
        let threads: Vec<Arc<Thread>> = p.threads_now();
        let mut load = [0usize; hal::MAX_CPUS];
        for t in &threads {
            load[t.cpu().min(hal::MAX_CPUS - 1)] += 1;
        }
        loop {
            let busiest = (0..hal::MAX_CPUS).max_by_key(|&c| load[c]).unwrap_or(0);
            if load[busiest] < load[cpu] + 2 {
                break;
            }
            let movable = threads.iter().find(|t| {
                t.cpu() == busiest
                    && UserThread::of(t).is_some_and(|u| allowed(u) & bit != 0 && !u.must_leave())
            });
            let Some(t) = movable else { break };
            sched::move_thread(t, cpu);
            load[busiest] -= 1;
            load[cpu] += 1;
        }
    }
}
