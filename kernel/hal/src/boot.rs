//! Where the assembly entry paths land in Rust, and what they hand the
//! kernel: the PVH boot block (standalone) or the host module's boot
//! parameters (co-kernel), read into a [`BootInfo`].

use atoll_abi::{BootParams, BOOT_KIND_COKERNEL, BOOT_KIND_PVH, MAGIC_BOOT};
use lwk_logic::acpi::PhysRead;
use lwk_logic::memmap::RangeSet;

use crate::physmem::{read_struct, read_u32, read_u64, BootMemory};
pub use crate::smpboot::Trampoline;

// boot.S's constants that the host shares come from the ABI crate (and
// linker.ld checks its own KERNEL_OFFSET against boot.S's).
core::arch::global_asm!(
    include_str!("boot.S"),
    KERNEL_OFFSET = const atoll_abi::KERNEL_OFFSET,
    BOOT_KIND_PVH = const atoll_abi::BOOT_KIND_PVH,
    options(att_syntax)
);
core::arch::global_asm!(include_str!("trampoline.S"), options(att_syntax));

const PVH_MAGIC: u32 = 0x336e_c578;
const E820_RAM: u32 = 1;
/// Standalone: the trampoline page and the boot tables' reach.
const STANDALONE_TRAMPOLINE: u64 = 0x8000;
const STANDALONE_BOOT_MAPPED: u64 = 4 << 30;

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
    pub status_phys: u64,
}

/// What a boot path hands the kernel, whichever path it was.
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
    fn new(kind: BootKind, ram: RangeSet, trampoline: Trampoline, boot_mapped_end: u64) -> Self {
        BootInfo {
            kind,
            ram,
            rsdp: None,
            trampoline,
            boot_mapped_end,
            enclave: None,
            cmdline: [0; 512],
            cmdline_len: 0,
        }
    }

    /// Takes the command line from a field that may be NUL-terminated.
    fn set_cmdline(&mut self, bytes: &[u8]) {
        let bytes = &bytes[..bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len())];
        let n = bytes.len().min(self.cmdline.len());
        self.cmdline[..n].copy_from_slice(&bytes[..n]);
        self.cmdline_len = n;
    }

    pub fn cmdline_str(&self) -> &str {
        core::str::from_utf8(&self.cmdline[..self.cmdline_len]).unwrap_or("")
    }
}

/// Names the kernel's main function, which the boot CPU enters once it has
/// a console and its [`BootInfo`]. Used once, in the kernel crate.
#[macro_export]
macro_rules! entry {
    ($main:path) => {
        #[no_mangle]
        extern "Rust" fn __atoll_kernel_main(info: $crate::boot::BootInfo) -> ! {
            $main(info)
        }
    };
}

extern "Rust" {
    fn __atoll_kernel_main(info: BootInfo) -> !;
}

#[no_mangle]
extern "C" fn kernel_main(boot_block: u64, kind: u64) -> ! {
    crate::percpu::init_boot_cpu();
    let info = match kind {
        BOOT_KIND_PVH => {
            crate::console::init_serial();
            parse_pvh(boot_block)
        }
        BOOT_KIND_COKERNEL => {
            crate::mode::set_cokernel();
            parse_cokernel(boot_block)
        }
        // No console is known yet: nothing to tell, nobody to tell it to.
        _ => crate::cpu::halt_forever(),
    };
    // SAFETY: `entry!` defines this function in the kernel crate with
    // exactly this signature; the image does not link without it.
    unsafe { __atoll_kernel_main(info) }
}

/// Reads QEMU's `hvm_start_info` (version 1 carries the memory map).
fn parse_pvh(block: u64) -> BootInfo {
    if read_u32(block) != PVH_MAGIC {
        crate::fatal!("PVH start info at {:#x} has a bad magic", block);
    }
    let version = read_u32(block + 4);
    let cmdline_paddr = read_u64(block + 24);
    let rsdp_paddr = read_u64(block + 32);
    let mut ram = RangeSet::new();
    if version >= 1 {
        let memmap = read_u64(block + 40);
        let entries = read_u32(block + 48) as u64;
        for i in 0..entries {
            let e = memmap + i * 24;
            let (addr, size, ty) = (read_u64(e), read_u64(e + 8), read_u32(e + 16));
            if ty == E820_RAM && ram.add(addr, addr + size).is_err() {
                crate::println!("boot: memory map has too many ranges; ignoring the rest");
                break;
            }
        }
    } else {
        crate::fatal!("PVH start info version 0 has no memory map");
    }
    let trampoline =
        Trampoline { phys: STANDALONE_TRAMPOLINE, cr3: crate::paging::boot_tables_phys() };
    let mut info = BootInfo::new(BootKind::Standalone, ram, trampoline, STANDALONE_BOOT_MAPPED);
    if cmdline_paddr != 0 {
        let mut buf = [0u8; 512];
        BootMemory.read(cmdline_paddr, &mut buf);
        info.set_cmdline(&buf);
    }
    info.rsdp = (rsdp_paddr != 0).then_some(rsdp_paddr);
    info
}

/// Reads the boot parameters the host module wrote into the enclave's first
/// memory block (mapped by the module's boot page tables). The console comes
/// first so that everything after it can be reported.
fn parse_cokernel(params_phys: u64) -> BootInfo {
    let p: BootParams = read_struct(params_phys);
    if !p.hdr.is_valid::<BootParams>(MAGIC_BOOT) {
        crate::cpu::halt_forever(); // the host's boot timeout reports it
    }
    crate::shared::set_area(p.shared_phys, p.shared_phys + p.shared_size);
    if !crate::console::init_ring(p.console_phys, p.console_size) {
        crate::cpu::halt_forever(); // no console: the host's boot timeout reports it
    }
    let cpu_count = p.cpu_count as usize;
    let mem_count = p.mem_count as usize;
    if cpu_count == 0 || cpu_count > atoll_abi::MAX_CPUS || mem_count > atoll_abi::MAX_MEM_RANGES {
        crate::fatal!("boot parameters: {} CPUs, {} memory ranges", cpu_count, mem_count);
    }
    let mut ram = RangeSet::new();
    for r in &p.mem[..mem_count] {
        if ram.add(r.start, r.start + r.size).is_err() {
            crate::fatal!("boot parameters: too many memory ranges");
        }
    }
    let trampoline = Trampoline { phys: p.trampoline_phys, cr3: p.boot_cr3 };
    let mut info = BootInfo::new(BootKind::CoKernel, ram, trampoline, u64::MAX);
    info.set_cmdline(&p.cmdline);
    info.enclave = Some(Enclave {
        id: p.enclave_id,
        apic_ids: p.apic_ids,
        cpu_count,
        host_apic_id: p.host_apic_id,
        x2apic: p.x2apic != 0,
        tsc_hz: p.tsc_khz * 1000,
        lapic_phys: p.lapic_phys,
        shared: (p.shared_phys, p.shared_phys + p.shared_size),
        status_phys: p.status_phys,
    });
    info
}
