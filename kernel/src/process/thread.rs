//! A program's threads: starting them in ring 3, ending them, and ending
//! the program when the last one ends or one of them faults.

use alloc::string::String;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};

use super::cputime::CpuTime;
use super::sigstate::{Pending, SIGBUS, SIGFPE, SIGILL, SIGSEGV, SIGTRAP};
use super::types::{Process, UserThread};
use super::{ending, signal};
use crate::mm::uaccess;
use crate::sched::{self, Thread};
use crate::sync::SpinLock;
use hal::idt::TrapFrame;
use hal::user::{self, UserCpuState};
use lwk_logic::errno::{Errno, EAGAIN};

/// Starts thread `tid` of `p`, entering user mode with `frame` on the next
/// of the program's cores.
pub fn spawn_user_thread(
    p: &Arc<Process>,
    frame: TrapFrame,
    fs_base: u64,
    clear_child_tid: u64,
    tid: u32,
    signal_mask: u64,
    altstack: [u64; 3],
) -> Result<(), Errno> {
    let start = Start { fs_base, clear_child_tid, tid, signal_mask, altstack };
    spawn(p, None, frame, start)
}

/// What a new thread starts with besides its registers.
pub struct Start {
    pub fs_base: u64,
    pub clear_child_tid: u64,
    pub tid: u32,
    pub signal_mask: u64,
    pub altstack: [u64; 3],
}

/// Starts a thread bound to core `cpu` (its affinity: the HRT API's
/// threads), or on the next of the program's cores.
pub fn spawn(
    p: &Arc<Process>,
    bound: Option<usize>,
    frame: TrapFrame,
    start: Start,
) -> Result<(), Errno> {
    let Start { fs_base, clear_child_tid, tid, signal_mask, altstack } = start;
    let slot = p.take_slot().ok_or(EAGAIN)?;
    let cpu = bound.unwrap_or_else(|| p.pick_cpu());
    let affinity = bound.map_or(0, |c| 1u64 << c);
    let process = p.clone();
    let kernel_mode = p.kernel_mode;
    let t = Thread::new_user(
        &thread_name(p.pid, tid),
        cpu,
        alloc::boxed::Box::new(move || {
            let mut frame = frame;
            // Borrowed, not counted: a thread that leaves at once never
            // returns to drop a count it held.
            sched::with_current(|me| {
                if let Some(u) = UserThread::of(me) {
                    if u.must_leave() {
                        exit_current_thread();
                    }
                    u.cpu_time.leave_kernel();
                }
            });
            user::enter(&mut frame, kernel_mode)
        }),
        |stack_top| {
            alloc::boxed::Box::new(UserThread {
                process,
                tid,
                slot,
                cpu_state: UserCpuState::new(stack_top, fs_base, p.kernel_mode),
                clear_child_tid: AtomicU64::new(clear_child_tid),
                robust_list: AtomicU64::new(0),
                signal_mask: AtomicU64::new(signal_mask),
                affinity: AtomicU64::new(affinity),
                pending: Pending::new(),
                saved_mask: SpinLock::new(None),
                altstack: SpinLock::new(altstack),
                cpu_time: CpuTime::new(),
                killed: core::sync::atomic::AtomicBool::new(false),
                left: core::sync::atomic::AtomicBool::new(false),
            })
        },
    );
    let count = {
        // Under the same lock begin_exit takes its snapshot with.
        let mut threads = p.threads.lock();
        if p.is_exiting() {
            p.put_slot(slot);
            return Err(EAGAIN);
        }
        threads.push(t.clone());
        threads.len()
    };
    p.report_threads(count);
    sched::start(&t);
    Ok(())
}

/// "pid P tid T", written by hand: cheaper than `format!`'s machinery on
/// the way of every new thread.
fn thread_name(pid: u32, tid: u32) -> String {
    fn push_number(s: &mut String, mut n: u32) {
        let mut digits = [0u8; 10];
        let mut i = digits.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        s.extend(digits[i..].iter().map(|&d| d as char));
    }
    let mut s = String::with_capacity(28);
    s.push_str("pid ");
    push_number(&mut s, pid);
    s.push_str(" tid ");
    push_number(&mut s, tid);
    s
}

/// Ends the calling user thread; the last one out ends the program.
pub fn exit_current_thread() -> ! {
    let me = sched::current();
    let u = UserThread::of(&me).expect("exit of a kernel thread through the user path");
    let p = u.process.clone();
    // CLONE_CHILD_CLEARTID: tell a joiner (pthread_join waits on this word).
    let ctid = u.clear_child_tid.load(Ordering::Relaxed);
    if ctid != 0 && !p.is_exiting() && uaccess::write_u32(&p, ctid, 0).is_ok() {
        let _ = p.mem().futexes.wake(&p, ctid, 1, u32::MAX); // fails only for an empty bitset
    }
    p.put_slot(u.slot);
    let my_time = u.cpu_time.times(true);
    // Off this address space before it can be freed, for good: an interrupt
    // may still switch away from this thread and back before it is gone.
    u.left.store(true, Ordering::Release);
    hal::paging::switch_to_kernel();
    let count = {
        let mut threads = p.threads.lock();
        threads.retain(|t| !Arc::ptr_eq(t, &me));
        // Under the threads' lock: cpu_times() counts it once.
        p.keep_time(my_time);
        threads.len()
    };
    drop(me);
    p.report_threads(count);
    if count == 0 {
        ending::program_ended(&p);
    }
    drop(p);
    sched::exit_current()
}

/// A fault in user mode: the signal a Linux program would get. Its handler
/// runs if it has one the thread does not block; else the program ends.
pub fn user_fault(frame: &mut TrapFrame, cr2: u64) {
    let t = sched::current();
    let u = UserThread::of(&t).expect("user fault outside a user thread");
    let (signal, name) = match frame.vector {
        0 => (SIGFPE, "divide error"),
        6 => (SIGILL, "invalid opcode"),
        13 => (SIGSEGV, "general protection fault"),
        14 => (SIGSEGV, "page fault"),
        16 | 19 => (SIGFPE, "floating-point exception"),
        17 => (SIGBUS, "alignment check"),
        3 | 1 => (SIGTRAP, "breakpoint"),
        _ => (SIGSEGV, "exception"),
    };
    let addr = match frame.vector {
        14 => cr2,
        _ => frame.rip,
    };
    // A first touch of the main stack's part that has no memory yet, a
    // page another thread gave memory a moment ago, or a translation this
    // core kept from before mprotect widened it (the fault drops it): the
    // access runs again. Faults for other reasons (reserved bits,
    // protection keys, shadow stacks, SGX) are the program's.
    const WRITE: u64 = 1 << 1;
    const FETCH: u64 = 1 << 4;
    const OTHER_CAUSES: u64 = 1 << 3 | 1 << 5 | 1 << 6 | 1 << 15;
    let error = frame.error_code;
    if frame.vector == 14
        && error & OTHER_CAUSES == 0
        && u.process.resolve_fault(cr2, error & WRITE != 0, error & FETCH != 0)
    {
        return;
    }
    if signal::catch_fault(u, frame, signal, addr, frame.vector == 14 && frame.error_code & 1 != 0)
    {
        return;
    }
    hal::println!(
        "program {} thread {}: {} (vector {}) at rip {:#x}, address {:#x}, error {:#x}: signal {}",
        u.process.pid,
        u.tid,
        name,
        frame.vector,
        frame.rip,
        cr2,
        frame.error_code,
        signal
    );
    u.process.begin_exit(signal);
    drop(t);
    exit_current_thread()
}

/// On the way back to user mode: signals first, then leave if the program
/// is ending. `call` is the system call just made, if any.
pub fn return_to_user(u: &UserThread, frame: &mut TrapFrame, call: Option<signal::Finished>) {
    signal::deliver(u, frame, call);
    if u.must_leave() {
        exit_current_thread();
    }
}

/// `return_to_user` for the running thread, if it is a program's, with no
/// system call just made: after an interrupt, and on a kernel-mode
/// program's way back from an HRT API call with a signal to take. The
/// thread is borrowed, not counted: one that leaves here never returns to
/// drop a count it held, and would never be freed.
pub fn return_current_to_user(frame: &mut TrapFrame) {
    sched::with_current(|t| {
        if let Some(u) = UserThread::of(t) {
            return_to_user(u, frame, None);
        }
    });
}
