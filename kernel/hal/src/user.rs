//! Programs' code: the SYSCALL entries, the way back (SYSRET, or IRETQ from
//! a TrapFrame), and the CPU state each user thread owns (FS base, FPU/SSE
//! registers, kernel stack, mode). The kernel itself never touches FPU or
//! SSE registers (the target is soft-float), so they are only switched
//! between user threads.
//!
//! A program runs in ring 3, or, in kernel mode (a hybrid runtime's), at
//! CPL 0 in the same lower half with the kernel's GS base: its SYSCALL
//! comes to an entry without SWAPGS, through the LSTAR its thread's
//! `switch_in` set, and goes back by IRETQ (SYSRET only returns to ring 3).
//! Which mode a thread runs in is its `UserCpuState`'s, never its frame's:
//! a system call returns with the selectors its entry pushed, and a new
//! thread enters with its process's mode.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, Ordering};

use crate::idt::TrapFrame;
use crate::paging::is_user_address;
use crate::{cpu, gdt, percpu};

/// `TrapFrame::vector` of a system call, outside the interrupt vectors.
pub const SYSCALL_MARK: u64 = 0x100;
/// `TrapFrame::vector` of a kernel-mode program's direct call.
pub const DIRECT_CALL_MARK: u64 = 0x101;
/// `TrapFrame::vector` of an HRT API call's way back with a signal.
pub const HRT_CALL_MARK: u64 = 0x102;
pub const USER_CODE_SELECTOR: u64 = gdt::USER_CODE as u64 | 3;
pub const USER_DATA_SELECTOR: u64 = gdt::USER_DATA as u64 | 3;
pub const KERNEL_CODE_SELECTOR: u64 = gdt::KERNEL_CODE as u64;
pub const KERNEL_DATA_SELECTOR: u64 = gdt::KERNEL_DATA as u64;
/// IF set, reserved bit 1 set: the flags a new user thread starts with.
pub const USER_RFLAGS: u64 = 0x202;

const IA32_EFER: u32 = 0xC000_0080;
const IA32_STAR: u32 = 0xC000_0081;
const IA32_LSTAR: u32 = 0xC000_0082;
const IA32_FMASK: u32 = 0xC000_0084;
const IA32_FS_BASE: u32 = 0xC000_0100;
const EFER_SCE: u64 = 1 << 0;
/// Flags cleared on SYSCALL: IF (no interrupts until the stack is switched),
/// TF, DF, AC.
const SYSCALL_FMASK: u64 = (1 << 9) | (1 << 8) | (1 << 10) | (1 << 18);

core::arch::global_asm!(
    include_str!("trapframe.S"),
    r#"
// Onto the thread's kernel stack, with SYSCALL's rsp, rflags and the
// program's selectors: the top of the frame.
.macro atoll_syscall_frame_top ss, cs
    mov %rsp, %gs:16
    mov %gs:8, %rsp
    pushq \ss
    pushq %gs:16
    push %r11
    pushq \cs
.endm

.global atoll_syscall_entry
atoll_syscall_entry:
    swapgs
    atoll_syscall_frame_top ${user_ss}, ${user_cs}
    jmp 1f

// A kernel-mode program's: its GS base is the kernel's already.
.global atoll_kernel_mode_syscall_entry
atoll_kernel_mode_syscall_entry:
    atoll_syscall_frame_top ${kernel_ss}, ${kernel_cs}
1:
    push %rcx
    pushq $0
    pushq ${mark}
    push_general_registers
    cld
    mov %rsp, %rdi
    call syscall_from_user
    testb $3, {cs_offset}(%rsp)
    jz atoll_iret_to_kernel_mode
    test %al, %al
    jnz atoll_iret_from_frame
atoll_sysret_from_frame:
    pop_general_registers
    add $16, %rsp
    pop %rcx
    add $8, %rsp
    pop %r11
    pop %rsp
    swapgs
    sysretq

// Every register as the frame has it (SYSRET would take rcx and r11).
atoll_iret_from_frame:
    pop_general_registers
    add $16, %rsp
    swapgs
    iretq

// To CPL 0: IRETQ loads the program's stack pointer with the rest, so
// nothing is written below it.
atoll_iret_to_kernel_mode:
    pop_general_registers
    add $16, %rsp
    iretq

// A kernel-mode program's system call by CALL (SYS_HRT_DIRECT_CALL gives
// this address). Nothing below its stack pointer is written (a page there
// may not be there yet): interrupts off first, the return address read
// while still on the program's stack (a fault there is the program's, as
// `TrapFrame::from_program` says), the flags saved on the kernel stack (IF
// set, as SYSCALL leaves it in r11), the frame built as the SYSCALL
// entry's, with rcx = rip and r11 = rflags.
.global atoll_direct_call_entry
atoll_direct_call_entry:
    cli
    mov (%rsp), %rcx
    mov %rsp, %r11
    mov %gs:8, %rsp
    pushq ${kernel_ss}
    lea 8(%r11), %r11
    push %r11
    pushfq
    orq $0x200, (%rsp)
    pushq ${kernel_cs}
    mov 8(%rsp), %r11
    push %rcx
    pushq $0
    pushq ${direct_mark}
    push_general_registers
    cld
    mov %rsp, %rdi
    mov {rip_offset}(%rsp), %r12
    mov {rsp_offset}(%rsp), %r13
    call syscall_from_user
    // Straight back only to where it was called from (rcx: the return
    // address, as SYSCALL leaves it), reading nothing from its stack; else
    // (a handler to run, a restart, a frame rt_sigreturn replaced) by
    // IRETQ, which writes nothing below its stack pointer either.
    test %al, %al
    jnz atoll_iret_to_kernel_mode
    cmp {rip_offset}(%rsp), %r12
    jne atoll_iret_to_kernel_mode
    cmp {rsp_offset}(%rsp), %r13
    jne atoll_iret_to_kernel_mode
    andq $~0x200, {rflags_offset}(%rsp)
    mov %r12, {rcx_offset}(%rsp)
    pop_general_registers
    add $32, %rsp
    popfq
    mov (%rsp), %rsp
    // STI lets interrupts in after the next instruction: on the program's
    // code, never while this stub runs on its stack.
    sti
    jmp *%rcx

// A kernel-mode program's call into the hybrid-runtime API
// (libatoll-hrt): a plain C call, the op and arguments in rdi..r9, the
// result in rax. It runs on the thread's kernel stack with the caller's
// interrupt flag (an Active Message handler calls with interrupts off), as
// kernel code: an interrupt before the switch finds kernel code on a
// program's stack and moves to the kernel stack itself (isr.S), one after
// finds kernel code on the kernel stack. No frame is built: the program's
// registers are C's to keep (callee-saved ones by the callee). Nothing
// below the program's stack pointer is written; the way back is RET,
// unless the handler asks (rdx != 0) for the way back of an interrupt: a
// signal to deliver, which needs a frame to put a handler's in.
.global atoll_hrt_call_entry
atoll_hrt_call_entry:
    mov %rsp, %rax
    mov %gs:8, %rsp
    push %rax
    sub $8, %rsp
    call hrt_call_from_program
    test %rdx, %rdx
    jnz 1f
    mov 8(%rsp), %rsp
    ret
// The frame of an interrupt that came as the call returned: rip the
// return address, rsp above it, the caller's flags, rax the result; the
// callee-saved registers are still the program's.
1:
    mov 8(%rsp), %r11
    pushfq
    pop %rcx
    cli
    mov %gs:8, %rsp
    pushq ${kernel_ss}
    lea 8(%r11), %rdx
    push %rdx
    push %rcx
    pushq ${kernel_cs}
    pushq (%r11)
    pushq $0
    pushq ${hrt_mark}
    push_general_registers
    cld
    mov %rsp, %rdi
    call hrt_call_deliver
    jmp atoll_iret_to_kernel_mode

.global atoll_enter_user
atoll_enter_user:
    cli
    mov %rdi, %rsp
    testb $3, {cs_offset}(%rsp)
    jz atoll_iret_to_kernel_mode
    jmp atoll_sysret_from_frame
"#,
    user_ss = const USER_DATA_SELECTOR,
    user_cs = const USER_CODE_SELECTOR,
    kernel_ss = const KERNEL_DATA_SELECTOR,
    kernel_cs = const KERNEL_CODE_SELECTOR,
    mark = const SYSCALL_MARK,
    direct_mark = const DIRECT_CALL_MARK,
    hrt_mark = const HRT_CALL_MARK,
    cs_offset = const core::mem::offset_of!(TrapFrame, cs),
    rip_offset = const core::mem::offset_of!(TrapFrame, rip),
    rflags_offset = const core::mem::offset_of!(TrapFrame, rflags),
    rsp_offset = const core::mem::offset_of!(TrapFrame, rsp),
    rcx_offset = const core::mem::offset_of!(TrapFrame, rcx),
    options(att_syntax)
);

extern "C" {
    fn atoll_syscall_entry();
    fn atoll_kernel_mode_syscall_entry();
    fn atoll_direct_call_entry();
    fn atoll_hrt_call_entry();
    fn atoll_enter_user(frame: *const TrapFrame) -> !;
}

/// Whether the program thread each CPU last switched in runs in kernel
/// mode (and so which SYSCALL entry its LSTAR holds).
static KERNEL_MODE: [AtomicBool; percpu::MAX_CPUS] =
    [const { AtomicBool::new(false) }; percpu::MAX_CPUS];

/// Whether bits 63..47 of `a` are all equal (else no x86-64 address).
fn canonical(a: u64) -> bool {
    ((a as i64) << 16 >> 16) as u64 == a
}

/// Where a kernel-mode program calls for its system calls instead of
/// SYSCALL (kernel text, which only CPL 0 may run).
pub fn direct_call_entry() -> u64 {
    atoll_direct_call_entry as *const () as u64
}

/// What the kernel's handler of an HRT API call gives back: the value (or
/// -errno) and whether the thread has a signal to take on its way back.
#[repr(C)]
pub struct HrtReturn {
    pub value: i64,
    pub deliver: u64,
}

/// The kernel's handlers of the HRT API: the call (op, arguments), and the
/// way back to the program with a frame when a signal is to be delivered
/// (the interrupts' way back: `return_to_user`).
#[derive(Clone, Copy)]
pub struct HrtHandlers {
    pub call: fn(u64, [u64; 5]) -> HrtReturn,
    pub deliver: fn(&mut TrapFrame),
}
static HRT_HANDLERS: spin::Once<HrtHandlers> = spin::Once::new();

/// Registers the handlers `hrt_call_entry` calls.
pub fn set_hrt_handlers(h: HrtHandlers) {
    HRT_HANDLERS.call_once(|| h);
}

/// Where a kernel-mode program CALLs the HRT API (atoll_hrt_call_entry).
pub fn hrt_call_entry() -> u64 {
    atoll_hrt_call_entry as *const () as u64
}

#[no_mangle]
extern "C" fn hrt_call_from_program(
    op: u64,
    a0: u64,
    a1: u64,
    a2: u64,
    a3: u64,
    a4: u64,
) -> HrtReturn {
    match HRT_HANDLERS.get() {
        Some(h) => (h.call)(op, [a0, a1, a2, a3, a4]),
        None => HrtReturn { value: -38, deliver: 0 }, // ENOSYS: none registered yet
    }
}

/// The slow way back of `atoll_hrt_call_entry`, with interrupts masked.
#[no_mangle]
extern "C" fn hrt_call_deliver(frame: &mut TrapFrame) {
    if let Some(h) = HRT_HANDLERS.get() {
        (h.deliver)(frame);
    }
}

/// The code and stack selectors of a program thread in `kernel_mode`.
fn selectors(kernel_mode: bool) -> (u64, u64) {
    if kernel_mode {
        (KERNEL_CODE_SELECTOR, KERNEL_DATA_SELECTOR)
    } else {
        (USER_CODE_SELECTOR, USER_DATA_SELECTOR)
    }
}

/// Points this CPU's SYSCALL at the entry for a thread of `kernel_mode`.
fn set_program_mode(kernel_mode: bool) {
    if KERNEL_MODE[percpu::cpu_index()].swap(kernel_mode, Ordering::Relaxed) == kernel_mode {
        return;
    }
    let entry: unsafe extern "C" fn() =
        if kernel_mode { atoll_kernel_mode_syscall_entry } else { atoll_syscall_entry };
    cpu::wrmsr(IA32_LSTAR, entry as *const () as u64);
}

/// Names the kernel's system-call handler, once, in the kernel crate: it
/// gets the user thread's registers (number in rax, arguments in rdi, rsi,
/// rdx, r10, r8, r9) with interrupts masked, and leaves the result in rax.
/// It returns true when it replaced the registers wholesale (rt_sigreturn):
/// the return then restores every one, rcx and r11 included.
/// Registered at link time rather than through a pointer, so the hottest
/// path has no indirect call (each costs a lookup under QEMU's TCG).
#[macro_export]
macro_rules! syscall_handler {
    ($handler:path) => {
        #[no_mangle]
        extern "Rust" fn __atoll_syscall_handler(frame: &mut $crate::idt::TrapFrame) -> bool {
            $handler(frame)
        }
    };
}

extern "Rust" {
    fn __atoll_syscall_handler(frame: &mut TrapFrame) -> bool;
}

/// Returns true to leave by IRETQ (every register from the frame).
#[no_mangle]
extern "C" fn syscall_from_user(frame: &mut TrapFrame) -> bool {
    // The entry pushed the selectors of the thread's mode (its LSTAR chose
    // the entry); a frame the handler replaced keeps them.
    let selectors = (frame.cs, frame.ss);
    // Interrupts stay masked until the handler knows the call may take long.
    // SAFETY: `syscall_handler!` defines this function in the kernel crate
    // with exactly this signature; the image does not link without it.
    let iret = unsafe { __atoll_syscall_handler(frame) };
    cpu::disable_interrupts();
    // Whatever the handler did, the thread's mode with interrupts on and
    // addresses it may use: a non-canonical RIP would fault in ring 0 on
    // either way out; ring 3 only has the lower half, a kernel-mode program
    // either (a restarted direct call goes back to its kernel entry).
    frame.rflags |= USER_RFLAGS;
    (frame.cs, frame.ss) = selectors;
    let usable = |a: u64| if frame.cs & 3 == 3 { is_user_address(a) } else { canonical(a) };
    if !usable(frame.rip) || !usable(frame.rsp) {
        frame.rip = 0;
    }
    iret
}

/// Makes this CPU able to run user code: SYSCALL, and SSE for programs.
pub(crate) fn init_this_cpu() {
    cpu::wrmsr(IA32_EFER, cpu::rdmsr(IA32_EFER) | EFER_SCE);
    // SYSCALL loads CS = STAR[47:32], SS = +8; SYSRET loads SS = STAR[63:48]
    // + 8 and CS = STAR[63:48] + 16, hence user data before user code.
    let star = ((gdt::KERNEL_DATA as u64) << 48) | ((gdt::KERNEL_CODE as u64) << 32);
    cpu::wrmsr(IA32_STAR, star);
    cpu::wrmsr(IA32_LSTAR, atoll_syscall_entry as *const () as u64);
    KERNEL_MODE[percpu::cpu_index()].store(false, Ordering::Relaxed);
    cpu::wrmsr(IA32_FMASK, SYSCALL_FMASK);
    use x86_64::registers::control::{Cr0, Cr0Flags, Cr4, Cr4Flags};
    // SAFETY: enabling SSE state handling (OSFXSR, OSXMMEXCPT) and native
    // FPU errors changes nothing for the soft-float kernel; it lets user
    // programs use SSE. WP makes read-only pages read-only at CPL 0 too,
    // for kernel-mode programs (copy-on-write, mprotect); the kernel
    // writes programs' memory through its direct map, never their pages.
    unsafe {
        Cr4::update(|f| f.insert(Cr4Flags::OSFXSR | Cr4Flags::OSXMMEXCPT_ENABLE));
        Cr0::update(|f| {
            f.remove(Cr0Flags::EMULATE_COPROCESSOR | Cr0Flags::TASK_SWITCHED);
            f.insert(
                Cr0Flags::MONITOR_COPROCESSOR | Cr0Flags::NUMERIC_ERROR | Cr0Flags::WRITE_PROTECT,
            );
        });
    }
}

/// Leaves for the program with the registers in `frame`, in `kernel_mode`
/// (the thread's, passed in: a thread moved to another CPU meanwhile must
/// not take that CPU's) with interrupts on (a frame copied from a direct
/// call's has them off); never returns. The frame must lie on the running
/// thread's kernel stack.
pub fn enter(frame: &mut TrapFrame, kernel_mode: bool) -> ! {
    debug_assert!(is_user_address(frame.rip) && is_user_address(frame.rsp));
    frame.rflags |= USER_RFLAGS;
    (frame.cs, frame.ss) = selectors(kernel_mode);
    // SAFETY: the frame holds user-half addresses and the selectors of the
    // thread's mode; the kernel stack it lies on stays this thread's until
    // the next entry, which starts again from the stack top.
    unsafe { atoll_enter_user(frame) }
}

/// A fresh user register frame: start at `rip` with stack `rsp`, all else 0
/// (`enter` sets the selectors of the thread's mode).
pub fn initial_frame(rip: u64, rsp: u64) -> TrapFrame {
    TrapFrame {
        r15: 0,
        r14: 0,
        r13: 0,
        r12: 0,
        r11: 0,
        r10: 0,
        r9: 0,
        r8: 0,
        rbp: 0,
        rdi: 0,
        rsi: 0,
        rdx: 0,
        rcx: 0,
        rbx: 0,
        rax: 0,
        vector: SYSCALL_MARK,
        error_code: 0,
        rip,
        cs: USER_CODE_SELECTOR,
        rflags: USER_RFLAGS,
        rsp,
        ss: USER_DATA_SELECTOR,
    }
}

/// FXSAVE image of the x87/SSE registers.
#[repr(C, align(16))]
struct FxArea([u8; 512]);

/// Bytes of an FXSAVE image (the FPU state a signal frame holds).
pub const FPU_STATE_SIZE: usize = 512;
const MXCSR_OFFSET: usize = 24;
const MXCSR_MASK_OFFSET: usize = 28;

/// The running thread's x87/SSE registers, as FXSAVE stores them.
pub fn save_fpu() -> [u8; FPU_STATE_SIZE] {
    let mut fx = FxArea([0; FPU_STATE_SIZE]);
    // SAFETY: FXSAVE writes 512 bytes into the 16-byte aligned local; the
    // kernel never uses these registers, so they are the user thread's.
    unsafe { core::arch::asm!("fxsave64 [{}]", in(reg) &mut fx, options(nostack)) };
    fx.0
}

/// FXSAVE of the running thread's x87/SSE registers to `virt`.
///
/// # Safety
/// [virt, virt + 512) is writable memory, 16-byte aligned, that no Rust
/// object owns (`UserSpace::save_fpu_at` gives a program's page).
pub(crate) unsafe fn fxsave_at(virt: u64) {
    // SAFETY: the area is as the caller promises; the registers are the
    // user thread's, as in save_fpu.
    unsafe { core::arch::asm!("fxsave64 [{}]", in(reg) virt, options(nostack)) };
}

/// An x87/SSE image a program gave (rt_sigreturn), to load with `load_fpu`.
pub struct FpuImage(FxArea);

impl FpuImage {
    pub fn new() -> Self {
        FpuImage(FxArea([0; FPU_STATE_SIZE]))
    }

    pub fn bytes_mut(&mut self) -> &mut [u8; FPU_STATE_SIZE] {
        &mut self.0 .0
    }
}

impl Default for FpuImage {
    fn default() -> Self {
        Self::new()
    }
}

/// Loads the running thread's x87/SSE registers from `image`: MXCSR bits
/// the CPU does not support are cleared first, as FXRSTOR faults on them.
pub fn load_fpu(image: &mut FpuImage) {
    let fx = &mut image.0 .0;
    let word = |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    // The CPU's supported MXCSR bits, from one FXSAVE (0 means the default).
    static MXCSR_MASK: spin::Once<u32> = spin::Once::new();
    let mask = *MXCSR_MASK.call_once(|| match word(&save_fpu(), MXCSR_MASK_OFFSET) {
        0 => 0xffbf,
        m => m,
    });
    let mxcsr = word(fx, MXCSR_OFFSET) & mask;
    fx[MXCSR_OFFSET..MXCSR_OFFSET + 4].copy_from_slice(&mxcsr.to_le_bytes());
    // SAFETY: a 16-byte aligned 512-byte image whose MXCSR holds only
    // supported bits; the other fields cannot make FXRSTOR fault.
    unsafe { core::arch::asm!("fxrstor64 [{}]", in(reg) &image.0, options(nostack)) };
}

/// A user thread's CPU state beyond its general registers.
pub struct UserCpuState {
    fpu: UnsafeCell<FxArea>,
    fs_base: core::sync::atomic::AtomicU64,
    kernel_stack_top: u64,
    /// At CPL 0 (a kernel-mode program's thread).
    kernel_mode: bool,
}

// SAFETY: `fpu` is only touched by switch_in/switch_out, which run on the
// CPU the thread is bound to, with interrupts off, while the thread is not
// running anywhere else.
unsafe impl Sync for UserCpuState {}

/// The FPU state a program starts with.
fn initial_fpu() -> FxArea {
    let mut fx = FxArea([0; 512]);
    fx.0[0..2].copy_from_slice(&0x037fu16.to_le_bytes()); // FCW: all x87 exceptions masked
    fx.0[24..28].copy_from_slice(&0x1f80u32.to_le_bytes()); // MXCSR: all SSE exceptions masked
    fx
}

impl UserCpuState {
    pub fn new(kernel_stack_top: u64, fs_base: u64, kernel_mode: bool) -> Self {
        UserCpuState {
            fpu: UnsafeCell::new(initial_fpu()),
            fs_base: core::sync::atomic::AtomicU64::new(fs_base),
            kernel_stack_top,
            kernel_mode,
        }
    }

    /// arch_prctl(ARCH_SET_FS) on the running thread.
    pub fn set_fs_base(&self, base: u64) {
        self.fs_base.store(base, core::sync::atomic::Ordering::Relaxed);
        cpu::wrmsr(IA32_FS_BASE, base);
    }

    /// execve on the running thread: FPU state and FS base as a new
    /// program's.
    pub fn reset(&self) {
        load_fpu(&mut FpuImage(initial_fpu()));
        self.set_fs_base(0);
    }

    pub fn fs_base(&self) -> u64 {
        self.fs_base.load(core::sync::atomic::Ordering::Relaxed)
    }

    /// Saves what the thread leaves in the CPU. Interrupts are off.
    pub fn switch_out(&self) {
        // SAFETY: see the Sync impl; FXSAVE writes 512 bytes into the
        // 16-byte aligned area.
        unsafe { core::arch::asm!("fxsave64 [{}]", in(reg) self.fpu.get(), options(nostack)) };
    }

    /// Puts the thread's state into the CPU before it runs. Interrupts are off.
    pub fn switch_in(&self) {
        // SAFETY: see the Sync impl; the area holds a valid FXSAVE image
        // (initial values or a previous FXSAVE).
        unsafe { core::arch::asm!("fxrstor64 [{}]", in(reg) self.fpu.get(), options(nostack)) };
        cpu::wrmsr(IA32_FS_BASE, self.fs_base());
        percpu::set_syscall_stack(self.kernel_stack_top);
        gdt::set_ring0_stack(self.kernel_stack_top);
        set_program_mode(self.kernel_mode);
    }
}
