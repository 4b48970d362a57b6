//! What the kernel does on a trap: an exception in a program raises its
//! signal (a handler may catch it); any other exception is reported and
//! stops the system. After an interrupt, the core may switch threads, and
//! on the way back to user mode signals are delivered and a thread of an
//! ending program leaves.

use hal::TrapFrame;

pub fn init() {
    hal::trap::set_handlers(on_exception, after_interrupt);
    hal::stop::set_crash_reporter(crate::lifecycle::report_crash);
}

fn on_exception(frame: &mut TrapFrame) {
    if frame.from_program() {
        // Returns only to run the program's handler for the fault.
        crate::process::user_fault(frame, hal::cpu::read_cr2());
        return;
    }
    crate::sched::describe_current(|tid, name| hal::trap::report_exception(frame, tid, name));
    hal::stop::stop_system(false);
}

fn after_interrupt(frame: &mut TrapFrame) {
    crate::sched::preempt_point();
    if frame.from_program() {
        crate::process::return_current_to_user(frame);
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
    hal::stop::stop_system(false)
}
