//! Per-thread CPU time, split into user and system time, as getrusage,
//! times and the CPU-time clocks report it. Each thread charges the time
//! since its last transition (into or out of the kernel, onto or off its
//! core) to the mode it was in; only its own core writes its counters.

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use hal::{cpu, tsc};

pub struct CpuTime {
    user: AtomicU64,
    system: AtomicU64,
    /// TSC of the last transition while on its core.
    since: AtomicU64,
    in_kernel: AtomicBool,
}

/// (user, system) in ns.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Times {
    pub user_ns: u64,
    pub system_ns: u64,
}

impl Times {
    pub fn total_ns(self) -> u64 {
        self.user_ns + self.system_ns
    }

    pub fn add(self, other: Times) -> Times {
        Times { user_ns: self.user_ns + other.user_ns, system_ns: self.system_ns + other.system_ns }
    }
}

impl CpuTime {
    /// A thread is born in the kernel, on its way to user mode.
    pub fn new() -> Self {
        CpuTime {
            user: AtomicU64::new(0),
            system: AtomicU64::new(0),
            since: AtomicU64::new(cpu::rdtsc()),
            in_kernel: AtomicBool::new(true),
        }
    }

    fn charge(&self) {
        let now = cpu::rdtsc();
        let spent = now.saturating_sub(self.since.swap(now, Ordering::Relaxed));
        let bucket = if self.in_kernel.load(Ordering::Relaxed) { &self.system } else { &self.user };
        bucket.fetch_add(spent, Ordering::Relaxed);
    }

    /// A system call begins (user time ends).
    pub fn enter_kernel(&self) {
        self.charge();
        self.in_kernel.store(true, Ordering::Relaxed);
    }

    /// Back to user mode.
    pub fn leave_kernel(&self) {
        self.charge();
        self.in_kernel.store(false, Ordering::Relaxed);
    }

    /// The thread leaves its core (it is in the kernel then, or was
    /// preempted in user mode).
    pub fn switch_out(&self) {
        self.charge();
    }

    pub fn switch_in(&self) {
        self.since.store(cpu::rdtsc(), Ordering::Relaxed);
    }

    /// Its times so far; `running_here`: the caller is this thread, whose
    /// time since the last transition counts too.
    pub fn times(&self, running_here: bool) -> Times {
        if running_here {
            self.charge();
        }
        Times {
            user_ns: tsc::cycles_to_ns(self.user.load(Ordering::Relaxed)),
            system_ns: tsc::cycles_to_ns(self.system.load(Ordering::Relaxed)),
        }
    }
}
