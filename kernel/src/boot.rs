//! What a boot path hands the kernel, whichever path it was.

use lwk_logic::cmdline::Cmdline;
use lwk_logic::memmap::RangeSet;
use spin::Once;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootKind {
    /// Booted by QEMU (or firmware): all RAM and CPUs are ours, serial console.
    Standalone,
}

pub struct BootInfo {
    pub kind: BootKind,
    /// Usable RAM from the boot memory map.
    pub ram: RangeSet,
    /// ACPI RSDP, if the boot path knows it.
    pub rsdp: Option<u64>,
    cmdline: [u8; 512],
    cmdline_len: usize,
}

impl BootInfo {
    pub fn new(kind: BootKind, ram: RangeSet) -> Self {
        BootInfo { kind, ram, rsdp: None, cmdline: [0; 512], cmdline_len: 0 }
    }

    pub fn set_cmdline(&mut self, bytes: &[u8]) {
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

pub fn cmdline() -> Cmdline<'static> {
    Cmdline::new(info().cmdline_str())
}
