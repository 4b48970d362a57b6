//! Cores leaving and joining the running kernel (`atoll remove/add --cpus`).
//! A leaving core is marked LEAVING: nothing new is placed there, the
//! program threads it runs are given new homes (user::cpu_leaving), and
//! the thread running there is switched out at its next chance and moved.
//! Its idle thread then parks it: threads still queued there go to their
//! new homes, its sleepers' timers to the boot core, and the core halts
//! for the host to take back. Threads blocked with the core as home move
//! when they are woken (`enqueue` finds its queue gone).

use core::sync::atomic::Ordering;
use lwk_logic::errno::{Errno, EBUSY, EINVAL, ETIMEDOUT};

pub use super::cpus::active_cpus;
use super::cpus::{new_home, ACTIVE, CPUS, LEAVING, PARKING};
use super::oneshot;
use super::running::switcher;
use super::switch::enqueue;
use super::timer::sleep_ns;
use super::user;
use atoll_abi::RESCHED_VECTOR;

/// Asks core `cpu` to leave and waits until it is parked. If it is not
/// parked within `timeout_ns` (a kernel thread that never yields holds
/// it), it stays as it was and the program threads moved away may come
/// back (user::cpu_joined).
pub fn take_down(cpu: usize, timeout_ns: u64) -> Result<(), Errno> {
    if cpu == 0 || !hal::smp::is_online(cpu) {
        return Err(EINVAL);
    }
    let me = &CPUS[cpu];
    if me.presence.compare_exchange(ACTIVE, LEAVING, Ordering::AcqRel, Ordering::Acquire).is_err() {
        return Err(EBUSY);
    }
    user::cpu_leaving(cpu);
    hal::irq::send(cpu, RESCHED_VECTOR);
    let deadline = hal::cpu::rdtsc() + hal::tsc::ns_to_cycles(timeout_ns);
    while hal::smp::is_online(cpu) {
        if hal::cpu::rdtsc() > deadline
            && me
                .presence
                .compare_exchange(LEAVING, ACTIVE, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            user::cpu_joined(cpu);
            return Err(ETIMEDOUT);
        }
        sleep_ns(100_000);
    }
    Ok(())
}

/// The idle thread's question, interrupts off: should this core park now?
pub(super) fn park_requested() -> bool {
    CPUS[hal::cpu_index()]
        .presence
        .compare_exchange(LEAVING, PARKING, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// Runs on the leaving core's idle thread, interrupts off, to the end.
pub(super) fn park() -> ! {
    let cpu = hal::cpu_index();
    let me = &CPUS[cpu];
    let queued = {
        let mut q = me.ready.lock();
        q.gone = true;
        core::mem::take(&mut q.threads)
    };
    for t in queued {
        t.queued.store(false, Ordering::Release);
        if t.cpu() == cpu {
            t.set_cpu(new_home(&t));
        }
        enqueue(&t, true);
    }
    oneshot::hand_over(cpu, 0);
    drop(me.idle.lock().take());
    drop(switcher().release_this_cpu());
    hal::smp::park_this_cpu()
}
