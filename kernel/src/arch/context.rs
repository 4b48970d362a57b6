//! Kernel-thread context switch. A switched-out thread's registers live on its
//! own stack; its saved stack pointer is the whole context.

use core::sync::atomic::AtomicU64;

core::arch::global_asm!(
    r#"
.global atoll_switch_context
atoll_switch_context:
    push %rbp
    push %rbx
    push %r12
    push %r13
    push %r14
    push %r15
    pushfq
    mov %rsp, (%rdi)
    mov %rsi, %rsp
    popfq
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbx
    pop %rbp
    ret

.global atoll_thread_start
atoll_thread_start:
    and $-16, %rsp
    call thread_entry
    ud2
"#,
    options(att_syntax)
);

extern "C" {
    fn atoll_switch_context(save_rsp: *mut u64, load_rsp: u64);
    fn atoll_thread_start();
}

#[no_mangle]
extern "C" fn thread_entry() -> ! {
    crate::sched::thread_start()
}

/// Saved stack pointer of a thread that is not running.
pub struct Context {
    rsp: AtomicU64,
}

impl Context {
    /// The context of a thread that is already running (boot or idle thread).
    pub const fn running() -> Self {
        Context { rsp: AtomicU64::new(0) }
    }

    /// A new thread that starts in `thread_entry` on the given stack.
    pub fn new_thread(stack: &mut [u8]) -> Self {
        let top = (stack.as_mut_ptr() as u64 + stack.len() as u64) & !15;
        // Frame popped by atoll_switch_context: rflags (IF clear), six
        // callee-saved registers, then the return address.
        let frame: [u64; 8] = [0x2, 0, 0, 0, 0, 0, 0, atoll_thread_start as *const () as u64];
        let rsp = top - 16 - 8 * frame.len() as u64;
        let offset = (rsp - stack.as_ptr() as u64) as usize;
        for (i, word) in frame.iter().enumerate() {
            stack[offset + 8 * i..offset + 8 * i + 8].copy_from_slice(&word.to_le_bytes());
        }
        Context { rsp: AtomicU64::new(rsp) }
    }
}

/// Saves the running context into `prev` and resumes `next`.
///
/// # Safety
/// Interrupts must be off; `next` must be a suspended context whose stack stays
/// alive, and `prev` must stay alive until it is resumed or discarded.
pub unsafe fn switch(prev: &Context, next: &Context) {
    let load = next.rsp.load(core::sync::atomic::Ordering::Relaxed);
    // SAFETY: per the contract above; the asm saves/restores all callee-saved
    // state and rflags, matching the C ABI.
    unsafe { atoll_switch_context(prev.rsp.as_ptr(), load) };
}
