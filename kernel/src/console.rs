//! The kernel console. Standalone it is the serial port; the co-kernel path
//! installs a shared-memory ring through `ConsoleBackend`.

use alloc::boxed::Box;
use core::fmt::{self, Write};

use crate::arch::serial::Serial;
use crate::sync::SpinLock;

pub trait ConsoleBackend: Send {
    fn write_bytes(&mut self, bytes: &[u8]);
}

enum Backend {
    None,
    Serial(Serial),
    Other(Box<dyn ConsoleBackend>),
}

static CONSOLE: SpinLock<Backend> = SpinLock::new(Backend::None);

struct Writer<'a>(&'a mut Backend);

impl Write for Writer<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        match self.0 {
            Backend::None => {}
            Backend::Serial(port) => port.write_bytes(s.as_bytes()),
            Backend::Other(b) => b.write_bytes(s.as_bytes()),
        }
        Ok(())
    }
}

pub fn init_serial() {
    *CONSOLE.lock() = Backend::Serial(Serial::com1());
}

#[allow(dead_code)] // used by the co-kernel boot path
pub fn install(backend: Box<dyn ConsoleBackend>) {
    *CONSOLE.lock() = Backend::Other(backend);
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
        crate::arch::cpu::relax();
    }
    let mut emergency = Backend::Serial(Serial::com1());
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

/// Reports an unrecoverable condition and stops the system.
#[macro_export]
macro_rules! fatal {
    ($($arg:tt)*) => {{
        $crate::console::print_fatal(format_args!("\nFATAL on CPU {}: {}\n",
            $crate::arch::percpu::cpu_index(), format_args!($($arg)*)));
        $crate::trap::stop_system(false)
    }};
}
