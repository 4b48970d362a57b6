//! Per-CPU GDT and TSS. The TSS gives faults that must work on a broken stack
//! (double fault, NMI, machine check, page fault) stacks of their own.

use alloc::boxed::Box;
use x86_64::instructions::segmentation::{Segment, CS, DS, ES, SS};
use x86_64::instructions::tables::load_tss;
use x86_64::structures::gdt::{Descriptor, GlobalDescriptorTable, SegmentSelector};
use x86_64::structures::tss::TaskStateSegment;
use x86_64::VirtAddr;

pub const IST_DOUBLE_FAULT: u16 = 1;
pub const IST_NMI: u16 = 2;
pub const IST_MACHINE_CHECK: u16 = 3;
pub const IST_PAGE_FAULT: u16 = 4;
const IST_STACK_SIZE: usize = 16 * 1024;

/// Builds and loads this CPU's GDT and TSS. Called once per CPU; both tables
/// live for ever.
pub fn init_this_cpu() {
    let mut tss = Box::new(TaskStateSegment::new());
    for ist in [IST_DOUBLE_FAULT, IST_NMI, IST_MACHINE_CHECK, IST_PAGE_FAULT] {
        let stack: &'static mut [u8] = Box::leak(alloc::vec![0u8; IST_STACK_SIZE].into_boxed_slice());
        let top = VirtAddr::from_ptr(stack.as_ptr()) + IST_STACK_SIZE as u64;
        tss.interrupt_stack_table[(ist - 1) as usize] = top.align_down(16u64);
    }
    let tss: &'static TaskStateSegment = Box::leak(tss);

    let gdt: &'static mut GlobalDescriptorTable = Box::leak(Box::new(GlobalDescriptorTable::new()));
    let code = gdt.append(Descriptor::kernel_code_segment());
    let data = gdt.append(Descriptor::kernel_data_segment());
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
    debug_assert_eq!(code, SegmentSelector(0x08));
}
