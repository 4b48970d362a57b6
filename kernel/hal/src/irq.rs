//! Interrupt vectors and IPIs (Nemo-style events): a table maps each vector
//! to the handler the kernel registered; unicast and broadcast sends go
//! through the local APIC.

use core::sync::atomic::{AtomicU64, Ordering};

use crate::lock::SpinLock;
use crate::percpu::MAX_CPUS;
use crate::{apic, cpu, percpu, smp};

pub type Handler = fn(vector: u8);

/// Dynamic event vectors come from this range, below every fixed one
/// (atoll_abi's table of vectors).
const DYNAMIC_FIRST: u8 = 0x40;
const DYNAMIC_LAST: u8 = 0xdf;
const _: () = {
    let mut i = 0;
    while i < atoll_abi::VECTORS.len() {
        assert!(atoll_abi::VECTORS[i] > DYNAMIC_LAST, "a fixed vector in the dynamic range");
        i += 1;
    }
};

static TABLE: SpinLock<[Option<Handler>; 256]> = SpinLock::new([None; 256]);

/// The vectors the hardware layer handles itself.
pub fn init() {
    register(atoll_abi::ERROR_VECTOR, |_| crate::println!("APIC error interrupt"));
}

/// Gives `vector` its handler; a vector has one owner, so taking one
/// that is already handled is a bug (panics).
pub fn register(vector: u8, handler: Handler) {
    let mut t = TABLE.lock();
    assert!(t[vector as usize].is_none(), "interrupt vector {vector:#x} already has a handler");
    t[vector as usize] = Some(handler);
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

/// Interrupts each CPU has taken, NMIs included (for attributing OS noise).
static TAKEN: [AtomicU64; MAX_CPUS] = [const { AtomicU64::new(0) }; MAX_CPUS];

pub fn taken_on(cpu: usize) -> u64 {
    TAKEN[cpu].load(Ordering::Relaxed)
}

/// An interrupt (any vector from 32 on, spurious ones too) arrived here.
pub(crate) fn note_taken() {
    TAKEN[percpu::cpu_index()].fetch_add(1, Ordering::Relaxed);
}

/// An NMI arrived, its frame at `frame_at`. Masking interrupts does not
/// keep it out of SYSCALL's entry and exit, where GS holds the user's
/// base, so the CPU is the one whose NMI stack the frame is on, not GS's.
pub(crate) fn note_nmi(frame_at: u64) {
    if let Some(cpu) = crate::gdt::cpu_of_nmi_stack(frame_at) {
        TAKEN[cpu].fetch_add(1, Ordering::Relaxed);
    }
}

/// Sends `cpu` an NMI; nothing for a CPU that is not online.
#[cfg(feature = "testing")]
pub fn send_nmi(cpu: usize) {
    let irqs = cpu::save_and_disable_interrupts();
    if smp::is_online(cpu) {
        apic::send_nmi(smp::apic_id_of(cpu));
    }
    cpu::restore_interrupts(irqs);
}

/// Runs the handler of `vector`; false if none is registered.
pub(crate) fn dispatch(vector: u8) -> bool {
    let handler = TABLE.lock()[vector as usize];
    match handler {
        Some(h) => {
            h(vector);
            true
        }
        None => false,
    }
}

/// Interrupts `cpu` with `vector`; nothing for a CPU that is not online
/// (a removed one may be Linux's again).
pub fn send(cpu: usize, vector: u8) {
    // Not preempted between the check and the send (a CPU cannot be parked
    // and handed to Linux meanwhile).
    let irqs = cpu::save_and_disable_interrupts();
    if smp::is_online(cpu) {
        apic::send_ipi(smp::apic_id_of(cpu), vector);
    }
    cpu::restore_interrupts(irqs);
}

/// Sends `vector` to every other online CPU. As a co-kernel the APIC's
/// all-but-self shorthand would reach Linux's CPUs too, so it goes one by one.
pub fn broadcast(vector: u8) {
    if crate::mode::is_cokernel() {
        let me = percpu::cpu_index();
        smp::online_cpus().filter(|&c| c != me).for_each(|c| send(c, vector));
    } else {
        apic::send_ipi_all_but_self(vector);
    }
}
