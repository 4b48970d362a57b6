//! fork, vfork and process-making clones: a child process with a copy of
//! the parent's memory (or, for vfork, the parent's memory itself) in a
//! program area of its own, which a fork of the parent's `atoll run`
//! adopts and serves (so the child's delegated calls see the descriptors it
//! inherited), now or when the child first needs it (`deferred_server`).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use super::area::Area;
use super::family_tree::ForkStart;
use super::memory::with_both_vms;
use super::sigstate::SIGCHLD;
use super::types::{Process, UserThread};
use super::{call_slots, deferred_server, ending, launch, programs, unserved, vfork};
use crate::mm::uaccess;
use crate::mm::vm;
use hal::TrapFrame;
use lwk_logic::errno::*;

const CLONE_VM: u64 = 0x100;
const CLONE_VFORK: u64 = 0x4000;
const CLONE_CHILD_CLEARTID: u64 = 0x200000;
const CLONE_CHILD_SETTID: u64 = 0x1000000;
const CSIGNAL: u64 = 0xff;

/// fork, vfork and process-making clones: the child gets a copy of the
/// memory, except with CLONE_VM and CLONE_VFORK (vfork, posix_spawn): the
/// child then runs on the parent's memory itself (`vfork`) while the
/// calling thread waits, until the child execs or ends. Returns the
/// child's pid.
pub fn fork(
    parent: &Arc<Process>,
    u: &UserThread,
    frame: &TrapFrame,
    flags: u64,
    stack: u64,
    child_tid: u64,
) -> Result<u32, Errno> {
    if flags & CSIGNAL != 0 && flags & CSIGNAL != SIGCHLD as u64 {
        return Err(EINVAL);
    }
    // A child without a server yet gets one first: the new child's is a
    // fork of it.
    deferred_server::serve_self(parent)?;
    let shares = flags & CLONE_VM != 0 && flags & CLONE_VFORK != 0;
    let area = Area::claim().ok_or(EAGAIN)?;
    // A vfork child's own space stays empty until it execs.
    let space = if shares {
        vm::AddressSpace::new(atoll_abi::USER_START)
    } else {
        parent.mem().vm.lock().fork_shell()
    };
    let space = match space {
        Ok(vm) => vm,
        Err(e) => {
            area.set_state(atoll_abi::PROC_FREE);
            return Err(e);
        }
    };
    let child = Process::new(area, space, parent.cpus.inherit(), Some(parent), parent.kernel_mode);
    if shares {
        vfork::lend(parent, &child);
    }
    // Its `atoll run` sets it again when it adopts the child.
    area.set_nodename(parent.area.nodename());
    child
        .realtime_offset_ns
        .store(parent.realtime_offset_ns.load(Ordering::Relaxed), Ordering::Relaxed);
    child.actions.lock().0 = parent.actions.lock().0;
    let mut start = *frame;
    start.rax = 0;
    if stack != 0 && flags & CLONE_VM != 0 {
        start.rsp = stack;
    }
    *child.family.fork_start.lock() = Some(ForkStart {
        frame: start,
        fs_base: u.cpu_state.fs_base(),
        clear_child_tid: if flags & CLONE_CHILD_CLEARTID != 0 { child_tid } else { 0 },
        signal_mask: u.signal_mask.load(Ordering::Acquire),
        altstack: *u.altstack.lock(),
    });
    programs::adopt(&child);
    parent.family.children.lock().push(child.clone());
    // A vfork child (posix_spawn, system()) execs at once, which needs a
    // server anyway.
    if flags & (CLONE_VM | CLONE_VFORK) == 0 && unserved::may_defer(parent) {
        return start_without_server(parent, &child, flags, child_tid);
    }

    // The parent's `atoll run` forks a server for the child, which adopts
    // it, while this CPU copies the memory (if the child has a copy): the
    // two take about as long. The child starts once both are done, and the
    // parent goes on.
    let args = [area.index() as u64, child.pid.into(), 0, 0, 0, 0];
    let posted = call_slots::post(u, atoll_abi::CALL_FORK, 0, args);
    let copied = copy_memory(parent, &child, flags, child_tid);
    let served = posted.wait().map(|a| a.ret);
    match (served, copied) {
        (Ok(host_pid), Ok(())) if host_pid > 0 => {
            if !launch::start_forked(&child) {
                // Its server let go of it meanwhile (and that freed it).
                parent.family.children.lock().retain(|c| !Arc::ptr_eq(c, &child));
                return Err(EAGAIN);
            }
        }
        // The fork failed on Linux, or its copy ended without serving: no
        // file holds the child (one that adopted it was released, which
        // freed it already).
        (Ok(host_pid), copied) if host_pid <= 0 => {
            parent.family.children.lock().retain(|c| !Arc::ptr_eq(c, &child));
            ending::drop_unserved(&child);
            return Err(copied.err().unwrap_or(EAGAIN));
        }
        // The memory could not be copied, or the parent is ending mid-fork:
        // a server may hold the child, so it ends as a program does and is
        // freed when released.
        (served, copied) => {
            parent.family.children.lock().retain(|c| !Arc::ptr_eq(c, &child));
            ending::end_unstarted(&child);
            return Err(served.err().or(copied.err()).unwrap_or(EAGAIN));
        }
    }
    if flags & CLONE_VFORK != 0 {
        // The parent waits while the child runs on its memory (or a copy),
        // until the child ends or execs. Not for signals, nor its own end:
        // the memory stays while the child may run on it.
        let done = || {
            child.family.ended.load(Ordering::Acquire)
                || child.family.execed.load(Ordering::Acquire)
        };
        child.family.child_ended.wait_until(done);
    }
    Ok(child.pid)
}

/// A fork whose child starts once its memory is copied; its server on
/// Linux comes when it is first needed (`deferred_server`).
fn start_without_server(
    parent: &Arc<Process>,
    child: &Arc<Process>,
    flags: u64,
    child_tid: u64,
) -> Result<u32, Errno> {
    if let Err(e) = copy_memory(parent, child, flags, child_tid) {
        parent.family.children.lock().retain(|c| !Arc::ptr_eq(c, child));
        ending::drop_unserved(child);
        return Err(e);
    }
    unserved::defer(parent, child);
    if !launch::start_forked(child) {
        return Err(EAGAIN);
    }
    Ok(child.pid)
}

/// The parent's pages into the forked child's (not yet started) address
/// space; CLONE_CHILD_SETTID's write then goes to the child's copy, so the
/// parent's memory stays as it was. A vfork child gets no copy: it runs
/// on the parent's memory, where that write then goes, as on Linux.
fn copy_memory(
    parent: &Process,
    child: &Arc<Process>,
    flags: u64,
    child_tid: u64,
) -> Result<(), Errno> {
    if flags & CLONE_VM == 0 || flags & CLONE_VFORK == 0 {
        copy_pages(&parent.mem(), child)?;
    }
    // Its server may have let go of it meanwhile, which freed it (and its
    // area may hold another program now).
    if !programs::still_held(child) {
        return Err(EAGAIN);
    }
    child.report_usage();
    crate::status::report_memory();
    if flags & CLONE_CHILD_SETTID != 0 {
        uaccess::write_u32(child, child_tid, child.pid)?;
    }
    Ok(())
}

/// The copy itself, from `from` (the memory the parent runs on).
fn copy_pages(from: &Process, child: &Arc<Process>) -> Result<(), Errno> {
    // Read-only pages are shared with the child only if no core and no
    // delegated call can still write them through an older translation
    // (another thread made them read-only a moment ago).
    if from.shootdown_pending(&from.vm.lock()) {
        from.shoot_down();
    }
    let copied = with_both_vms(from, child, |mine, to| {
        let share = !from.shootdown_pending(mine) && from.calls.idle();
        mine.copy_pages_to(to, share)
    });
    if copied.is_err() {
        child.vm.lock().drop_pages();
    }
    copied
}
