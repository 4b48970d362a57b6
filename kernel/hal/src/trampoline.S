/*
 * SMP trampoline, position-independent: it runs from whatever page below
 * 1 MiB it was copied to (0x8000 standalone; Linux's real-mode trampoline
 * page in an enclave, where the host module uses it for the first CPU too).
 * SIPI starts it in real mode with %cs = page >> 4. It goes straight from
 * real mode to long mode (PAE + LME + PG|PE at once) with the page tables in
 * the cr3 slot, which must identity-map this page, then jumps to `entry` with
 * %rsp = stack, %rdi = arg0, %rsi = arg1.
 *
 * The slots sit at offset 8 (struct atoll_trampoline_slots in abi/).
 */
.section .rodata.trampoline, "a"
.global trampoline_start
.global trampoline_end
.code16
trampoline_start:
    jmp 1f
.balign 8
tr_cr3:     .quad 0
tr_stack:   .quad 0
tr_entry:   .quad 0
tr_arg0:    .quad 0
tr_arg1:    .quad 0
tr_gdt:
    .quad 0
    .quad 0x00af9a000000ffff           /* 0x08: 64-bit code */
    .quad 0x00cf92000000ffff           /* 0x10: data */
tr_gdtr:
    .word 23
    .long 0                            /* base: filled in below */
tr_far:
    .long 0                            /* offset of tr_long: filled in below */
    .word 0x08

1:  cli
    cld
    mov %cs, %ax
    mov %ax, %ds
    movzwl %ax, %ebx
    shl $4, %ebx                       /* %ebx = linear address of this page */
    lea (tr_gdt - trampoline_start)(%ebx), %eax
    mov %eax, (tr_gdtr - trampoline_start + 2)
    lea (tr_long - trampoline_start)(%ebx), %eax
    mov %eax, (tr_far - trampoline_start)

    mov $0x20, %eax                    /* PAE */
    mov %eax, %cr4
    mov (tr_cr3 - trampoline_start), %eax
    mov %eax, %cr3
    mov $0xC0000080, %ecx              /* EFER */
    rdmsr
    or $0x900, %eax                    /* LME | NXE */
    wrmsr
    lgdtl (tr_gdtr - trampoline_start)
    mov %cr0, %eax
    or $0x80000001, %eax               /* PG | PE */
    mov %eax, %cr0
    ljmpl *(tr_far - trampoline_start)

.code64
tr_long:
    mov $0x10, %eax
    mov %eax, %ds
    mov %eax, %es
    mov %eax, %ss
    xor %eax, %eax
    mov %eax, %fs
    mov %eax, %gs
    mov tr_stack(%rip), %rsp
    mov tr_arg0(%rip), %rdi
    mov tr_arg1(%rip), %rsi
    jmp *tr_entry(%rip)
trampoline_end:
