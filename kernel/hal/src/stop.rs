//! How the system stops: at the end of a standalone run, or at a fatal
//! error (`fatal!`), which a co-kernel reports to the host.

use spin::Once;

use crate::console::print_fatal;
use crate::{cpu, percpu, qemu};

static CRASH_REPORTER: Once<fn(usize)> = Once::new();

/// Registers what a co-kernel does when the system stops with a failure
/// (tell the host); it gets the CPU index and must not wait for locks.
pub fn set_crash_reporter(report: fn(usize)) {
    CRASH_REPORTER.call_once(|| report);
}

/// Stops the system: standalone, QEMU powers off with a pass/fail status; as
/// a co-kernel a failure goes to the crash reporter (the enclave is then
/// crashed until `atoll destroy`). Then this core halts for good.
pub fn stop_system(pass: bool) -> ! {
    cpu::disable_interrupts();
    if !pass {
        print_fatal(format_args!("!!! CPU {} stopped.\n", percpu::cpu_index()));
    }
    if crate::mode::is_cokernel() {
        if let (false, Some(report)) = (pass, CRASH_REPORTER.get()) {
            report(percpu::cpu_index());
        }
    } else {
        qemu::exit(pass);
    }
    cpu::halt_forever()
}

/// Reports an unrecoverable condition and stops the system.
#[macro_export]
macro_rules! fatal {
    ($($arg:tt)*) => {{
        $crate::console::print_fatal(format_args!("\nFATAL on CPU {}: {}\n",
            $crate::percpu::cpu_index(), format_args!($($arg)*)));
        $crate::stop::stop_system(false)
    }};
}
