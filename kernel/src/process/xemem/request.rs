//! Requests to the host's XEMEM registry and their replies: a thread sends
//! XEMEM_REQ and sleeps until the last XEMEM_REPLY with its id came (an
//! attach's frames arrive in several). The host always answers, so the
//! wait has no timeout; a WAIT for an event may be cancelled, and is then
//! answered at once.

use alloc::vec::Vec;
use atoll_abi::{XememReply, XememReq, KMSG_XEMEM_EVENT, KMSG_XEMEM_REQ, XEMEM_CANCEL};
use core::sync::atomic::{AtomicU64, Ordering};
use lwk_logic::errno::{Errno, EAGAIN, EIO};

use crate::kmsg::{self, Message, Peer, SendError};
use crate::sync::{SpinLock, WaitQueue};
use hal::{cpu, tsc};

/// A reply: the value (segid, apid, attachment id) and an attach's frames.
#[derive(Default)]
pub struct Reply {
    pub value: i64,
    pub writable: bool,
    /// (physical address, bytes), in the segment's order.
    pub runs: Vec<(u64, u64)>,
}

struct Pending {
    id: u64,
    reply: Reply,
    result: Option<i64>,
}

static PENDING: SpinLock<Vec<Pending>> = SpinLock::new(Vec::new());
static ANSWERED: WaitQueue = WaitQueue::new();
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// A request spins this long for its answer before sleeping.
const SPIN_NS: u64 = 30_000;

/// Sends `req` (its id set here) and waits for the whole answer.
pub fn ask(req: XememReq) -> Result<Reply, Errno> {
    ask_as(KMSG_XEMEM_REQ, req, None, || false)
}

/// An event request (SIGNAL, WAIT), answered from the host's interrupt. A
/// WAIT given up at `deadline` (TSC) or when `stop()` says so is
/// cancelled, and its answer still awaited: an event the host took for it
/// meanwhile is not lost.
pub fn ask_event(
    req: XememReq,
    deadline: Option<u64>,
    stop: impl Fn() -> bool,
) -> Result<Reply, Errno> {
    ask_as(KMSG_XEMEM_EVENT, req, deadline, stop)
}

fn ask_as(
    kind: u16,
    mut req: XememReq,
    deadline: Option<u64>,
    stop: impl Fn() -> bool,
) -> Result<Reply, Errno> {
    req.id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let id = req.id;
    PENDING.lock().push(Pending { id, reply: Reply::default(), result: None });
    if let Err(e) = send(kind, &req) {
        PENDING.lock().retain(|p| p.id != id);
        return Err(e);
    }
    let answered = || PENDING.lock().iter().any(|p| p.id == id && p.result.is_some());
    // A quick answer (an event already there, or coming within
    // microseconds) is taken without sleeping and being woken.
    let spin_until = cpu::rdtsc() + tsc::ns_to_cycles(SPIN_NS);
    while !answered() && !stop() && cpu::rdtsc() < spin_until {
        cpu::relax();
    }
    if !ANSWERED.wait_until_deadline(|| answered() || stop(), deadline) || !answered() {
        let mut cancel = req;
        cancel.io.op = XEMEM_CANCEL;
        cancel.attachment = id;
        // Without a ring to the host nothing can answer; the wait ends as it would.
        if send(kind, &cancel).is_err() {
            PENDING.lock().retain(|p| p.id != id);
            return Err(EAGAIN);
        }
        ANSWERED.wait_until(answered);
    }
    let mut pending = PENDING.lock();
    let i = pending.iter().position(|p| p.id == id).ok_or(EIO)?;
    let done = pending.swap_remove(i);
    drop(pending);
    match done.result {
        Some(r) if r < 0 => Err(Errno::from_return(r).err().unwrap_or(EIO)),
        _ => Ok(done.reply),
    }
}

/// Sends without waiting for an answer (the host gives none).
pub fn tell(req: XememReq) {
    if let Err(e) = send(KMSG_XEMEM_REQ, &req) {
        crate::println!("xemem: request {} for pid {} not sent: {e:?}", req.io.op, req.pid);
    }
}

/// An event request that wants no answer (request id 0).
pub fn tell_event(req: XememReq) {
    if let Err(e) = send(KMSG_XEMEM_EVENT, &req) {
        crate::println!("xemem: event for pid {} not sent: {e:?}", req.pid);
    }
}

/// Into the ring to the host, waiting while it is full.
fn send(kind: u16, req: &XememReq) -> Result<(), Errno> {
    let bytes = req.to_bytes();
    loop {
        match kmsg::send(Peer::Host, kind, &bytes) {
            Ok(()) => return Ok(()),
            Err(SendError::Full) => crate::sched::yield_now(),
            Err(_) => return Err(EAGAIN),
        }
    }
}

/// XEMEM_REPLY, in the message interrupt: adds to its request's answer.
pub fn on_reply(msg: &Message) {
    let Some((head, runs)) = XememReply::parse(msg.data).filter(|_| msg.from == Peer::Host) else {
        crate::println!("xemem: a malformed reply from {:?}; dropped", msg.from);
        return;
    };
    let mut pending = PENDING.lock();
    let Some(p) = pending.iter_mut().find(|p| p.id == head.id && p.result.is_none()) else {
        crate::println!("xemem: a reply to no request ({}); dropped", head.id);
        return;
    };
    p.reply.runs.extend(runs.map(|r| (r.phys, r.len)));
    if head.last != 0 {
        p.reply.value = head.value;
        p.reply.writable = head.writable != 0;
        p.result = Some(head.result);
        drop(pending);
        ANSWERED.wake_all(true);
    }
}
