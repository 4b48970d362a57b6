//! Where the assembly entry paths land in Rust: the PVH boot block
//! (standalone) and the host module's boot parameters (co-kernel).

use core::sync::atomic::{AtomicBool, Ordering};

use atoll_abi::{BootParams, BOOT_KIND_COKERNEL, BOOT_KIND_PVH, MAGIC_BOOT};
use lwk_logic::memmap::RangeSet;

use crate::boot::{BootInfo, BootKind, Enclave};

use super::physmem::{read_struct, read_u32, read_u64, BootMemory};
use super::smpboot::Trampoline;
use lwk_logic::acpi::PhysRead;

core::arch::global_asm!(include_str!("boot.S"), options(att_syntax));
core::arch::global_asm!(include_str!("trampoline.S"), options(att_syntax));

const PVH_MAGIC: u32 = 0x336e_c578;
const E820_RAM: u32 = 1;
/// Standalone: the trampoline page and the boot tables' reach.
const STANDALONE_TRAMPOLINE: u64 = 0x8000;
const STANDALONE_BOOT_MAPPED: u64 = 4 << 30;

static COKERNEL: AtomicBool = AtomicBool::new(false);

/// True from the first instruction of a co-kernel boot: the machine's serial
/// port, PIT and QEMU devices belong to Linux then.
pub fn is_cokernel() -> bool {
    COKERNEL.load(Ordering::Relaxed)
}

#[no_mangle]
extern "C" fn kernel_main(boot_block: u64, kind: u64) -> ! {
    super::percpu::init_boot_cpu();
    let info = match kind {
        BOOT_KIND_PVH => {
            crate::console::init_serial();
            parse_pvh(boot_block)
        }
        BOOT_KIND_COKERNEL => {
            COKERNEL.store(true, Ordering::Relaxed);
            parse_cokernel(boot_block)
        }
        // No console is known yet: nothing to tell, nobody to tell it to.
        _ => super::cpu::halt_forever(),
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
    let trampoline = Trampoline { phys: STANDALONE_TRAMPOLINE, cr3: super::paging::boot_tables_phys() };
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
        super::cpu::halt_forever(); // the host's boot timeout reports it
    }
    crate::console::init_ring(p.console_phys, p.console_size);
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
        channel_phys: p.channel_phys,
    });
    info
}
