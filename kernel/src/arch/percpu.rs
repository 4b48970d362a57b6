//! Which CPU am I? Each CPU's GS base points at its slot in `SLOTS`, whose first
//! word is the CPU's index, so `cpu_index()` is a single `mov %gs:0`. The
//! SYSCALL entry finds the running thread's kernel stack at %gs:8 and parks
//! the user stack pointer at %gs:16 (user.rs).

use core::arch::asm;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use crate::sched::Thread;

pub const MAX_CPUS: usize = 64;
const IA32_GS_BASE: u32 = 0xC000_0101;

#[repr(C, align(64))]
struct Slot {
    index: u64,
    kernel_stack: AtomicU64,
    user_stack: AtomicU64,
    running: AtomicPtr<Thread>,
}

static SLOTS: [Slot; MAX_CPUS] = {
    let mut slots = [const { Slot { index: 0, kernel_stack: AtomicU64::new(0), user_stack: AtomicU64::new(0), running: AtomicPtr::new(core::ptr::null_mut()) } }; MAX_CPUS];
    let mut i = 0;
    while i < MAX_CPUS {
        slots[i].index = i as u64;
        i += 1;
    }
    slots
};

pub fn init_boot_cpu() {
    init_cpu(0);
}

pub fn init_cpu(index: usize) {
    super::cpu::wrmsr(IA32_GS_BASE, &SLOTS[index] as *const Slot as u64);
}

#[inline(always)]
pub fn cpu_index() -> usize {
    let index: u64;
    // SAFETY: GS base is set to a valid slot before any Rust code runs on a CPU.
    unsafe { asm!("mov {}, gs:[0]", out(reg) index, options(nostack, readonly, preserves_flags)) };
    index as usize
}

/// Kernel stack top for the SYSCALL entry of the thread about to run here.
pub fn set_syscall_stack(top: u64) {
    SLOTS[cpu_index()].kernel_stack.store(top, Ordering::Relaxed);
}

/// Records the thread about to run here. The scheduler holds a reference
/// to it (its `current`) for as long as it runs.
pub fn set_running(t: &Thread) {
    SLOTS[cpu_index()].running.store(t as *const Thread as *mut Thread, Ordering::Release);
}

/// Runs `f` with the thread running on this CPU, without the scheduler's
/// lock (the system-call fast path).
pub fn with_running<R>(f: impl FnOnce(&Thread) -> R) -> R {
    let t = SLOTS[cpu_index()].running.load(Ordering::Acquire);
    assert!(!t.is_null(), "no thread recorded on this CPU");
    // SAFETY: set_running recorded the thread that is executing this very
    // code; it is alive (the scheduler's `current` holds it) until it stops
    // running, and a thread cannot stop running while `f` runs on it. Only
    // a shared reference is made.
    f(unsafe { &*t })
}
