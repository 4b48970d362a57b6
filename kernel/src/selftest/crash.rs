//! `crashtest`: a kernel thread touches unmapped memory on purpose. The fault
//! report must appear and the run must end with a failure status.
//! `hangtest`: an LWK deaf to the host, for `atoll destroy --force`.

use crate::sched;
use hal::println;

pub fn run() -> ! {
    let cpu = super::helpers::last_cpu();
    println!("crashtest: a thread on CPU {} will now touch unmapped memory", cpu);
    let h = sched::spawn(cpu, "crash-test", hal::cpu::touch_unmapped_memory);
    h.join();
    hal::fatal!("crashtest: the deliberate fault did not happen")
}

pub fn hang() -> ! {
    hal::cpu::disable_interrupts();
    loop {
        hal::cpu::relax();
    }
}
