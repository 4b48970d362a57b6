/*
 * Interrupt entry stubs, one per vector, each 16 bytes apart so the IDT can be
 * filled by arithmetic. Each pushes a dummy error code where the CPU pushes
 * none, then the vector, then jumps to the common path, which saves every
 * general register into a TrapFrame and calls trap_entry(&mut TrapFrame).
 * Coming from ring 3 (the saved CS has RPL 3) it swaps in the kernel's GS
 * base first and the user's back last.
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
    jmp isr_common
    .set vec, vec + 1
.endr

isr_common:
    testb $3, 24(%rsp)
    jz 1f
    swapgs
1:
    push_general_registers
    cld
    mov %rsp, %rdi
    call trap_entry
    pop_general_registers
    add $16, %rsp
    testb $3, 8(%rsp)
    jz 2f
    swapgs
2:
    iretq
