/*
 * Secondary-CPU trampoline. Copied to TRAMPOLINE_PHYS (below 1 MiB) and
 * started by SIPI in real mode with %cs = TRAMPOLINE_PHYS >> 4. It goes
 * straight from real mode to long mode (PAE + LME + PG|PE at once), using the
 * boot page tables, which identity-map this page. The kernel fills the
 * trampoline_* parameter slots before each SIPI.
 */
.set TRAMPOLINE_PHYS, 0x8000

.section .rodata.trampoline, "a"
.global trampoline_start
.global trampoline_end
.global trampoline_cr3
.global trampoline_stack
.global trampoline_entry
.global trampoline_cpu
.code16
trampoline_start:
    cli
    cld
    mov %cs, %ax
    mov %ax, %ds
    mov $0x20, %eax                    /* PAE */
    mov %eax, %cr4
    mov (trampoline_cr3 - trampoline_start), %eax
    mov %eax, %cr3
    mov $0xC0000080, %ecx              /* EFER */
    rdmsr
    or $0x900, %eax                    /* LME | NXE */
    wrmsr
    lgdtl (trampoline_gdtr - trampoline_start)
    mov %cr0, %eax
    or $0x80000001, %eax               /* PG | PE */
    mov %eax, %cr0
    ljmpl $0x08, $(TRAMPOLINE_PHYS + trampoline_long - trampoline_start)

.code64
trampoline_long:
    mov $0x10, %eax
    mov %eax, %ds
    mov %eax, %es
    mov %eax, %ss
    xor %eax, %eax
    mov %eax, %fs
    mov %eax, %gs
    mov (TRAMPOLINE_PHYS + trampoline_stack - trampoline_start), %rsp
    mov (TRAMPOLINE_PHYS + trampoline_cpu - trampoline_start), %rdi
    mov (TRAMPOLINE_PHYS + trampoline_entry - trampoline_start), %rax
    jmp *%rax

.balign 8
trampoline_gdt:
    .quad 0
    .quad 0x00af9a000000ffff
    .quad 0x00cf92000000ffff
trampoline_gdtr:
    .word 23
    .long TRAMPOLINE_PHYS + trampoline_gdt - trampoline_start
.balign 8
trampoline_cr3:
    .quad 0
trampoline_stack:
    .quad 0
trampoline_entry:
    .quad 0
trampoline_cpu:
    .quad 0
trampoline_end:
