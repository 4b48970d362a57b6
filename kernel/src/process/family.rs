//! Parents and children: process groups and sessions, a child's end kept
//! for its parent's wait4/waitid and announced with SIGCHLD (fork.rs makes
//! the children; the tree itself is family_tree.rs's).

use alloc::sync::Arc;
use core::sync::atomic::Ordering;

use super::cputime::Times;
use super::family_tree::Family;
use super::sigstate::{SigInfo, SIGCHLD};
use super::types::{Process, UserThread};
use super::{programs, signal, vfork};
use lwk_logic::errno::*;

impl Family<Process> {
    /// The parent's pid while it lives; 1 (Linux's reaper) otherwise, and
    /// for a program `atoll run` started.
    pub fn ppid(&self) -> u32 {
        self.parent().map_or(1, |p| p.pid)
    }
}

/// setpgid(pid, pgid) by `caller`: itself or a child of its session joins
/// group `pgid` (0: its own) of the same session, or leads a new one.
pub fn setpgid(caller: &Arc<Process>, pid: u32, pgid: u32) -> Result<(), Errno> {
    let target = if pid == 0 || pid == caller.pid {
        caller.clone()
    } else {
        let kids = caller.family.children.lock();
        kids.iter().find(|c| c.pid == pid).cloned().ok_or(ESRCH)?
    };
    let sid = target.family.sid();
    if sid != caller.family.sid() || target.family.sid() == target.pid {
        return Err(EPERM);
    }
    let pgid = if pgid == 0 { target.pid } else { pgid };
    let group_exists = pgid == target.pid
        || programs::all().iter().any(|p| p.family.pgid() == pgid && p.family.sid() == sid);
    if !group_exists {
        return Err(EPERM);
    }
    target.family.pgid.store(pgid, Ordering::Release);
    Ok(())
}

/// setsid: a new session and group led by the caller (EPERM for a leader).
pub fn setsid(caller: &Process) -> Result<u32, Errno> {
    let pid = caller.pid;
    if caller.family.pgid() == pid || programs::all().iter().any(|p| p.family.pgid() == pid) {
        return Err(EPERM);
    }
    caller.family.set_group(pid, pid);
    Ok(pid)
}

/// The process has a new image: a vfork parent goes on.
pub fn execed(p: &Process) {
    p.family.execed.store(true, Ordering::Release);
    p.family.child_ended.wake_all(true);
}

/// The process's last thread ended: its parent, if alive, may reap it.
pub fn ended(p: &Arc<Process>) {
    // Before its vfork parent goes on (its last thread left the memory).
    vfork::end(p);
    p.family.ended.store(true, Ordering::Release);
    p.family.child_ended.wake_all(true);
    let Some(parent) = p.family.parent() else { return };
    parent.family.child_ended.wake_all(true);
    // A child its parent does not list is one whose fork failed: the parent
    // never had its pid, so no SIGCHLD tells of it.
    if !parent.family.children.lock().iter().any(|c| Arc::ptr_eq(c, p)) {
        return;
    }
    let status = p.wait_status();
    const CLD_EXITED: i32 = 1;
    const CLD_KILLED: i32 = 2;
    let code = if status & 0x7f == 0 { CLD_EXITED } else { CLD_KILLED };
    signal::send_to_process(
        &parent,
        SigInfo { signo: SIGCHLD, code, pid: p.pid, ..Default::default() },
    );
}

/// Which children a wait looks at.
#[derive(Clone, Copy)]
pub enum Which {
    Any,
    Pid(u32),
    Group(u32),
}

/// A child that ended: pid, wait status, CPU time.
pub struct Reaped {
    pub pid: u32,
    pub status: u32,
    pub times: Times,
}

/// wait4/waitid: an ended child matching `which` (removed unless `keep`),
/// or None with `nohang`; ECHILD without such children; EINTR-like
/// ERESTARTSYS when a signal comes first.
pub fn wait(
    p: &Arc<Process>,
    u: &UserThread,
    which: Which,
    nohang: bool,
    keep: bool,
) -> Result<Option<Reaped>, Errno> {
    let matches = |c: &Arc<Process>| match which {
        Which::Any => true,
        Which::Pid(pid) => c.pid == pid,
        Which::Group(pgid) => c.family.pgid() == pgid,
    };
    loop {
        {
            let mut kids = p.family.children.lock();
            if !kids.iter().any(matches) {
                return Err(ECHILD);
            }
            if let Some(i) =
                kids.iter().position(|c| matches(c) && c.family.ended.load(Ordering::Acquire))
            {
                let c = if keep { kids[i].clone() } else { kids.remove(i) };
                let times = c.cpu_times().add(*c.family.children_time.lock());
                if !keep {
                    let mut mine = p.family.children_time.lock();
                    *mine = mine.add(times);
                }
                return Ok(Some(Reaped { pid: c.pid, status: c.wait_status(), times }));
            }
        }
        if nohang {
            return Ok(None);
        }
        let ready = || {
            signal::interrupted(u)
                || p.family
                    .children
                    .lock()
                    .iter()
                    .any(|c| matches(c) && c.family.ended.load(Ordering::Acquire))
        };
        p.family.child_ended.wait_until(ready);
        if signal::interrupted(u) {
            return Err(ERESTARTSYS);
        }
    }
}
