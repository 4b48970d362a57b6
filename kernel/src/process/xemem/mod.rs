//! XEMEM in this LWK (atoll_abi.h, "XEMEM"): its programs' segments and
//! attachments. The host keeps the node's registry; a program's call
//! becomes a request to it (request.rs). Making a segment pins the range's
//! frames (pins.rs) until the host says nobody maps them (XEMEM_UNPIN);
//! attaching maps the frames the host names, 2 MiB pages where they allow.
//! The host revokes an attachment (XEMEM_REVOKE) before its frames go
//! back to their owner; the program then faults on that range (SIGSEGV).
//! A segment's event lives in its owner's kernel (event.rs for ours).

mod event;
mod request;

use alloc::collections::{BTreeMap, BTreeSet};
use alloc::sync::Arc;
use alloc::vec::Vec;
use atoll_abi::*;
use hal::frames::HostPages;
use lwk_logic::errno::*;
use lwk_logic::user_pages::{Access, PAGE_SIZE};

use super::programs;
use super::types::Process;
use crate::kmsg::{self, Message, Peer};
use crate::mm::pins;
use crate::mm::vm::Freed;
use crate::sync::{Queue, SpinLock};
use request::Home;

/// Host commands for the xemem thread: (type, first word, second word).
static COMMANDS: Queue<(u16, u64, u64)> = Queue::new();
/// Held while an attachment is checked and mapped, or revoked: a
/// revocation that comes before the mapping is remembered here.
static REVOKED_EARLY: SpinLock<BTreeSet<u64>> = SpinLock::new(BTreeSet::new());
/// (pid, segid) -> where the segment's event lives, once the host let the
/// program signal or wait on it.
static ROUTES: SpinLock<BTreeMap<(u32, i64), Home>> = SpinLock::new(BTreeMap::new());

pub fn init() {
    kmsg::register(KMSG_XEMEM_REPLY, request::on_reply);
    event::answer_here_with(request::answered);
    kmsg::register(KMSG_XEMEM_HOME, event::on_home);
    kmsg::on_peer_gone(|id| {
        // Routes first: a waiter woken below must not find one to it.
        ROUTES.lock().retain(|_, home| *home != Home::Enclave(id));
        event::peer_gone(id);
        request::peer_gone(id);
    });
    kmsg::register(KMSG_XEMEM_REVOKE, post);
    kmsg::register(KMSG_XEMEM_UNPIN, post);
    crate::sched::spawn(0, "xemem", || loop {
        match COMMANDS.pop() {
            (KMSG_XEMEM_REVOKE, area, id) => revoke(area, id),
            (KMSG_XEMEM_UNPIN, pin, _) => {
                // A kept segment's frames whose owner ended are free now.
                pins::unpin(pin);
                crate::status::report_memory();
            }
            _ => {}
        }
    });
}

/// From the host, in the message interrupt: for the xemem thread.
fn post(msg: &Message) {
    if msg.from != Peer::Host {
        hal::println!("xemem: command {} from {:?} refused", msg.kind, msg.from);
        return;
    }
    COMMANDS.push((msg.kind, msg.word(0), msg.word(1)));
}

fn revoke(area: u64, id: u64) {
    let unmapped = {
        let mut early = REVOKED_EARLY.lock();
        let owner = programs::all().into_iter().find(|p| p.area.index() as u64 == area);
        match owner {
            Some(p) if p.vm.lock().revoke(id) => Some(p),
            _ => {
                early.insert(id);
                None
            }
        }
    };
    if let Some(p) = unmapped {
        p.flush_translations();
    }
    kmsg::send_words_waiting(Peer::Host, KMSG_XEMEM_REVOKED, &[id]);
}

fn request(p: &Process, io: &XememIo) -> XememReq {
    XememReq {
        id: 0,
        area: p.area.index() as u32,
        pid: p.pid,
        pin: 0,
        runs_hash: 0,
        root: 0,
        attachment: 0,
        io: *io,
    }
}

/// Before xpmem_make: the range's pages get their memory and frames of
/// their own (ones a fork shared go to `freed`, which the caller retires
/// before `make`, so that no core still reads them).
pub fn prepare(p: &Process, io: &XememIo, freed: &mut Freed) -> Result<(), Errno> {
    let aligned = io.vaddr.is_multiple_of(PAGE_SIZE) && io.size.is_multiple_of(PAGE_SIZE);
    if io.size == 0 || !aligned || io.vaddr.checked_add(io.size).is_none() {
        return Err(EINVAL);
    }
    // Pages that get memory only when touched (the main stack's) get it
    // now: the segment's frames are fixed from here on.
    p.grow_stack_over(io.vaddr, io.size);
    p.vm.lock().own_pages(io.vaddr, io.vaddr + io.size, false, freed)
}

/// xpmem_make, after `prepare`: pins the range's frames, then registers
/// them with the host.
pub fn make(p: &Process, io: &XememIo) -> Result<i64, Errno> {
    let mut req = request(p, io);
    {
        // Pinned under the lock: no munmap can free a frame in between.
        let mut vm = p.vm.lock();
        // A fork shared some again since `prepare` (a racing thread).
        if !vm.shared_pages(io.vaddr, io.vaddr + io.size).is_empty() {
            return Err(EAGAIN);
        }
        let runs = vm.hold_range(io.vaddr, io.size)?;
        req.runs_hash =
            xemem_hash(runs.iter().map(|f| XememRun { phys: f.phys(), len: f.bytes() }));
        req.root = vm.tables().phys();
        req.pin = pins::pin(runs);
    }
    request::ask(req).map(|r| r.value).inspect_err(|_| pins::unpin(req.pin))
}

/// remove, keep, get, release, lookup: the host's answer alone.
pub fn ask(p: &Process, io: &XememIo) -> Result<i64, Errno> {
    request::ask(request(p, io)).map(|r| r.value)
}

/// xpmem_attach: the host's frames mapped into the program.
pub fn attach(p: &Process, io: &XememIo) -> Result<u64, Errno> {
    if io.size == 0 || !io.size.is_multiple_of(PAGE_SIZE) {
        return Err(EINVAL);
    }
    let reply = request::ask(request(p, io))?;
    let id = reply.value as u64;
    let access = Access { read: true, write: reply.writable, exec: false };
    let granted: Result<Vec<HostPages>, _> =
        reply.runs.iter().map(|&(phys, len)| HostPages::granted(phys, len)).collect();
    let mapped = {
        let mut early = REVOKED_EARLY.lock();
        match granted {
            _ if early.remove(&id) => Err(ENOENT),
            Err(e) => {
                hal::println!("xemem: attachment {id} refused: {e:?} in the host's runs");
                Err(EFAULT)
            }
            Ok(runs) => p.vm.lock().attach(io.vaddr, io.size, &runs, access, id),
        }
    };
    if mapped.is_err() {
        let _ = detached(p, id);
    }
    mapped
}

/// xpmem_detach, once no CPU maps the attachment: the host forgets it.
pub fn detached(p: &Process, id: u64) -> Result<i64, Errno> {
    let mut req = request(p, &XememIo::new());
    req.io.op = XEMEM_DETACH;
    req.attachment = id;
    request::ask(req).map(|r| r.value)
}

/// xemem_signal: one event for the segment's waiters. A program's first
/// signal waits for the answer (ENOENT, EACCES); later ones only send, so
/// that a simulation never waits on another kernel.
pub fn signal(p: &Process, io: &XememIo) -> Result<i64, Errno> {
    if let Some(home) = ROUTES.lock().get(&(p.pid, io.segid)).copied() {
        request::tell_event(home, request(p, io))?;
        return Ok(0);
    }
    event_request(p, io, None)
}

/// xemem_wait: takes an event, waiting up to `deadline` (TSC) for one;
/// EINTR when the program is ending.
pub fn wait(p: &Process, io: &XememIo, deadline: Option<u64>) -> Result<i64, Errno> {
    match event_request(p, io, deadline) {
        Err(ETIMEDOUT) if p.is_exiting() => Err(EINTR),
        r => r,
    }
}

/// SIGNAL or WAIT where the event lives. The program's first goes to the
/// host, which checks the segment's mode and serves it, or says which
/// LWK holds the event; it then goes there, and so do the later ones.
fn event_request(p: &Process, io: &XememIo, deadline: Option<u64>) -> Result<i64, Errno> {
    let key = (p.pid, io.segid);
    let stop = || p.is_exiting();
    let known = ROUTES.lock().get(&key).copied();
    let home = match known {
        Some(home) => home,
        None => {
            let r = request::ask_event(Home::Host, request(p, io), deadline, stop)?;
            let Some(id) = r.elsewhere else {
                ROUTES.lock().insert(key, Home::Host);
                return Ok(r.value);
            };
            let here = crate::boot::enclave().is_some_and(|e| e.id == id);
            let home = if here { Home::Here } else { Home::Enclave(id) };
            let r = request::ask_event(home, request(p, io), deadline, stop);
            // Kept once the event's kernel was reached (EAGAIN: no ring to
            // it yet, or a full one; EIDRM: it is gone).
            if !matches!(r, Err(EAGAIN | EIDRM)) {
                ROUTES.lock().insert(key, home);
            }
            return r.map(|r| r.value);
        }
    };
    request::ask_event(home, request(p, io), deadline, stop).map(|r| r.value)
}

/// The program's memory is freed (it ended, or exec replaced it): the
/// host drops what it held.
pub fn ended(p: &Arc<Process>) {
    ROUTES.lock().retain(|&(pid, _), _| pid != p.pid);
    let mut req = request(p, &XememIo::new());
    req.io.op = XEMEM_ENDED;
    request::tell(req);
}
