//! Cores leaving and joining the running kernel (`atoll remove/add --cpus`).
//! A leaving core is marked LEAVING: nothing new is placed there, the
//! program threads it runs are given new homes (user::cpu_leaving), and
//! the thread running there is switched out at its next chance and moved.
//! Its idle thread then parks it: threads still queued there go to their
//! new homes, its sleepers' timers to the boot core, and the core halts
//! for the host to take back. Threads blocked with the core as home move
//! when they are woken (`enqueue` finds its queue gone).

use atoll_abi::RESCHED_VECTOR;
use core::sync::atomic::Ordering;
use lwk_logic::errno::{Errno, EBUSY, EINVAL, ETIMEDOUT};

use super::{enqueue, switcher, timer, user, Thread, CPUS};

pub const ACTIVE: u8 = 0;
pub const LEAVING: u8 = 1;
pub const PARKING: u8 = 2;

/// A core (re)starting at `index`: it takes work again.
pub(super) fn reset(index: usize) {
    let c = &CPUS[index];
    c.ready.lock().gone = false;
    c.need_resched.store(false, Ordering::Relaxed);
    c.presence.store(ACTIVE, Ordering::Release);
    timer::reset(index);
}

pub fn is_leaving(cpu: usize) -> bool {
    CPUS[cpu].presence.load(Ordering::Acquire) != ACTIVE
}

/// Cores that take work: online and not leaving.
pub fn active_cpus() -> impl Iterator<Item = usize> {
    hal::smp::online_cpus().filter(|&c| !is_leaving(c))
}

/// Where a thread goes when its core leaves: a program's thread to one of
/// the cores it may use, a kernel thread to the boot core.
pub fn new_home(t: &Thread) -> usize {
    t.user.as_ref().and_then(|u| u.new_home()).unwrap_or(0)
}

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
        super::sleep_ns(100_000);
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
    timer::hand_over(cpu, 0);
    drop(me.idle.lock().take());
    drop(switcher().release_this_cpu());
    hal::smp::park_this_cpu()
}
