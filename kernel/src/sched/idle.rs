//! Each core's start as a scheduler core, and its idle thread: that runs
//! whatever is ready, halts until an interrupt when nothing is, and parks
//! the core once it is asked to leave.

use alloc::boxed::Box;
use hal::cpu;

use super::cpus::{self, this_cpu, CPUS};
use super::hotplug::{park, park_requested};
use super::oneshot;
use super::running::switcher;
use super::spawn::new_kernel;
use super::switch::schedule;
use super::user::Thread;

/// Makes the running boot context a thread of this CPU. On the boot CPU it is
/// the "main" thread and a fresh idle thread is made; on the others the boot
/// context itself becomes the idle thread.
pub fn init_cpu(index: usize, boot_context_is_idle: bool) {
    let me = &CPUS[index];
    cpus::reset(index);
    oneshot::reset(index);
    let idle = if boot_context_is_idle {
        let idle = Thread::adopt_running("idle", index, true);
        switcher().adopt(idle.clone());
        idle
    } else {
        switcher().adopt(Thread::adopt_running("main", index, false));
        new_kernel("idle", index, false, Box::new(|| idle_loop()))
    };
    *me.idle.lock() = Some(idle);
}

/// The idle thread: run whatever is ready, else halt until an interrupt;
/// park the core once it is asked to leave.
pub fn idle_loop() -> ! {
    loop {
        cpu::disable_interrupts();
        if park_requested() {
            park();
        }
        if this_cpu().ready.lock().threads.is_empty() {
            cpu::enable_interrupts_and_halt();
        } else {
            cpu::enable_interrupts();
        }
        schedule();
    }
}
