//! The kernel console: the serial port standalone, a ring in the enclave's
//! shared memory as a co-kernel (never the serial port: Linux owns it).

use core::fmt::{self, Write};
use spin::Once;

use crate::console_ring::RingConsole;
use crate::lock::SpinLock;
use crate::serial::Serial;

enum Backend {
    None,
    Serial(Serial),
    Ring(RingConsole),
}

static CONSOLE: SpinLock<Backend> = SpinLock::new(Backend::None);
/// The ring again, for the fatal path when the console lock is stuck.
static RING: Once<Option<RingConsole>> = Once::new();

struct Writer<'a>(&'a mut Backend);

impl Write for Writer<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        match self.0 {
            Backend::None => {}
            Backend::Serial(port) => port.write_bytes(s.as_bytes()),
            Backend::Ring(ring) => ring.write_bytes(s.as_bytes()),
        }
        Ok(())
    }
}

pub fn init_serial() {
    *CONSOLE.lock() = Backend::Serial(Serial::com1());
}

/// The console goes to the ring the boot parameters name; false (and no
/// console) if it is not in the shared area.
pub(crate) fn init_ring(phys: u64, size: u64) -> bool {
    let Some(ring) = *RING.call_once(|| RingConsole::attach(phys, size)) else {
        return false;
    };
    *CONSOLE.lock() = Backend::Ring(ring);
    true
}

pub fn print(args: fmt::Arguments) {
    let mut guard = CONSOLE.lock();
    let _ = Writer(&mut guard).write_fmt(args);
}

/// Printing for the fatal path: never waits for ever on a lock that the
/// crashed context may hold.
pub fn print_fatal(args: fmt::Arguments) {
    for _ in 0..1_000_000 {
        if let Some(mut guard) = CONSOLE.try_lock() {
            let _ = Writer(&mut guard).write_fmt(args);
            return;
        }
        crate::cpu::relax();
    }
    let mut emergency = match RING.get().copied().flatten() {
        Some(ring) => Backend::Ring(ring),
        None if crate::mode::is_cokernel() => Backend::None,
        None => Backend::Serial(Serial::com1()),
    };
    let _ = Writer(&mut emergency).write_fmt(args);
}

#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => { $crate::console::print(format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! println {
    () => { $crate::print!("\n") };
    ($($arg:tt)*) => { $crate::console::print(format_args!("{}\n", format_args!($($arg)*))) };
}
