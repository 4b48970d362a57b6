//! What a boot path hands the kernel, whichever path it was.

use lwk_logic::cmdline::Cmdline;
use lwk_logic::memmap::RangeSet;
use spin::Once;

use crate::arch::smpboot::Trampoline;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootKind {
    /// Booted by QEMU (or firmware): all RAM and CPUs are ours, serial console.
    Standalone,
    /// Booted by the host module inside a running Linux: only the enclave's
    /// CPUs and memory are ours; console and control channel in shared memory.
    CoKernel,
}

/// What the host module tells a co-kernel about its enclave.
pub struct Enclave {
    pub id: u32,
    /// APIC ids of the enclave's CPUs; [0] is this (the boot) CPU.
    pub apic_ids: [u32; atoll_abi::MAX_CPUS],
    pub cpu_count: usize,
    pub host_apic_id: u32,
    pub x2apic: bool,
    pub tsc_hz: u64,
    pub lapic_phys: u64,
    /// Boot parameters, channel and console: never handed to the allocator.
    pub shared: (u64, u64),
    pub channel_phys: u64,
}

pub struct BootInfo {
    pub kind: BootKind,
    /// Usable RAM from the boot memory map.
    pub ram: RangeSet,
    /// ACPI RSDP, if the boot path knows it.
    pub rsdp: Option<u64>,
    /// Where secondary CPUs start.
    pub trampoline: Trampoline,
    /// RAM below this is mapped by the boot page tables.
    pub boot_mapped_end: u64,
    pub enclave: Option<Enclave>,
    cmdline: [u8; 512],
    cmdline_len: usize,
}

impl BootInfo {
    pub fn new(kind: BootKind, ram: RangeSet, trampoline: Trampoline, boot_mapped_end: u64) -> Self {
        BootInfo {
            kind, ram, rsdp: None, trampoline, boot_mapped_end, enclave: None,
            cmdline: [0; 512], cmdline_len: 0,
        }
    }

    /// Takes the command line from a field that may be NUL-terminated.
    pub fn set_cmdline(&mut self, bytes: &[u8]) {
        let bytes = &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())];
        let n = bytes.len().min(self.cmdline.len());
        self.cmdline[..n].copy_from_slice(&bytes[..n]);
        self.cmdline_len = n;
    }

    pub fn cmdline_str(&self) -> &str {
        core::str::from_utf8(&self.cmdline[..self.cmdline_len]).unwrap_or("")
    }
}

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
