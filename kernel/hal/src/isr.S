/*
 * Interrupt entry stubs, one per vector, each 16 bytes apart so the IDT can be
 * filled by arithmetic. Each pushes a dummy error code where the CPU pushes
 * none, then the vector, then jumps to the common path, which saves every
 * general register into a TrapFrame and calls trap_entry(&mut TrapFrame).
 * Coming from ring 3 (the saved CS has RPL 3) it swaps in the kernel's GS
 * base first and the user's back last; a kernel-mode program runs with the
 * kernel's.
 *
 * Every vector arrives on an interrupt stack (IST, gdt.rs). NMI, double
 * fault and machine check stay on theirs. The others move at once to the
 * stack the CPU would have used: the thread's kernel stack (%gs:8) for a
 * program's code, in ring 3 or in the lower half at CPL 0, and for the
 * kernel's while on a program's stack (the first instruction of the direct
 * call's entry, before its stack is switched, and the HRT call entry's
 * instructions before and after its time on the kernel stack; the
 * thread's kernel stack is empty then); for an interrupt of the kernel, below the stack pointer it
 * interrupted (the kernel keeps no red zone), so that the interrupted code
 * may be switched away from. An exception in the kernel is reported and
 * stops the CPU, from where it is. Nothing is written below a kernel-mode
 * program's stack pointer: its red zone is there, or a page not yet given.
 */
.section .text
.balign 16
.global isr_stubs
isr_stubs:
.set vec, 0
.rept 256
    .balign 16
    .if (vec == 8) + (vec == 10) + (vec == 11) + (vec == 12) + (vec == 13) + (vec == 14) + (vec == 17) + (vec == 21) + (vec == 29) + (vec == 30)
    .else
    pushq $0
    .endif
    pushq $vec
    .if (vec == 2) + (vec == 8) + (vec == 18)
    jmp isr_stay
    .else
    jmp isr_common
    .endif
    .set vec, vec + 1
.endr

/* On entry: vector 0(%rsp), error 8, rip 16, cs 24, rflags 32, rsp 40, ss 48. */
isr_common:
    testb $3, 24(%rsp)
    jz 1f
    swapgs
    jmp 2f
1:
    testb $0x80, 23(%rsp)      /* rip in the upper half: the kernel's code */
    jz 2f
    testb $0x80, 47(%rsp)      /* ... on a program's stack */
    jz 2f
    cmpq $32, (%rsp)
    jb isr_stay
    push %rax
    push %rbx
    mov 56(%rsp), %rax         /* the interrupted stack pointer */
    and $-16, %rax
    jmp 3f
2:
    push %rax
    push %rbx
    mov %gs:8, %rax            /* the thread's kernel stack */
3:
    /* rbx, rax and the 7 words above go below %rax; then so does %rsp. */
    sub $72, %rax
    .irp off, 0, 8, 16, 24, 32, 40, 48, 56, 64
    mov \off(%rsp), %rbx
    mov %rbx, \off(%rax)
    .endr
    mov %rax, %rsp
    pop %rbx
    pop %rax
    jmp 4f

isr_stay:
    testb $3, 24(%rsp)
    jz 4f
    swapgs
4:
    push_general_registers
    cld
    mov %rsp, %rdi
    call trap_entry
    pop_general_registers
    add $16, %rsp
    testb $3, 8(%rsp)
    jz 5f
    swapgs
5:
    iretq
