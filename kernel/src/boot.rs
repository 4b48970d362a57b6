//! The boot information, kept for the kernel's lifetime.

use hal::{BootInfo, Enclave};
use lwk_logic::cmdline::Cmdline;
use spin::Once;

static BOOT: Once<BootInfo> = Once::new();

pub fn keep(info: BootInfo) -> &'static BootInfo {
    BOOT.call_once(|| info)
}

pub fn info() -> &'static BootInfo {
    BOOT.get().expect("boot info is kept first thing in kmain")
}

/// The enclave, when running as a co-kernel.
pub fn enclave() -> Option<&'static Enclave> {
    BOOT.get().and_then(|b| b.enclave.as_ref())
}

pub fn cmdline() -> Cmdline<'static> {
    Cmdline::new(info().cmdline_str())
}
