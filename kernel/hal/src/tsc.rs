//! TSC frequency: from CPUID when the CPU states it, else measured against the
//! PIT (channel 2, gate-controlled, so no interrupt is needed).

use core::sync::atomic::{AtomicU64, Ordering};
use x86_64::instructions::port::Port;

use super::cpu;

static TSC_HZ: AtomicU64 = AtomicU64::new(0);
const PIT_HZ: u64 = 1_193_182;

pub fn hz() -> u64 {
    TSC_HZ.load(Ordering::Relaxed)
}

pub(crate) fn set_hz(hz: u64) {
    TSC_HZ.store(hz, Ordering::Relaxed);
}

/// CLOCK_MONOTONIC's scale: ns = (TSC * ns_mult) >> 32, rounded up so
/// that the clock never runs slow. The vDSO computes the same.
pub fn ns_mult() -> u64 {
    ((1_000_000_000u128 << 32).div_ceil(hz().max(1) as u128)) as u64
}

/// CLOCK_MONOTONIC in ns, as programs read it (their vDSO too).
pub fn monotonic_ns() -> u64 {
    ((cpu::rdtsc() as u128 * ns_mult() as u128) >> 32) as u64
}

pub fn ns_to_cycles(ns: u64) -> u64 {
    ((ns as u128 * hz() as u128) / 1_000_000_000) as u64
}

pub fn cycles_to_ns(cycles: u64) -> u64 {
    ((cycles as u128 * 1_000_000_000) / hz().max(1) as u128) as u64
}

/// Busy-waits for `us` microseconds.
pub fn delay_us(us: u64) {
    let end = cpu::rdtsc() + ns_to_cycles(us * 1000);
    while cpu::rdtsc() < end {
        cpu::relax();
    }
}

/// Calibrates once on the boot CPU; returns the frequency in Hz.
pub(crate) fn calibrate() -> u64 {
    let hz = cpu::features().tsc_hz_from_cpuid.unwrap_or_else(|| {
        // The shortest of three 10 ms windows is the least disturbed one.
        (0..3).map(|_| pit_window(10_000)).min().unwrap_or(0)
    });
    set_hz(hz);
    hz
}

/// Counts TSC cycles over `us` microseconds of PIT channel 2 in mode 0.
fn pit_window(us: u64) -> u64 {
    let count = (PIT_HZ * us / 1_000_000) as u16;
    let mut gate: Port<u8> = Port::new(0x61);
    let mut mode: Port<u8> = Port::new(0x43);
    let mut ch2: Port<u8> = Port::new(0x42);
    // SAFETY: ports 0x42/0x43/0x61 are the PIT and its gate; no one else uses
    // channel 2 (the speaker output stays off).
    unsafe {
        let g = gate.read();
        gate.write((g & !0x02) & !0x01); // gate low: hold the counter
        mode.write(0xb0); // channel 2, lo/hi byte, mode 0, binary
        ch2.write(count as u8);
        ch2.write((count >> 8) as u8);
        let g = gate.read();
        gate.write(g | 0x01); // gate high: start counting
        let start = cpu::rdtsc();
        while gate.read() & 0x20 == 0 {
            cpu::relax();
        }
        let end = cpu::rdtsc();
        (end - start) * 1_000_000 / us
    }
}
