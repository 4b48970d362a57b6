//! Per-CPU GDT and TSS. The TSS gives faults that must work on a broken stack
//! (double fault, NMI, machine check) stacks of their own, and every other
//! vector one more, which isr.S leaves at once for the stack the CPU would
//! have used: a kernel-mode program's red zone lies below its stack pointer,
//! where a CPU that stays at CPL 0 would push the frame.
//! The segment order is what SYSCALL/SYSRET need: kernel code, kernel data,
//! user data, user code.

use alloc::boxed::Box;
use core::sync::atomic::{AtomicPtr, Ordering};
use x86_64::instructions::segmentation::{Segment, CS, DS, ES, SS};
use x86_64::instructions::tables::load_tss;
use x86_64::structures::gdt::{Descriptor, GlobalDescriptorTable, SegmentSelector};
use x86_64::structures::tss::TaskStateSegment;
use x86_64::VirtAddr;

pub const IST_DOUBLE_FAULT: u16 = 1;
pub const IST_NMI: u16 = 2;
pub const IST_MACHINE_CHECK: u16 = 3;
/// Every other vector: left at once (isr.S).
pub const IST_ENTRY: u16 = 4;
const IST_STACK_SIZE: usize = 16 * 1024;

pub const KERNEL_CODE: u16 = 0x08;
pub const KERNEL_DATA: u16 = 0x10;
pub const USER_DATA: u16 = 0x18;
pub const USER_CODE: u16 = 0x20;

static TSS: [AtomicPtr<TaskStateSegment>; super::percpu::MAX_CPUS] =
    [const { AtomicPtr::new(core::ptr::null_mut()) }; super::percpu::MAX_CPUS];
static GDT: [AtomicPtr<GlobalDescriptorTable>; super::percpu::MAX_CPUS] =
    [const { AtomicPtr::new(core::ptr::null_mut()) }; super::percpu::MAX_CPUS];

/// This CPU index's TSS, made the first time a CPU starts at the index and
/// used again by a CPU added there later (its interrupt stacks too).
fn this_cpu_tss() -> &'static TaskStateSegment {
    let slot = &TSS[super::percpu::cpu_index()];
    if slot.load(Ordering::Acquire).is_null() {
        let mut tss = Box::new(TaskStateSegment::new());
        for ist in [IST_DOUBLE_FAULT, IST_NMI, IST_MACHINE_CHECK, IST_ENTRY] {
            let stack: &'static mut [u8] =
                Box::leak(alloc::vec![0u8; IST_STACK_SIZE].into_boxed_slice());
            let top = VirtAddr::from_ptr(stack.as_ptr()) + IST_STACK_SIZE as u64;
            tss.interrupt_stack_table[(ist - 1) as usize] = top.align_down(16u64);
        }
        slot.store(Box::leak(tss) as *mut TaskStateSegment, Ordering::Release);
    }
    // SAFETY: leaked above (never freed); only this CPU index uses it, and
    // only RSP0 is written afterwards (set_ring0_stack).
    unsafe { &*slot.load(Ordering::Acquire) }
}

/// The CPU index whose NMI stack holds `addr` (each index keeps its stacks).
pub(crate) fn cpu_of_nmi_stack(addr: u64) -> Option<usize> {
    (0..super::percpu::MAX_CPUS).find(|&cpu| {
        let tss = TSS[cpu].load(Ordering::Acquire);
        if tss.is_null() {
            return false;
        }
        // SAFETY: leaked in this_cpu_tss (never freed) and published with
        // its IST entries set, which are never written again.
        let top = unsafe { (*tss).interrupt_stack_table[(IST_NMI - 1) as usize] }.as_u64();
        (top - IST_STACK_SIZE as u64..top).contains(&addr)
    })
}

/// This CPU index's GDT, written afresh: a CPU added at an index used
/// before must not load a TSS descriptor its predecessor marked busy.
fn this_cpu_gdt() -> &'static mut GlobalDescriptorTable {
    let slot = &GDT[super::percpu::cpu_index()];
    if slot.load(Ordering::Acquire).is_null() {
        let gdt = Box::leak(Box::new(GlobalDescriptorTable::new()));
        slot.store(gdt as *mut GlobalDescriptorTable, Ordering::Release);
    }
    // SAFETY: leaked above, never freed; only the CPU starting at this index
    // touches it, before loading it (the CPU that used it before is parked).
    let gdt = unsafe { &mut *slot.load(Ordering::Acquire) };
    *gdt = GlobalDescriptorTable::new();
    gdt
}

/// Builds and loads this CPU's GDT and TSS, once each time a CPU starts.
pub fn init_this_cpu() {
    let tss = this_cpu_tss();
    let gdt = this_cpu_gdt();
    let code = gdt.append(Descriptor::kernel_code_segment());
    let data = gdt.append(Descriptor::kernel_data_segment());
    let user_data = gdt.append(Descriptor::user_data_segment());
    let user_code = gdt.append(Descriptor::user_code_segment());
    let tss_sel = gdt.append(Descriptor::tss_segment(tss));
    let gdt: &'static GlobalDescriptorTable = gdt;
    gdt.load();
    // SAFETY: the selectors index the GDT just loaded and describe flat 64-bit
    // kernel segments, so reloading them changes no addressing.
    unsafe {
        CS::set_reg(code);
        SS::set_reg(data);
        DS::set_reg(data);
        ES::set_reg(data);
        load_tss(tss_sel);
    }
    debug_assert_eq!(code, SegmentSelector(KERNEL_CODE));
    debug_assert_eq!(data, SegmentSelector(KERNEL_DATA));
    debug_assert_eq!(user_data.0 & !3, USER_DATA);
    debug_assert_eq!(user_code.0 & !3, USER_CODE);
}

/// The stack the CPU switches to when an interrupt arrives in ring 3.
pub fn set_ring0_stack(top: u64) {
    let tss = TSS[super::percpu::cpu_index()].load(Ordering::Acquire);
    assert!(!tss.is_null(), "TSS not set up on this CPU");
    // SAFETY: this CPU's TSS, leaked in init_this_cpu and only written by
    // this CPU (here); the CPU reads RSP0 only on a ring 3 -> 0 transition,
    // which cannot happen while this kernel code runs.
    unsafe { (*tss).privilege_stack_table[0] = VirtAddr::new(top) };
}
