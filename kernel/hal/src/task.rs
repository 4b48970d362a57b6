//! Tasks and the context switch. A task is whatever the kernel schedules
//! (its `Thread`); to this layer it is a [`Context`]: a saved stack pointer,
//! the stack it owns and whether a CPU is on it. The [`Switcher`] keeps a
//! reference to each CPU's running task, so the kernel reaches it without a
//! lock, and releases the task it switched away from only once the next
//! task runs on its own stack.

use alloc::alloc::{alloc, dealloc, Layout};
use alloc::sync::Arc;
use core::marker::PhantomData;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use spin::Once;

use crate::{cpu, percpu};

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

.global atoll_task_start
atoll_task_start:
    and $-16, %rsp
    mov %rbx, %rdi
    call task_start
    ud2
"#,
    options(att_syntax)
);

extern "C" {
    fn atoll_switch_context(save_rsp: *mut u64, load_rsp: u64);
    fn atoll_task_start();
}

/// What the kernel schedules.
pub trait Task: Send + Sync + Sized + 'static {
    fn context(&self) -> &Context;

    /// Runs on the CPU that has just switched away from `task`, once that
    /// CPU no longer uses its stack (the moment to queue it elsewhere).
    fn left_cpu(task: &Arc<Self>);
}

/// A task's own kernel stack, freed with its context.
struct KernelStack {
    base: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the struct only records where the stack is; the memory is used by
// the one CPU running the task, never through this struct.
unsafe impl Send for KernelStack {}
// SAFETY: as for Send: nothing is reachable through a shared reference.
unsafe impl Sync for KernelStack {}

/// Freed stacks kept for the next threads (all threads' stacks have one
/// size): taking one is a few instructions, where the heap's first fit
/// walks its holes (a hybrid runtime makes and ends threads all the time).
const KEPT_STACKS: usize = 32;

struct KeptStacks {
    size: usize,
    count: usize,
    bases: [usize; KEPT_STACKS],
}

static KEPT: crate::SpinLock<KeptStacks> =
    crate::SpinLock::new(KeptStacks { size: 0, count: 0, bases: [0; KEPT_STACKS] });

impl KernelStack {
    fn new(size: usize) -> Self {
        let layout = Layout::from_size_align(size, 16).expect("stack layout");
        {
            let mut kept = KEPT.lock();
            if kept.size == size && kept.count > 0 {
                kept.count -= 1;
                let base = kept.bases[kept.count] as *mut u8;
                // A kept base came from the heap with this layout (drop).
                let base = NonNull::new(base).expect("kept stacks are never null");
                return KernelStack { base, layout };
            }
        }
        // Not zeroed: a stack is written before it is read, and only the
        // kernel (safe code) reads it; zeroing 64 KiB cost each new thread
        // several thousand instructions.
        // SAFETY: the layout has a non-zero size (asserted by the caller).
        let base = unsafe { alloc(layout) };
        let base = NonNull::new(base).expect("out of memory for a kernel stack");
        KernelStack { base, layout }
    }

    fn top(&self) -> u64 {
        (self.base.as_ptr() as u64 + self.layout.size() as u64) & !15
    }
}

impl Drop for KernelStack {
    fn drop(&mut self) {
        {
            let mut kept = KEPT.lock();
            if kept.count == 0 {
                kept.size = self.layout.size();
            }
            if kept.size == self.layout.size() && kept.count < KEPT_STACKS {
                let i = kept.count;
                kept.bases[i] = self.base.as_ptr() as usize;
                kept.count += 1;
                return;
            }
        }
        // SAFETY: allocated in new() with this layout; the task owning it is
        // gone, and the switcher frees no task while a CPU is on its stack.
        unsafe { dealloc(self.base.as_ptr(), self.layout) };
    }
}

/// A task's saved CPU context.
pub struct Context {
    /// The stack pointer while the task is switched out.
    rsp: AtomicU64,
    /// Set from the switch to this task until the switch away from it has
    /// finished saving it.
    on_cpu: AtomicBool,
    /// None for a CPU's boot context, which runs on the boot stack.
    stack: Option<KernelStack>,
}

impl Context {
    /// The context a CPU is already running (its boot stack).
    pub const fn running() -> Self {
        Context { rsp: AtomicU64::new(0), on_cpu: AtomicBool::new(false), stack: None }
    }

    /// A context on a fresh stack that enters `entry` with interrupts off.
    pub fn new(stack_size: usize, entry: fn() -> !) -> Self {
        assert!(stack_size >= 4096, "kernel stack of {stack_size} bytes");
        let stack = KernelStack::new(stack_size);
        // Popped by atoll_switch_context: rflags (IF clear), r15-r12, rbx
        // (the entry, for atoll_task_start), rbp, then the return address.
        let frame: [u64; 8] =
            [0x2, 0, 0, 0, 0, entry as *const () as u64, 0, atoll_task_start as *const () as u64];
        let rsp = stack.top() - 16 - 8 * frame.len() as u64;
        // SAFETY: the frame lies inside the new stack, 16 bytes below its
        // top, and nothing else uses that stack yet.
        unsafe { core::ptr::copy_nonoverlapping(frame.as_ptr(), rsp as *mut u64, frame.len()) };
        Context { rsp: AtomicU64::new(rsp), on_cpu: AtomicBool::new(false), stack: Some(stack) }
    }

    /// Top of the task's own stack (16-byte aligned); None for a boot context.
    pub fn stack_top(&self) -> Option<u64> {
        self.stack.as_ref().map(KernelStack::top)
    }
}

/// Completes a switch on the task that now runs (see `finish_switch`).
static FINISH: Once<fn()> = Once::new();

/// First code of a new task, from atoll_task_start: `entry` is the
/// function Context::new put in the frame.
#[no_mangle]
extern "C" fn task_start(entry: usize) -> ! {
    if let Some(finish) = FINISH.get() {
        finish();
    }
    // SAFETY: `entry` is the `fn() -> !` that Context::new stored in this
    // frame's rbx slot, unchanged since.
    let entry: fn() -> ! = unsafe { core::mem::transmute::<usize, fn() -> !>(entry) };
    entry()
}

/// Per CPU, the running task of type `T`, and the switch between tasks.
/// There is one for the whole system (`claim` once), so every pointer in
/// the per-CPU slots is an `Arc<T>` of that one `T`.
pub struct Switcher<T: Task> {
    _task: PhantomData<fn(Arc<T>)>,
}

impl<T: Task> Switcher<T> {
    /// The switcher; panics if it was claimed before.
    pub fn claim() -> Self {
        let mut first = false;
        FINISH.call_once(|| {
            first = true;
            finish_switch::<T>
        });
        assert!(first, "the task switcher is claimed once");
        Switcher { _task: PhantomData }
    }

    /// Makes `task` the running task of this CPU: the context this CPU is
    /// already executing. Once per CPU, before any switch on it.
    pub fn adopt(&self, task: Arc<T>) {
        let irqs = cpu::save_and_disable_interrupts();
        let slot = percpu::this_slot();
        assert!(slot.running.load(Ordering::Acquire).is_null(), "a task already runs here");
        assert!(!task.context().on_cpu.swap(true, Ordering::AcqRel), "the task runs elsewhere");
        slot.running.store(Arc::into_raw(task) as *mut (), Ordering::Release);
        cpu::restore_interrupts(irqs);
    }

    /// Lets go of this CPU's running task before the CPU leaves service
    /// (it keeps running this code, but no longer as a task). Interrupts
    /// must be off; the task must have no stack of its own (a CPU's boot
    /// context), as this code still runs on it.
    pub fn release_this_cpu(&self) -> Option<Arc<T>> {
        assert!(!cpu::interrupts_enabled(), "releasing a CPU with interrupts on");
        let slot = percpu::this_slot();
        let task = slot.running.swap(core::ptr::null_mut(), Ordering::AcqRel) as *const T;
        if task.is_null() {
            return None;
        }
        // SAFETY: `running` held the reference adopt/switch_to put there;
        // taking it out once hands its ownership to this Arc.
        let task = unsafe { Arc::from_raw(task) };
        assert!(task.context().stack.is_none(), "a CPU leaves only from its boot context");
        task.context().on_cpu.store(false, Ordering::Release);
        Some(task)
    }

    /// Runs `f` with the task this code runs in, without a lock or a
    /// reference count (the system-call fast path).
    pub fn with_running<R>(&self, f: impl FnOnce(&T) -> R) -> R {
        match self.try_with_running(f) {
            Some(r) => r,
            None => panic!("no task runs on CPU {}", percpu::cpu_index()),
        }
    }

    /// As `with_running`; None before this CPU has a task (early boot).
    pub fn try_with_running<R>(&self, f: impl FnOnce(&T) -> R) -> Option<R> {
        let ptr = percpu::running_task() as *const T;
        if ptr.is_null() {
            return None;
        }
        // SAFETY: read in one instruction, the slot named the task executing
        // this very code (only switch_to, running on that CPU with interrupts
        // off, changes it, and it runs as part of the task it switches away
        // from or to). That task stays alive while this code
        // runs: a task is freed only through its last Arc, the switcher holds
        // one until the task is off its CPU, and a task that was freed is
        // never resumed (resuming takes an Arc), so this code would never run
        // again. Only a shared reference is made.
        Some(f(unsafe { &*ptr }))
    }

    /// The task this code runs in.
    pub fn running(&self) -> Arc<T> {
        let ptr = percpu::running_task() as *const T;
        assert!(!ptr.is_null(), "no task runs on CPU {}", percpu::cpu_index());
        // SAFETY: `ptr` is the task executing this code (see
        // try_with_running), alive while it runs; it came from Arc::into_raw,
        // so raising its count and taking an Arc for that count is sound.
        unsafe {
            Arc::increment_strong_count(ptr);
            Arc::from_raw(ptr)
        }
    }

    /// Waits until no CPU runs `task` any more (the one that switches it
    /// out may still be on its way out of the switch).
    pub fn wait_off_cpu(&self, task: &T) {
        while task.context().on_cpu.load(Ordering::Acquire) {
            cpu::relax();
        }
    }

    /// Switches this CPU from the running task to `next`; returns when the
    /// calling task runs again. Interrupts must be off. If `next` is still
    /// on another CPU, waits until that CPU has left it.
    pub fn switch_to(&self, next: Arc<T>) {
        assert!(!cpu::interrupts_enabled(), "context switch with interrupts on");
        let slot = percpu::this_slot();
        let prev = slot.running.load(Ordering::Acquire) as *const T;
        assert!(!prev.is_null(), "no task runs on CPU {}", percpu::cpu_index());
        if core::ptr::eq(prev, Arc::as_ptr(&next)) {
            return;
        }
        while next.context().on_cpu.swap(true, Ordering::Acquire) {
            cpu::relax();
        }
        let next = Arc::into_raw(next);
        slot.running.store(next as *mut (), Ordering::Release);
        slot.previous.store(prev as *mut (), Ordering::Release);
        // SAFETY: `prev` stays alive: its reference moved from `running` to
        // `previous`, which finish_switch releases only on the next task's
        // stack. `next` is alive (the reference now in `running`) and is a
        // suspended context no other CPU is on (`on_cpu` was clear). With
        // interrupts off nothing runs between the stores and the switch; the
        // assembly saves and restores every callee-saved register and rflags.
        unsafe {
            let next_rsp = (*next).context().rsp.load(Ordering::Acquire);
            atoll_switch_context((*prev).context().rsp.as_ptr(), next_rsp);
        }
        finish_switch::<T>();
    }
}

/// Runs on the task just switched to: releases the previous one, which no
/// CPU uses any more, after letting the kernel act on it.
fn finish_switch<T: Task>() {
    let slot = percpu::this_slot();
    let prev = slot.previous.swap(core::ptr::null_mut(), Ordering::AcqRel) as *const T;
    if prev.is_null() {
        return;
    }
    // SAFETY: `previous` held the reference switch_to moved out of
    // `running`; taking it out once hands its ownership to this Arc.
    let prev = unsafe { Arc::from_raw(prev) };
    prev.context().on_cpu.store(false, Ordering::Release);
    T::left_cpu(&prev);
}
