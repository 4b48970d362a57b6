//! Which CPU am I? Each CPU's GS base points at its slot in `SLOTS`, whose first
//! word is the CPU's index, so `cpu_index()` is a single `mov %gs:0`. The
//! SYSCALL entry finds the running thread's kernel stack at %gs:8 and parks
//! the user stack pointer at %gs:16 (user.rs). The running task and the one
//! just switched away from live here too (task.rs).

use core::arch::asm;
use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

pub const MAX_CPUS: usize = 64;
const IA32_GS_BASE: u32 = 0xC000_0101;

#[repr(C, align(64))]
pub(crate) struct Slot {
    index: u64,
    kernel_stack: AtomicU64,
    user_stack: AtomicU64,
    /// The running task: a reference the task switcher owns (task.rs).
    pub(crate) running: AtomicPtr<()>,
    /// The task just switched away from, until the next one has left its stack.
    pub(crate) previous: AtomicPtr<()>,
}

static SLOTS: [Slot; MAX_CPUS] = {
    let mut slots = [const {
        Slot {
            index: 0,
            kernel_stack: AtomicU64::new(0),
            user_stack: AtomicU64::new(0),
            running: AtomicPtr::new(core::ptr::null_mut()),
            previous: AtomicPtr::new(core::ptr::null_mut()),
        }
    }; MAX_CPUS];
    let mut i = 0;
    while i < MAX_CPUS {
        slots[i].index = i as u64;
        i += 1;
    }
    slots
};

pub(crate) fn init_boot_cpu() {
    init_cpu(0);
}

pub(crate) fn init_cpu(index: usize) {
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
pub(crate) fn set_syscall_stack(top: u64) {
    SLOTS[cpu_index()].kernel_stack.store(top, Ordering::Relaxed);
}

/// The running task of the CPU this executes on, in one instruction, so
/// the answer cannot mix two CPUs even if the caller moves between them.
#[inline(always)]
pub(crate) fn running_task() -> *const () {
    let ptr: u64;
    // SAFETY: GS base is set to a valid slot before any Rust code runs on a
    // CPU; this reads its `running` word (an AtomicPtr: a plain load is an
    // atomic load on x86-64).
    unsafe {
        asm!("mov {}, gs:[{off}]", out(reg) ptr, off = const core::mem::offset_of!(Slot, running),
             options(nostack, readonly, preserves_flags))
    };
    ptr as *const ()
}

/// This CPU's slot (interrupts must be off, or the caller must not care
/// about moving to another CPU).
pub(crate) fn this_slot() -> &'static Slot {
    &SLOTS[cpu_index()]
}
