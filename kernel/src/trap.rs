//! What the kernel does on a trap: an exception in a program ends the
//! program; any other exception is reported and stops the system. After an
//! interrupt, the core may switch threads, and a thread of an ending
//! program leaves before it returns to user mode.

use hal::TrapFrame;

pub fn init() {
    hal::trap::set_handlers(on_exception, after_interrupt);
    hal::trap::set_crash_reporter(crate::lifecycle::report_crash);
}

fn on_exception(frame: &mut TrapFrame) {
    if frame.from_user() {
        crate::process::user_fault(frame, hal::cpu::read_cr2());
    }
    crate::sched::describe_current(|tid, name| hal::trap::report_exception(frame, tid, name));
    hal::trap::stop_system(false);
}

fn after_interrupt(frame: &mut TrapFrame) {
    crate::sched::preempt_point();
    if frame.from_user() {
        crate::process::kill_check(&crate::sched::current());
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    crate::sched::describe_current(|tid, name| {
        hal::console::print_fatal(format_args!(
            "\n!!! PANIC on CPU {} in thread {} \"{}\": {}\n",
            hal::cpu_index(),
            tid,
            name,
            info
        ))
    });
    hal::trap::stop_system(false)
}
