/*
 * Entry paths of the LWK.
 *
 * pvh_start32: QEMU's PVH loader enters here in 32-bit protected mode, paging
 *   off, %ebx = physical address of the hvm_start_info block. It builds boot
 *   page tables (0-4 GiB identity-mapped and again at KERNEL_OFFSET, 2 MiB
 *   pages), enters long mode and jumps to kernel_entry64 in the upper half.
 * kernel_entry64: the entry every boot path shares (the co-kernel trampoline of
 *   the host module jumps here too). %rdi = physical address of the boot block,
 *   %rsi = boot kind. It applies the image's R_X86_64_RELATIVE relocations for
 *   the address it actually runs at, switches to the boot stack and calls
 *   kernel_main(boot_block, kind).
 * ap_entry64: secondary CPUs arrive here from the SMP trampoline with %rsp set
 *   to their stack and %rdi = their CPU index.
 */
/* From atoll_abi (boot.rs); linker.ld asserts its KERNEL_OFFSET is this one. */
.set KERNEL_OFFSET, {KERNEL_OFFSET}
.set BOOT_KIND_PVH, {BOOT_KIND_PVH}
.global __abi_kernel_offset
.set __abi_kernel_offset, {KERNEL_OFFSET}
.set R_X86_64_RELATIVE, 8

.section .text.boot, "awx"
.code32
.global pvh_start32
pvh_start32:
    cli
    cld
    mov %ebx, %esi
    call 1f
1:  pop %ebp
    sub $(1b - pvh_start32), %ebp      /* %ebp = physical load address */

    /* 2048 PD entries: identity map of 0-4 GiB with 2 MiB pages */
    lea (boot_pd - pvh_start32)(%ebp), %edi
    xor %ecx, %ecx
2:  mov %ecx, %eax
    shl $21, %eax
    or $0x83, %eax                     /* present | writable | large */
    mov %eax, (%edi,%ecx,8)
    movl $0, 4(%edi,%ecx,8)
    inc %ecx
    cmp $2048, %ecx
    jb 2b

    lea (boot_pdpt - pvh_start32)(%ebp), %edi
    lea (boot_pd - pvh_start32 + 3)(%ebp), %eax
    xor %ecx, %ecx
3:  mov %eax, (%edi,%ecx,8)
    movl $0, 4(%edi,%ecx,8)
    add $4096, %eax
    inc %ecx
    cmp $4, %ecx
    jb 3b

    lea (boot_pml4 - pvh_start32)(%ebp), %edi
    lea (boot_pdpt - pvh_start32 + 3)(%ebp), %eax
    mov %eax, (%edi)                   /* PML4[0]: identity */
    mov %eax, 2048(%edi)               /* PML4[256]: KERNEL_OFFSET */

    lea (boot_gdt - pvh_start32)(%ebp), %eax
    mov %eax, (boot_gdtr - pvh_start32 + 2)(%ebp)
    lgdt (boot_gdtr - pvh_start32)(%ebp)

    mov %cr4, %eax
    or $0x20, %eax                     /* PAE */
    mov %eax, %cr4
    lea (boot_pml4 - pvh_start32)(%ebp), %eax
    mov %eax, %cr3
    mov $0xC0000080, %ecx              /* EFER */
    rdmsr
    or $0x900, %eax                    /* LME | NXE */
    wrmsr
    mov %cr0, %eax
    or $0x80000001, %eax               /* PG | PE */
    mov %eax, %cr0

    lea (pvh_long - pvh_start32)(%ebp), %eax
    push $0x08
    push %eax
    lret

.code64
pvh_long:
    mov $0x10, %eax
    mov %eax, %ds
    mov %eax, %es
    mov %eax, %ss
    xor %eax, %eax
    mov %eax, %fs
    mov %eax, %gs
    mov %ebp, %eax                     /* zero-extends */
    movabs $KERNEL_OFFSET, %rdx
    add %rdx, %rax
    add $(kernel_entry64 - pvh_start32), %rax
    mov %esi, %edi                     /* boot block, zero-extended */
    mov $BOOT_KIND_PVH, %esi
    jmp *%rax

.global kernel_entry64
kernel_entry64:
    cli
    cld
    lea __image_start(%rip), %rax
    movabs $__link_base, %rcx
    sub %rcx, %rax                     /* %rax = load delta */
    lea __rela_start(%rip), %r8
    lea __rela_end(%rip), %r9
4:  cmp %r9, %r8
    jae 6f
    cmpl $R_X86_64_RELATIVE, 8(%r8)
    jne 5f
    mov (%r8), %r10
    add %rax, %r10
    mov 16(%r8), %r11
    add %rax, %r11
    mov %r11, (%r10)
5:  add $24, %r8
    jmp 4b
6:  lea boot_stack_top(%rip), %rsp
    xor %ebp, %ebp
    call kernel_main
7:  cli
    hlt
    jmp 7b

.global ap_entry64
ap_entry64:
    cld
    xor %ebp, %ebp
    call ap_main
8:  cli
    hlt
    jmp 8b

.balign 8
boot_gdt:
    .quad 0
    .quad 0x00af9a000000ffff           /* 0x08: 64-bit code */
    .quad 0x00cf92000000ffff           /* 0x10: data */
boot_gdtr:
    .word 23
    .long 0

/* Boot page tables sit in this section so 32-bit code can reach them by offset. */
.balign 4096
.global boot_pml4
boot_pml4:
    .skip 4096
boot_pdpt:
    .skip 4096
boot_pd:
    .skip 4096 * 4

.section .note.pvh, "a", @note
.balign 4
    .long 4                            /* name size: "Xen\0" */
    .long 4                            /* descriptor size */
    .long 18                           /* XEN_ELFNOTE_PHYS32_ENTRY */
    .asciz "Xen"
    .balign 4
    .long LOAD_PHYS

.section .bss
.balign 16
boot_stack:
    .skip 65536
boot_stack_top:
