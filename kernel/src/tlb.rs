//! TLB shootdown: after a program's mappings shrink, every other core that
//! ran one of its threads drops its cached translations before the freed
//! frames can be reused (a program on one core never sends an IPI); after
//! lent memory is unmapped from the kernel's map, every core does. Kernel
//! pages are not global, so reloading CR3 drops both.

use atoll_abi::SHOOTDOWN_VECTOR;
use core::sync::atomic::{AtomicU64, Ordering};

use hal::{
    cpu, paging,
    percpu::{self, MAX_CPUS},
};

/// Per core: flush requests taken (a ticket counter) and completed.
static REQUESTED: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];
static DONE: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];
/// Per core index: CPUs started there so far (a new one owes no old flush).
static STARTS: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];

pub fn init() {
    hal::irq::register(SHOOTDOWN_VECTOR, |_| {
        let me = percpu::cpu_index();
        let upto = REQUESTED[me].load(Ordering::Acquire);
        paging::flush_user_tlb();
        DONE[me].fetch_max(upto, Ordering::AcqRel);
    });
}

/// Flushes this core and every other core that ran a program on the
/// address space (`ran_on` of each process on it, a bit per core, which a
/// core sets with a locked instruction before it runs the program), and
/// waits.
pub fn shootdown(ran_on: &[&AtomicU64]) {
    // The page-table changes before the read of ran_on (a store may
    // otherwise pass the load): a core not in it yet walks the new tables.
    core::sync::atomic::fence(Ordering::SeqCst);
    flush_cores(ran_on.iter().fold(0, |cores, r| cores | r.load(Ordering::Acquire)));
}

fn flush_cores(cores: u64) {
    // The thread stays on this core: the one it flushes itself.
    let _stay = crate::sched::no_preempt();
    paging::flush_user_tlb();
    let me = percpu::cpu_index();
    let online = hal::smp::online_cpus().fold(0u64, |mask, c| mask | 1 << c);
    let others = cores & online & !(1u64 << me);
    if others == 0 {
        return;
    }
    let mut tickets = [(0u64, 0u64); MAX_CPUS];
    for c in (0..MAX_CPUS).filter(|c| others & (1 << c) != 0) {
        let start = STARTS[c].load(Ordering::Acquire);
        tickets[c] = (REQUESTED[c].fetch_add(1, Ordering::AcqRel) + 1, start);
        hal::irq::send(c, SHOOTDOWN_VECTOR);
    }
    for c in (0..MAX_CPUS).filter(|c| others & (1 << c) != 0) {
        // A CPU that parks meanwhile never answers; one started at its
        // index since then began with fresh tables.
        let (ticket, start) = tickets[c];
        while DONE[c].load(Ordering::Acquire) < ticket
            && hal::smp::is_online(c)
            && STARTS[c].load(Ordering::Acquire) == start
        {
            cpu::relax();
        }
    }
}

/// A CPU starting at `cpu` owes no flush asked of the one before it.
pub fn cpu_starting(cpu: usize) {
    STARTS[cpu].fetch_add(1, Ordering::AcqRel);
    DONE[cpu].fetch_max(REQUESTED[cpu].load(Ordering::Acquire), Ordering::AcqRel);
}

/// Flushes every online core, and waits (after unmapping lent memory).
pub fn flush_everywhere() {
    flush_cores(u64::MAX); // flush_cores keeps the online ones
}
