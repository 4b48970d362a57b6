//! Where the assembly entry paths land in Rust, and the PVH boot block.

use crate::boot::{BootInfo, BootKind};
use lwk_logic::memmap::RangeSet;

use super::physmem::{read_u32, read_u64, BootMemory};
use lwk_logic::acpi::PhysRead;

core::arch::global_asm!(include_str!("boot.S"), options(att_syntax));
core::arch::global_asm!(include_str!("trampoline.S"), options(att_syntax));

const BOOT_KIND_PVH: u64 = 1;
const PVH_MAGIC: u32 = 0x336e_c578;
const E820_RAM: u32 = 1;

#[no_mangle]
extern "C" fn kernel_main(boot_block: u64, kind: u64) -> ! {
    super::percpu::init_boot_cpu();
    crate::console::init_serial();
    let info = match kind {
        BOOT_KIND_PVH => parse_pvh(boot_block),
        other => crate::fatal!("unknown boot kind {}", other),
    };
    crate::kmain(info)
}

#[no_mangle]
extern "C" fn ap_main(cpu: u64) -> ! {
    crate::smp::secondary_main(cpu as usize)
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
    let mut info = BootInfo::new(BootKind::Standalone, ram);
    if cmdline_paddr != 0 {
        let mut buf = [0u8; 512];
        BootMemory.read(cmdline_paddr, &mut buf);
        let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        info.set_cmdline(&buf[..len]);
    }
    info.rsdp = (rsdp_paddr != 0).then_some(rsdp_paddr);
    info
}
