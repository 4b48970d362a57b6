//! The interrupt descriptor table: every vector goes through one stub in
//! isr.S to `trap_entry` (trap.rs) with a `TrapFrame`.

use crate::gdt;
use spin::Once;
use x86_64::instructions::tables::lidt;
use x86_64::structures::DescriptorTablePointer;
use x86_64::VirtAddr;

core::arch::global_asm!(include_str!("trapframe.S"), include_str!("isr.S"), options(att_syntax));

extern "C" {
    static isr_stubs: u8;
}

/// The registers of an interrupted context, as isr.S saved them.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct TrapFrame {
    pub r15: u64,
    pub r14: u64,
    pub r13: u64,
    pub r12: u64,
    pub r11: u64,
    pub r10: u64,
    pub r9: u64,
    pub r8: u64,
    pub rbp: u64,
    pub rdi: u64,
    pub rsi: u64,
    pub rdx: u64,
    pub rcx: u64,
    pub rbx: u64,
    pub rax: u64,
    pub vector: u64,
    pub error_code: u64,
    pub rip: u64,
    pub cs: u64,
    pub rflags: u64,
    pub rsp: u64,
    pub ss: u64,
}

impl TrapFrame {
    /// True if a program's code was interrupted: in ring 3, or a
    /// kernel-mode program's at CPL 0 (the kernel runs in the upper half
    /// only, programs in the lower half only), or the first instructions of
    /// its direct call, still on its stack (isr.S decides the same way).
    pub fn from_program(&self) -> bool {
        use crate::paging::is_user_address;
        self.cs & 3 == 3 || is_user_address(self.rip) || is_user_address(self.rsp)
    }
}

#[repr(C, align(16))]
struct Idt([[u64; 2]; 256]);

static IDT: Once<Idt> = Once::new();

fn gate(handler: u64, ist: u16) -> [u64; 2] {
    let low = (handler & 0xffff)
        | (0x08 << 16)                       // kernel code selector
        | ((ist as u64 & 7) << 32)
        | (0x8e << 40)                       // present, DPL 0, interrupt gate
        | (((handler >> 16) & 0xffff) << 48);
    [low, handler >> 32]
}

fn ist_for(vector: usize) -> u16 {
    match vector {
        2 => gdt::IST_NMI,
        8 => gdt::IST_DOUBLE_FAULT,
        18 => gdt::IST_MACHINE_CHECK,
        _ => gdt::IST_ENTRY,
    }
}

/// Loads the shared IDT on this CPU (built on first use).
pub fn load() {
    let idt = IDT.call_once(|| {
        // SAFETY: only the symbol's address is taken.
        let base = unsafe { &isr_stubs as *const u8 as u64 };
        let mut table = Idt([[0; 2]; 256]);
        for (v, entry) in table.0.iter_mut().enumerate() {
            *entry = gate(base + 16 * v as u64, ist_for(v));
        }
        table
    });
    let ptr = DescriptorTablePointer {
        limit: (core::mem::size_of::<Idt>() - 1) as u16,
        base: VirtAddr::from_ptr(idt as *const Idt),
    };
    // SAFETY: the table is 'static and every gate points at a stub in isr.S.
    unsafe { lidt(&ptr) };
}
