//! execve: the program's image replaced in place, keeping its pid, area,
//! descriptors (on Linux) and mask. The LWK ends the other threads; the
//! caller's `atoll run` reads the new program (CALL_EXEC), has the LWK
//! build its address space (PROC_EXEC: the launcher swaps it in), loads it
//! through the mirror and gives the entry and stack (PROC_START); the
//! calling thread then leaves for the new image's entry.

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use super::sigstate::SIGKILL;
use super::types::{Process, UserThread};
use super::{delegate, family, vfork, xemem};
use crate::mm::vm::AddressSpace;
use crate::sched::{self, Thread};
use hal::TrapFrame;
use lwk_logic::errno::*;

/// Launcher: puts `new` in place of the process's address space.
pub fn swap_in(p: &Process, new: AddressSpace) {
    let root = new.tables();
    let old = {
        let mut vm = p.vm.lock();
        let old = core::mem::replace(&mut *vm, new);
        p.note_stack(&vm);
        old
    };
    p.root.set(root);
    // A vfork child runs on its own memory from now on (its lender goes on
    // once the exec'ing thread has left the lender's page tables: `execed`).
    vfork::end(p);
    *p.exec.old.lock() = Some(old);
    p.calls.forget_live();
    p.exec.swapped.store(true, Ordering::Release);
    p.exec.start_expected.store(true, Ordering::Release);
}

/// Ends every other thread of the process and waits until they are gone.
fn end_other_threads(p: &Arc<Process>, me: &Thread) -> Result<(), Errno> {
    let others: alloc::vec::Vec<_> =
        p.threads.lock().iter().filter(|t| !core::ptr::eq(t.as_ref(), me)).cloned().collect();
    for t in &others {
        if let Some(u) = UserThread::of(t) {
            u.killed.store(true, Ordering::Release);
        }
        sched::kick(t);
    }
    while p.thread_count() > 1 {
        if p.is_exiting() {
            return Err(EINTR);
        }
        sched::sleep_ns(200_000);
    }
    Ok(())
}

/// execve(path, argv, envp) by thread `u`, whose registers are `frame`.
pub fn execve(
    p: &Arc<Process>,
    u: &UserThread,
    me: &Thread,
    frame: &mut TrapFrame,
    args: [u64; 6],
) -> SysResult {
    end_other_threads(p, me)?;
    p.exec.swapped.store(false, Ordering::Release);
    p.exec.pending.store(true, Ordering::Release);
    let r = delegate::call(u, atoll_abi::CALL_EXEC, 59, args);
    p.exec.pending.store(false, Ordering::Release);
    let swapped = p.exec.swapped.load(Ordering::Acquire);
    let loaded = matches!(r, Ok(0));
    if !loaded {
        if swapped {
            // The old image is gone and the new one is not whole.
            p.begin_exit(SIGKILL);
            return Err(EINTR);
        }
        return match r {
            Ok(e) => Err(Errno::from_return(e).err().unwrap_or(ENOEXEC)),
            Err(e) => Err(e),
        };
    }
    // Onto the new page tables, then the old image can go: no thread of
    // this process runs on it any more, and this core's switch flushed it.
    p.tables().load();
    if let Some(mut old) = p.exec.old.lock().take() {
        old.release();
    }
    // The old image's segments, grants and attachments go with it, as at exit.
    xemem::ended(p);
    p.note_unmapped();
    crate::status::report_memory();
    p.report_usage();
    let (entry, sp, _) = p.area.start_request();
    *frame = hal::user::initial_frame(entry, sp);
    u.reset_for_exec();
    p.reset_actions_for_exec();
    family::execed(p);
    Ok(0)
}
