//! A forked child's server on Linux, made when the child first needs
//! Linux rather than at the fork. The server is a fork of the parent's
//! `atoll run` (so the child's delegated calls see the descriptors it
//! inherited), so it must be made while the parent's Linux side is still as
//! it was at the fork: before the parent's next delegated call, before the
//! parent exits, or when the child makes its first delegated call (execve
//! included), whichever comes first. A child that ends before any of these
//! (fork, compute, _exit) never costs Linux a process. A child whose parent
//! is killed before its server is made ends with it.

use alloc::sync::Arc;
use alloc::vec::Vec;
use atoll_abi::CALL_FORK;
use core::sync::atomic::Ordering;

use super::family_tree::{DEFERRED, HELD, MAKING};
use super::sigstate::SIGKILL;
use super::types::{Process, UserThread};
use super::unserved::{ended_without_server, settle};
use super::{call_slots, ending};
use lwk_logic::errno::{Errno, EAGAIN};

/// Before thread `u` posts a delegated call: its process's server, and
/// its children's, are made first.
pub fn before_delegating(u: &UserThread) {
    let p = &u.process;
    // A failure has the process killed: its call then ends with EINTR.
    let _ = serve_self(p);
    if p.family.unserved_children.load(Ordering::Acquire) != 0 {
        serve_children(u);
    }
}

/// Makes the servers of `u`'s process's children that have none (before
/// its delegated calls and its exit).
pub fn serve_children(u: &UserThread) {
    let waiting: Vec<Arc<Process>> = u
        .process
        .family
        .children()
        .into_iter()
        .filter(|c| matches!(c.family.server.load(Ordering::Acquire), DEFERRED | MAKING))
        .collect();
    for child in waiting {
        make(&child, Via::Thread(u));
    }
}

/// Whose slot carries the CALL_FORK: the parent's thread's own, or (the
/// child asking for itself) a free slot of its parent's area.
enum Via<'a> {
    Thread(&'a UserThread),
    Parent,
}

/// Makes `child`'s server unless it has one, or waits while another
/// thread makes it.
fn make(child: &Arc<Process>, via: Via) {
    loop {
        match child.family.server.compare_exchange(
            DEFERRED,
            MAKING,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => break,
            Err(MAKING) => child
                .family
                .server_made
                .wait_until(|| child.family.server.load(Ordering::Acquire) != MAKING),
            Err(_) => return,
        }
    }
    let args = [child.area.index() as u64, child.pid.into(), 0, 0, 0, 0];
    let answer = match via {
        Via::Thread(u) => call_slots::post(u, CALL_FORK, 0, args).wait().map(|a| a.ret),
        Via::Parent => match child.family.parent() {
            Some(parent) => call_slots::call_in_area_of(&parent, CALL_FORK, args),
            None => Err(EAGAIN),
        },
    };
    match answer {
        // A fork of the parent's server adopted it: served as any program.
        Ok(host_pid) if host_pid > 0 => settle(child, HELD),
        // No server holds it, nor will (the fork failed on Linux, or
        // nothing was posted: no parent, or no free slot in its area): it
        // ends, freed at its end (here if that came while it waited).
        Ok(_) | Err(EAGAIN) => {
            hal::println!("program {}: no server on Linux could be made: killed", child.pid);
            settle(child, DEFERRED);
            child.begin_exit(SIGKILL);
            if child.family.has_ended() && ended_without_server(child) {
                ending::free(child);
            }
        }
        // The parent ended while its server had the request: a server may
        // hold the child (or come to), so it ends as a served program does,
        // freed when released; if none ever adopts it, its area stays taken.
        Err(_) => {
            settle(child, HELD);
            child.begin_exit(SIGKILL);
        }
    }
}

/// A process asking for its own server (it is about to fork, or a
/// delegated call, a message or an XEMEM request of its own comes next);
/// EAGAIN if none could be made (it is being killed then).
pub fn serve_self(p: &Arc<Process>) -> Result<(), Errno> {
    if p.family.server.load(Ordering::Acquire) != HELD {
        make(p, Via::Parent);
    }
    match p.family.server.load(Ordering::Acquire) {
        HELD => Ok(()),
        _ => Err(EAGAIN),
    }
}
