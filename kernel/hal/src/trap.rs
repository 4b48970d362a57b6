//! Where every interrupt and exception lands (from the stubs in isr.S), and
//! how the system stops. Interrupts go to the handler registered for their
//! vector ([`crate::irq`]), then to the kernel's after-interrupt hook;
//! NMIs are counted as interrupts and return; exceptions go to the kernel's
//! exception hook, or, before the kernel has one, are reported and stop
//! the system (stop.rs).

use spin::Once;

use crate::console::print_fatal;
use crate::idt::TrapFrame;
use crate::stop::stop_system;
use crate::{apic, cpu, percpu};

/// The kernel's handlers for one trap frame.
pub type FrameHook = fn(&mut TrapFrame);

struct Handlers {
    exception: FrameHook,
    after_interrupt: FrameHook,
}

const NMI_VECTOR: u8 = 2;

static HANDLERS: Once<Handlers> = Once::new();

/// Registers the kernel's handlers: `exception` for vectors 0-31, and
/// `after_interrupt` on the way out of every other interrupt (the place to
/// preempt). Once, before interrupts are enabled.
pub fn set_handlers(exception: FrameHook, after_interrupt: FrameHook) {
    HANDLERS.call_once(|| Handlers { exception, after_interrupt });
}

#[no_mangle]
extern "C" fn trap_entry(frame: &mut TrapFrame) {
    let vector = frame.vector as u8;
    if vector == NMI_VECTOR {
        // An interrupt as far as noise goes (its detour is the kernel's);
        // nothing else to do: no handler, no EOI, no preemption here.
        crate::irq::note_nmi(frame as *const TrapFrame as u64);
        return;
    }
    if vector < 32 {
        match HANDLERS.get() {
            Some(h) => (h.exception)(frame),
            None => {
                report_exception(frame, 0, "boot");
                stop_system(false);
            }
        }
        return;
    }
    crate::irq::note_taken();
    if vector == atoll_abi::SPURIOUS_VECTOR {
        return;
    }
    if !crate::irq::dispatch(vector) {
        crate::println!("CPU {}: unexpected interrupt vector {:#x}", percpu::cpu_index(), vector);
    }
    apic::eoi();
    if let Some(h) = HANDLERS.get() {
        (h.after_interrupt)(frame);
    }
}

const EXCEPTION_NAMES: [&str; 32] = [
    "divide error (#DE)",
    "debug (#DB)",
    "NMI",
    "breakpoint (#BP)",
    "overflow (#OF)",
    "bound range (#BR)",
    "invalid opcode (#UD)",
    "device not available (#NM)",
    "double fault (#DF)",
    "coprocessor overrun",
    "invalid TSS (#TS)",
    "segment not present (#NP)",
    "stack fault (#SS)",
    "general protection (#GP)",
    "page fault (#PF)",
    "reserved",
    "x87 error (#MF)",
    "alignment check (#AC)",
    "machine check (#MC)",
    "SIMD error (#XM)",
    "virtualization (#VE)",
    "control protection (#CP)",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "reserved",
    "hypervisor injection (#HV)",
    "VMM communication (#VC)",
    "security (#SX)",
    "reserved",
];

fn page_fault_cause(code: u64) -> &'static str {
    match (code & 1 != 0, code & 2 != 0, code & 16 != 0) {
        (_, _, true) => "instruction fetch",
        (false, false, _) => "read of a not-present page",
        (false, true, _) => "write to a not-present page",
        (true, false, _) => "read protection violation",
        (true, true, _) => "write protection violation",
    }
}

/// Reports an exception in full: vector, error code, CR2 and the cause for
/// page faults, every register, the CPU and the thread (`tid`, `name`).
pub fn report_exception(f: &TrapFrame, tid: u64, name: &str) {
    let v = f.vector as usize % 32;
    print_fatal(format_args!(
        "\n!!! EXCEPTION on CPU {} in thread {} \"{}\": {} (vector {}), error code {:#x}\n",
        percpu::cpu_index(),
        tid,
        name,
        EXCEPTION_NAMES[v],
        v,
        f.error_code
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
    let registers = [
        [("rax", f.rax), ("rbx", f.rbx), ("rcx", f.rcx), ("rdx", f.rdx)],
        [("rsi", f.rsi), ("rdi", f.rdi), ("rbp", f.rbp), ("r8 ", f.r8)],
        [("r9 ", f.r9), ("r10", f.r10), ("r11", f.r11), ("r12", f.r12)],
    ];
    for row in registers {
        let [(a, va), (b, vb), (c, vc), (d, vd)] = row;
        print_fatal(format_args!(
            "    {a} {va:#018x}  {b} {vb:#018x}  {c} {vc:#018x}  {d} {vd:#018x}\n"
        ));
    }
    print_fatal(format_args!(
        "    r13 {:#018x}  r14 {:#018x}  r15 {:#018x}\n",
        f.r13, f.r14, f.r15
    ));
}
