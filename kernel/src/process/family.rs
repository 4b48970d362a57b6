//! Parents and children: fork makes a child process with a copy of the
//! parent's memory in a program area of its own, which a fork of the
//! parent's `atoll run` adopts and serves (so the child's delegated calls
//! see the descriptors it inherited); the child's end is kept for the
//! parent's wait4/waitid and announced with SIGCHLD.

use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU8, Ordering};

use super::cputime::Times;
use super::signal::{self, SigInfo, SIGCHLD};
use super::{deferred_server, delegate, launch, uaccess, vfork, with_both_vms};
use super::{Area, Process, UserThread};
use crate::mm::vm;
use crate::sync::{SpinLock, WaitQueue};
use hal::TrapFrame;
use lwk_logic::errno::*;

/// What a forked child's first thread starts with.
#[derive(Clone, Copy)]
pub struct ForkStart {
    pub frame: TrapFrame,
    pub fs_base: u64,
    pub clear_child_tid: u64,
    pub signal_mask: u64,
    pub altstack: [u64; 3],
}

pub struct Family {
    parent: Option<Weak<Process>>,
    children: SpinLock<Vec<Arc<Process>>>,
    /// A child ended (wait4 sleeps here).
    child_ended: WaitQueue,
    /// Set once its last thread has ended: its wait status is final.
    ended: AtomicBool,
    /// It has called execve (a vfork parent waits for this or the end).
    execed: AtomicBool,
    pub fork_start: SpinLock<Option<ForkStart>>,
    /// A forked child's first thread was started.
    pub ran: AtomicBool,
    /// CPU time of the children it has waited for (RUSAGE_CHILDREN, times).
    pub children_time: SpinLock<Times>,
    /// Process group and session (LWK pids of their leaders).
    pgid: AtomicU32,
    sid: AtomicU32,
    /// Whether a server on Linux holds it (`deferred_server`'s states),
    /// and the queue of those waiting while one is made.
    pub server: AtomicU8,
    pub server_made: WaitQueue,
    /// Its children whose servers are not made yet.
    pub unserved_children: AtomicU32,
}

impl Family {
    pub fn new(parent: Option<&Arc<Process>>) -> Self {
        Family {
            parent: parent.map(Arc::downgrade),
            children: SpinLock::new(Vec::new()),
            child_ended: WaitQueue::new(),
            ended: AtomicBool::new(false),
            execed: AtomicBool::new(false),
            fork_start: SpinLock::new(None),
            ran: AtomicBool::new(false),
            children_time: SpinLock::new(Times::default()),
            pgid: AtomicU32::new(0),
            sid: AtomicU32::new(0),
            server: AtomicU8::new(deferred_server::HELD),
            server_made: WaitQueue::new(),
            unserved_children: AtomicU32::new(0),
        }
    }

    pub fn pgid(&self) -> u32 {
        self.pgid.load(Ordering::Acquire)
    }

    pub fn sid(&self) -> u32 {
        self.sid.load(Ordering::Acquire)
    }

    pub fn set_group(&self, pgid: u32, sid: u32) {
        self.pgid.store(pgid, Ordering::Release);
        self.sid.store(sid, Ordering::Release);
    }

    /// The parent, while it lives.
    pub fn parent(&self) -> Option<Arc<Process>> {
        self.parent.as_ref().and_then(Weak::upgrade)
    }

    /// Its children, as they are now.
    pub fn children(&self) -> Vec<Arc<Process>> {
        self.children.lock().clone()
    }

    /// Its last thread has ended.
    pub fn has_ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// The parent's pid while it lives; 1 (Linux's reaper) otherwise, and
    /// for a program `atoll run` started.
    pub fn ppid(&self) -> u32 {
        self.parent().map_or(1, |p| p.pid)
    }
}

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
    let child = Process::new(area, space, parent.cpus.inherit(), Some(parent));
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
    launch::adopt(&child);
    parent.family.children.lock().push(child.clone());
    // A vfork child (posix_spawn, system()) execs at once, which needs a
    // server anyway.
    if flags & (CLONE_VM | CLONE_VFORK) == 0 && deferred_server::may_defer(parent) {
        return start_without_server(parent, &child, flags, child_tid);
    }

    // The parent's `atoll run` forks a server for the child, which adopts
    // it, while this CPU copies the memory (if the child has a copy): the
    // two take about as long. The child starts once both are done, and the
    // parent goes on.
    let args = [area.index() as u64, child.pid.into(), 0, 0, 0, 0];
    let posted = delegate::post(u, atoll_abi::CALL_FORK, 0, args);
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
            launch::drop_unserved(&child);
            return Err(copied.err().unwrap_or(EAGAIN));
        }
        // The memory could not be copied, or the parent is ending mid-fork:
        // a server may hold the child, so it ends as a program does and is
        // freed when released.
        (served, copied) => {
            parent.family.children.lock().retain(|c| !Arc::ptr_eq(c, &child));
            launch::end_unstarted(&child);
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
        launch::drop_unserved(child);
        return Err(e);
    }
    deferred_server::defer(parent, child);
    if !launch::start_forked(child) {
        return Err(EAGAIN);
    }
    Ok(child.pid)
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
        || launch::all().iter().any(|p| p.family.pgid() == pgid && p.family.sid() == sid);
    if !group_exists {
        return Err(EPERM);
    }
    target.family.pgid.store(pgid, Ordering::Release);
    Ok(())
}

/// setsid: a new session and group led by the caller (EPERM for a leader).
pub fn setsid(caller: &Process) -> Result<u32, Errno> {
    let pid = caller.pid;
    if caller.family.pgid() == pid || launch::all().iter().any(|p| p.family.pgid() == pid) {
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
    if !launch::still_held(child) {
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
