//! QEMU's `isa-debug-exit` device: writing V to its port makes QEMU exit with
//! status (V << 1) | 1. `make selftest` maps the two values below to 0 and 1.

use x86_64::instructions::port::Port;

const DEBUG_EXIT_PORT: u16 = 0xf4;
pub const EXIT_PASS: u32 = 0x10; // QEMU exits 33
pub const EXIT_FAIL: u32 = 0x11; // QEMU exits 35

/// Powers QEMU off with a pass/fail status. Returns only if the device is
/// absent (then the caller halts).
pub fn exit(pass: bool) {
    let mut port: Port<u32> = Port::new(DEBUG_EXIT_PORT);
    // SAFETY: port 0xf4 is the debug-exit device or nothing; writing it has no
    // other effect.
    unsafe { port.write(if pass { EXIT_PASS } else { EXIT_FAIL }) };
}
