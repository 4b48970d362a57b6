//! Interrupt vectors and IPIs (Nemo-style events): a table maps each vector to
//! a handler; unicast and broadcast sends go through the local APIC.

use core::sync::atomic::Ordering;

use crate::arch::apic;
use crate::sync::SpinLock;

pub type Handler = fn(vector: u8);

/// Asks the target core's scheduler to look at its run queue now.
pub const RESCHED_VECTOR: u8 = 0xf1;
/// Dynamic event vectors come from this range.
const DYNAMIC_FIRST: u8 = 0x40;
const DYNAMIC_LAST: u8 = 0xdf;

static TABLE: SpinLock<[Option<Handler>; 256]> = SpinLock::new([None; 256]);

pub fn init() {
    register(apic::TIMER_VECTOR, |_| crate::sched::timer::on_interrupt());
    register(RESCHED_VECTOR, |_| {
        crate::sched::this_cpu().need_resched.store(true, Ordering::Relaxed);
    });
    register(apic::ERROR_VECTOR, |_| crate::println!("APIC error interrupt"));
}

pub fn register(vector: u8, handler: Handler) {
    TABLE.lock()[vector as usize] = Some(handler);
}

/// Takes a free event vector for `handler`.
pub fn allocate(handler: Handler) -> Option<u8> {
    let mut t = TABLE.lock();
    let v = (DYNAMIC_FIRST..=DYNAMIC_LAST).find(|&v| t[v as usize].is_none())?;
    t[v as usize] = Some(handler);
    Some(v)
}

pub fn release(vector: u8) {
    TABLE.lock()[vector as usize] = None;
}

/// Runs the handler of `vector`; false if none is registered.
pub fn dispatch(vector: u8) -> bool {
    let handler = TABLE.lock()[vector as usize];
    match handler {
        Some(h) => {
            h(vector);
            true
        }
        None => false,
    }
}

pub fn send(cpu: usize, vector: u8) {
    apic::send_ipi(crate::smp::apic_id_of(cpu), vector);
}

/// Sends `vector` to every other online CPU. As a co-kernel the APIC's
/// all-but-self shorthand would reach Linux's CPUs too, so it goes one by one.
pub fn broadcast(vector: u8) {
    if crate::arch::entry::is_cokernel() {
        let me = crate::arch::percpu::cpu_index();
        crate::smp::online_cpus().filter(|&c| c != me).for_each(|c| send(c, vector));
    } else {
        apic::send_ipi_all_but_self(vector);
    }
}
