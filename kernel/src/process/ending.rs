//! A program's end: its last thread has ended (or it never started), its
//! status goes to its parent and the host, and its memory and area are
//! freed once the host has let go of it too.

use alloc::sync::Arc;
use atoll_abi::{KMSG_PROC_EXIT, KMSG_PROC_FREED, PROC_FREE};

use super::programs::PROGRAMS;
use super::sigstate::SIGKILL;
use super::types::Process;
use super::{family, unserved, vfork, xemem};
use crate::kmsg::{self, Peer};
use crate::status;

/// The program's last thread has ended (or it never started): report its
/// status; its memory goes once the host has let go of it too.
pub fn program_ended(p: &Arc<Process>) {
    let released = {
        let mut programs = PROGRAMS.lock();
        match programs[p.area.index()].as_mut() {
            Some(o) if Arc::ptr_eq(&o.process, p) => {
                o.ended = true;
                o.released
            }
            _ => return,
        }
    };
    p.vm.lock().detach_shared();
    // Linux closes its descriptors at the end, not when it is reaped.
    p.local_fds.close_all();
    unserved::parent_ended(p);
    family::ended(p);
    p.area.set_exited(p.wait_status());
    p.call_times.report(p.pid, &p.area.comm());
    // A forked child that never had a server: no host file will let go.
    if unserved::ended_without_server(p) {
        free(p);
        return;
    }
    let words = [p.area.index() as u64, p.wait_status() as u64, p.pid as u64];
    kmsg::send_words_waiting(Peer::Host, KMSG_PROC_EXIT, &words);
    if released {
        free(p);
    }
}

/// Frees the program: its memory, area and XEMEM holdings go (the host
/// has let go of it, or no host file holds it: a forked child that ended
/// without a server).
pub fn free(p: &Arc<Process>) {
    {
        let mut programs = PROGRAMS.lock();
        let slot = &mut programs[p.area.index()];
        if !slot.as_ref().is_some_and(|o| Arc::ptr_eq(&o.process, p)) {
            return;
        }
        *slot = None;
    }
    // Every thread left these page tables on its way out; this core too.
    hal::paging::switch_to_kernel();
    p.vm.lock().release();
    p.calls.free_parked();
    vfork::freed(p);
    p.area.set_usage(0, 0);
    p.area.set_state(PROC_FREE);
    status::report_memory();
    xemem::ended(p);
    kmsg::send_words_waiting(Peer::Host, KMSG_PROC_FREED, &[p.area.index() as u64, p.pid as u64]);
}

/// A forked child no host process holds: gone, memory and area freed
/// (unless a host release freed it first).
pub fn drop_unserved(child: &Arc<Process>) {
    {
        let mut programs = PROGRAMS.lock();
        let slot = &mut programs[child.area.index()];
        if !slot.as_ref().is_some_and(|o| Arc::ptr_eq(&o.process, child)) {
            return;
        }
        *slot = None;
    }
    vfork::end(child);
    child.local_fds.close_all();
    child.vm.lock().release();
    child.area.set_usage(0, 0);
    child.area.set_state(PROC_FREE);
    status::report_memory();
}

/// A forked child that will never start: it ends (EXITED, SIGKILL) and is
/// freed once a host file that adopts it lets go.
pub fn end_unstarted(child: &Arc<Process>) {
    child.family.fork_start.lock().take();
    child.begin_exit(SIGKILL);
    program_ended(child);
}
