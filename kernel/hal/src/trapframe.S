/*
 * Saving and restoring the general registers in the order of struct
 * TrapFrame (idt.rs), for both ways into the kernel: interrupt stubs
 * (isr.S) and the SYSCALL entry (user.rs). Both include this file; the
 * guard keeps one definition when they land in the same assembly unit.
 */
.ifndef ATOLL_TRAPFRAME_MACROS
.set ATOLL_TRAPFRAME_MACROS, 1

.macro push_general_registers
    push %rax
    push %rbx
    push %rcx
    push %rdx
    push %rsi
    push %rdi
    push %rbp
    push %r8
    push %r9
    push %r10
    push %r11
    push %r12
    push %r13
    push %r14
    push %r15
.endm

.macro pop_general_registers
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %r11
    pop %r10
    pop %r9
    pop %r8
    pop %rbp
    pop %rdi
    pop %rsi
    pop %rdx
    pop %rcx
    pop %rbx
    pop %rax
.endm

.endif
