//! What happens on an interrupt or exception. Exceptions are reported in full
//! and stop the system; interrupts go to their registered handler.

use crate::arch::{apic, cpu, idt::TrapFrame, percpu, qemu};
use crate::console::print_fatal;

const EXCEPTION_NAMES: [&str; 32] = [
    "divide error (#DE)", "debug (#DB)", "NMI", "breakpoint (#BP)", "overflow (#OF)",
    "bound range (#BR)", "invalid opcode (#UD)", "device not available (#NM)",
    "double fault (#DF)", "coprocessor overrun", "invalid TSS (#TS)",
    "segment not present (#NP)", "stack fault (#SS)", "general protection (#GP)",
    "page fault (#PF)", "reserved", "x87 error (#MF)", "alignment check (#AC)",
    "machine check (#MC)", "SIMD error (#XM)", "virtualization (#VE)",
    "control protection (#CP)", "reserved", "reserved", "reserved", "reserved",
    "reserved", "reserved", "hypervisor injection (#HV)", "VMM communication (#VC)",
    "security (#SX)", "reserved",
];

pub fn handle(frame: &mut TrapFrame) {
    let vector = frame.vector as u8;
    if vector < 32 {
        if crate::arch::user::from_user(frame) {
            crate::process::user_fault(frame, cpu::read_cr2());
        }
        report_exception(frame);
        stop_system(false);
    }
    if vector == apic::SPURIOUS_VECTOR {
        return;
    }
    if !crate::ipi::dispatch(vector) {
        crate::println!("CPU {}: unexpected interrupt vector {:#x}", percpu::cpu_index(), vector);
    }
    apic::eoi();
    crate::sched::preempt_point();
    if crate::arch::user::from_user(frame) {
        crate::process::kill_check(&crate::sched::current());
    }
}

fn page_fault_cause(code: u64) -> &'static str {
    match (code & 1 != 0, code & 2 != 0, code & 16 != 0) {
        (_, _, true) => "instruction fetch",
        (false, false, _) => "read of a not-present page",
        (false, true, _) => "write to a not-present page",
        (true, false, _) => "read protection violation",
        (true, true, _) => "write protection violation",
    }
}

fn report_exception(f: &TrapFrame) {
    let (tid, tname) = crate::sched::describe_current();
    let v = f.vector as usize;
    print_fatal(format_args!(
        "\n!!! EXCEPTION on CPU {} in thread {} \"{}\": {} (vector {}), error code {:#x}\n",
        percpu::cpu_index(), tid, tname, EXCEPTION_NAMES[v], v, f.error_code
    ));
    if v == 14 {
        print_fatal(format_args!(
            "    faulting address {:#018x}: {}\n",
            cpu::read_cr2(),
            page_fault_cause(f.error_code)
        ));
    }
    print_fatal(format_args!(
        "    rip {:#018x}  cs {:#06x}  rflags {:#010x}  rsp {:#018x}  ss {:#06x}\n",
        f.rip, f.cs, f.rflags, f.rsp, f.ss
    ));
    print_fatal(format_args!(
        "    rax {:#018x}  rbx {:#018x}  rcx {:#018x}  rdx {:#018x}\n    rsi {:#018x}  rdi {:#018x}  rbp {:#018x}  r8  {:#018x}\n    r9  {:#018x}  r10 {:#018x}  r11 {:#018x}  r12 {:#018x}\n    r13 {:#018x}  r14 {:#018x}  r15 {:#018x}\n",
        f.rax, f.rbx, f.rcx, f.rdx, f.rsi, f.rdi, f.rbp, f.r8, f.r9, f.r10, f.r11, f.r12, f.r13, f.r14, f.r15
    ));
}

/// Stops the system: standalone, QEMU powers off with a pass/fail status; as
/// a co-kernel a failure is reported to the host (the enclave is then
/// crashed until `atoll destroy`). Then this core halts for good.
pub fn stop_system(pass: bool) -> ! {
    cpu::disable_interrupts();
    if !pass {
        print_fatal(format_args!("!!! CPU {} stopped.\n", percpu::cpu_index()));
    }
    if crate::arch::entry::is_cokernel() {
        if !pass {
            crate::channel::report_crash(percpu::cpu_index());
        }
    } else {
        qemu::exit(pass);
    }
    cpu::halt_forever()
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let (tid, tname) = crate::sched::describe_current();
    print_fatal(format_args!(
        "\n!!! PANIC on CPU {} in thread {} \"{}\": {}\n",
        percpu::cpu_index(), tid, tname, info
    ));
    stop_system(false)
}
