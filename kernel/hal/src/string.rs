//! The kernel's `memcpy` and `memset`, in place of compiler_builtins'
//! weak ones (which are `rep movsq`/`rep stosq` with byte-wise edges).
//! Where the CPU says string instructions are fast (ERMS) they are one
//! `rep movsb`/`rep stosb`; elsewhere, as on QEMU's default CPU models,
//! a loop of 8-byte moves: there each `rep` iteration costs as much as a
//! turn of the loop, and a short copy (a message, a signal frame's field)
//! paid for three `rep` set-ups. memcpy moves 64 bytes a turn, eight loads
//! and then eight stores: QEMU's TLB is direct-mapped, so a source and a
//! destination page with the same index (the same offset in 2 MiB-aligned
//! frames, as two MPI ranks' buffers have under `process_vm_readv`) evict
//! each other at every switch between them; switching every two accesses,
//! a 4 MiB copy between such buffers ran at about a third of its speed.
//! Up to 64 bytes, memcpy takes no loop and no `rep` (`copy_small`).

use core::sync::atomic::{AtomicBool, Ordering};

/// Set once CPUID reports ERMS (enhanced REP MOVSB/STOSB).
static FAST_STRINGS: AtomicBool = AtomicBool::new(false);

/// Uses `rep movsb`/`rep stosb` from now on if the CPU has ERMS.
pub(crate) fn init() {
    let erms = raw_cpuid::CpuId::new()
        .get_extended_feature_info()
        .is_some_and(|f| f.has_rep_movsb_stosb());
    FAST_STRINGS.store(erms, Ordering::Relaxed);
}

/// Makes copies use `rep movsb`/`rep stosb` (true) or the loop (false);
/// returns the previous choice. Both are right on every x86-64 CPU (ERMS
/// only makes `rep` fast), so the self-tests check each.
pub fn use_fast_strings(on: bool) -> bool {
    FAST_STRINGS.swap(on, Ordering::Relaxed)
}

/// # Safety
/// As C's memcpy: `n` bytes readable at `src`, writable at `dest`, not
/// overlapping.
#[no_mangle]
pub unsafe extern "C" fn memcpy(dest: *mut u8, src: *const u8, n: usize) -> *mut u8 {
    if n <= 64 {
        // SAFETY: the caller's contract.
        unsafe { copy_small(dest, src, n) };
        return dest;
    }
    if FAST_STRINGS.load(Ordering::Relaxed) {
        // SAFETY: the caller's contract; DF is clear in the kernel.
        unsafe {
            core::arch::asm!("rep movsb", inout("rcx") n => _, inout("rdi") dest => _,
                inout("rsi") src => _, options(nostack, preserves_flags))
        };
        return dest;
    }
    // SAFETY: the caller's contract: every access is inside the two ranges.
    unsafe {
        core::arch::asm!(
            "mov {blocks}, {n}",
            "shr {blocks}, 6",
            "jz 3f",
            "2:",
            "mov {a}, [{s}]",
            "mov {b}, [{s} + 8]",
            "mov {c}, [{s} + 16]",
            "mov {e}, [{s} + 24]",
            "mov {f}, [{s} + 32]",
            "mov {g}, [{s} + 40]",
            "mov {h}, [{s} + 48]",
            "mov {i}, [{s} + 56]",
            "mov [{d}], {a}",
            "mov [{d} + 8], {b}",
            "mov [{d} + 16], {c}",
            "mov [{d} + 24], {e}",
            "mov [{d} + 32], {f}",
            "mov [{d} + 40], {g}",
            "mov [{d} + 48], {h}",
            "mov [{d} + 56], {i}",
            "add {s}, 64",
            "add {d}, 64",
            "dec {blocks}",
            "jnz 2b",
            "3:",
            "and {n}, 63",
            "mov {blocks}, {n}",
            "shr {blocks}, 3",
            "jz 5f",
            "4:",
            "mov {a}, [{s}]",
            "mov [{d}], {a}",
            "add {s}, 8",
            "add {d}, 8",
            "dec {blocks}",
            "jnz 4b",
            "5:",
            "and {n}, 7",
            "jz 7f",
            "6:",
            "mov {a:l}, [{s}]",
            "mov [{d}], {a:l}",
            "inc {s}",
            "inc {d}",
            "dec {n}",
            "jnz 6b",
            "7:",
            n = inout(reg) n => _,
            s = inout(reg) src => _,
            d = inout(reg) dest => _,
            blocks = out(reg) _,
            a = out(reg) _,
            b = out(reg) _,
            c = out(reg) _,
            e = out(reg) _,
            f = out(reg) _,
            g = out(reg) _,
            h = out(reg) _,
            i = out(reg) _,
            options(nostack),
        )
    };
    dest
}

/// Up to 64 bytes with no loop: the first and the last 32, 16, 8, 4 or 1
/// bytes of the range, which overlap for sizes between (as glibc's short
/// copies do). All loads come before the stores, so the overlap is harmless.
/// A one-slot message's 48 bytes took about 50 instructions in the loop,
/// and under QEMU each `rep movsb` byte counts as one.
///
/// # Safety
/// As memcpy, with `n` at most 64.
#[inline(always)]
unsafe fn copy_small(dest: *mut u8, src: *const u8, n: usize) {
    // SAFETY: every access is inside [src, src + n) or [dest, dest + n).
    unsafe {
        core::arch::asm!(
            "cmp {n}, 32",
            "jb 2f",
            "mov {a}, [{s}]",
            "mov {b}, [{s} + 8]",
            "mov {c}, [{s} + 16]",
            "mov {e}, [{s} + 24]",
            "mov {f}, [{s} + {n} - 32]",
            "mov {g}, [{s} + {n} - 24]",
            "mov {h}, [{s} + {n} - 16]",
            "mov {i}, [{s} + {n} - 8]",
            "mov [{d}], {a}",
            "mov [{d} + 8], {b}",
            "mov [{d} + 16], {c}",
            "mov [{d} + 24], {e}",
            "mov [{d} + {n} - 32], {f}",
            "mov [{d} + {n} - 24], {g}",
            "mov [{d} + {n} - 16], {h}",
            "mov [{d} + {n} - 8], {i}",
            "jmp 9f",
            "2:",
            "cmp {n}, 16",
            "jb 3f",
            "mov {a}, [{s}]",
            "mov {b}, [{s} + 8]",
            "mov {c}, [{s} + {n} - 16]",
            "mov {e}, [{s} + {n} - 8]",
            "mov [{d}], {a}",
            "mov [{d} + 8], {b}",
            "mov [{d} + {n} - 16], {c}",
            "mov [{d} + {n} - 8], {e}",
            "jmp 9f",
            "3:",
            "cmp {n}, 8",
            "jb 4f",
            "mov {a}, [{s}]",
            "mov {b}, [{s} + {n} - 8]",
            "mov [{d}], {a}",
            "mov [{d} + {n} - 8], {b}",
            "jmp 9f",
            "4:",
            "cmp {n}, 4",
            "jb 5f",
            "mov {a:e}, [{s}]",
            "mov {b:e}, [{s} + {n} - 4]",
            "mov [{d}], {a:e}",
            "mov [{d} + {n} - 4], {b:e}",
            "jmp 9f",
            "5:",
            "test {n}, {n}",
            "jz 9f",
            // 1 to 3 bytes: the first, the last and the middle one.
            "mov {c}, {n}",
            "shr {c}, 1",
            "movzx {a:e}, byte ptr [{s}]",
            "movzx {b:e}, byte ptr [{s} + {n} - 1]",
            "movzx {e:e}, byte ptr [{s} + {c}]",
            "mov [{d}], {a:l}",
            "mov [{d} + {n} - 1], {b:l}",
            "mov [{d} + {c}], {e:l}",
            "9:",
            n = in(reg) n,
            s = in(reg) src,
            d = in(reg) dest,
            a = out(reg) _,
            b = out(reg) _,
            c = out(reg) _,
            e = out(reg) _,
            f = out(reg) _,
            g = out(reg) _,
            h = out(reg) _,
            i = out(reg) _,
            options(nostack),
        )
    };
}

/// # Safety
/// As C's memset: `n` bytes writable at `dest`.
#[no_mangle]
pub unsafe extern "C" fn memset(dest: *mut u8, c: i32, n: usize) -> *mut u8 {
    if FAST_STRINGS.load(Ordering::Relaxed) {
        // SAFETY: the caller's contract; DF is clear in the kernel.
        unsafe {
            core::arch::asm!("rep stosb", inout("rcx") n => _, inout("rdi") dest => _,
                in("al") c as u8, options(nostack, preserves_flags))
        };
        return dest;
    }
    // The byte in every byte of a word.
    let word = (c as u8 as u64).wrapping_mul(0x0101_0101_0101_0101);
    // SAFETY: the caller's contract: every store is inside the range.
    unsafe {
        core::arch::asm!(
            "mov {blocks}, {n}",
            "shr {blocks}, 5",
            "jz 3f",
            "2:",
            "mov [{d}], {w}",
            "mov [{d} + 8], {w}",
            "mov [{d} + 16], {w}",
            "mov [{d} + 24], {w}",
            "add {d}, 32",
            "dec {blocks}",
            "jnz 2b",
            "3:",
            "and {n}, 31",
            "mov {blocks}, {n}",
            "shr {blocks}, 3",
            "jz 5f",
            "4:",
            "mov [{d}], {w}",
            "add {d}, 8",
            "dec {blocks}",
            "jnz 4b",
            "5:",
            "and {n}, 7",
            "jz 7f",
            "6:",
            "mov [{d}], {w:l}",
            "inc {d}",
            "dec {n}",
            "jnz 6b",
            "7:",
            n = inout(reg) n => _,
            d = inout(reg) dest => _,
            w = in(reg) word,
            blocks = out(reg) _,
            options(nostack),
        )
    };
    dest
}
