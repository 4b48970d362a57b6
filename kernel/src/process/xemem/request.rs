//! Requests to the host's XEMEM registry and their replies: a thread sends
//! XEMEM_REQ and sleeps until the last XEMEM_REPLY with its id came (an
//! attach's frames arrive in several). The host always answers, so the
//! wait has no timeout. Event requests (SIGNAL, WAIT) go where their
//! event lives (`Home`): to the host, to this LWK's own events
//! (event.rs), or to another enclave's LWK; a WAIT may be cancelled, and
//! is then answered at once.

use alloc::vec::Vec;
use atoll_abi::{XememEvent, XememReply, XememReq, XEMEM_CANCEL, XEMEM_ELSEWHERE, XEMEM_SIGNAL};
use atoll_abi::{KMSG_XEMEM_EVENT, KMSG_XEMEM_HOME, KMSG_XEMEM_REQ};
use core::sync::atomic::{AtomicU64, Ordering};
use lwk_logic::errno::{Errno, EAGAIN, EIDRM, EIO, ETIMEDOUT};

use super::event;
use crate::kmsg::{self, Message, Peer, SendError};
use crate::sync::{SpinLock, WaitQueue};
use hal::{cpu, tsc};

/// Where a segment's event lives, so where its SIGNAL and WAIT go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    Host,
    Here,
    Enclave(u32),
}

impl Home {
    /// Who answers a request sent there (None: this LWK, without a message).
    fn answerer(self) -> Option<Peer> {
        match self {
            Home::Host => Some(Peer::Host),
            Home::Here => None,
            Home::Enclave(id) => Some(Peer::Enclave(id)),
        }
    }
}

/// A reply: the value (segid, apid, attachment id) and an attach's frames.
#[derive(Default)]
pub struct Reply {
    pub value: i64,
    /// The host says the event lives in this enclave's LWK (XEMEM_ELSEWHERE).
    pub elsewhere: Option<u32>,
    pub writable: bool,
    /// (physical address, bytes), in the segment's order.
    pub runs: Vec<(u64, u64)>,
}

struct Pending {
    id: u64,
    from: Option<Peer>,
    reply: Reply,
    result: Option<i64>,
}

static PENDING: SpinLock<Vec<Pending>> = SpinLock::new(Vec::new());
static ANSWERED: WaitQueue = WaitQueue::new();
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
/// A request spins this long for its answer before sleeping.
const SPIN_NS: u64 = 30_000;
/// A cancelled wait is answered within this, or given up.
const CANCEL_WAIT_NS: u64 = 1_000_000_000;
/// A ring to another enclave just made may take this long to be mapped,
/// and a full ring this long to get room.
const LINK_WAIT_NS: u64 = 1_000_000_000;
const FULL_WAIT_NS: u64 = 1_000_000_000;
/// Enclaves whose rings went: they were destroyed (ids are never reused).
static GONE: SpinLock<Vec<u32>> = SpinLock::new(Vec::new());

/// Sends `req` (its id set here) and waits for the whole answer.
pub fn ask(req: XememReq) -> Result<Reply, Errno> {
    ask_as(Home::Host, KMSG_XEMEM_REQ, req, None, || false)
}

/// An event request (SIGNAL, WAIT) to `home`, answered from a message
/// interrupt (or at once, here). A WAIT given up at `deadline` (TSC) or
/// when `stop()` says so is cancelled, and its answer still awaited: an
/// event taken for it meanwhile is not lost.
pub fn ask_event(
    home: Home,
    req: XememReq,
    deadline: Option<u64>,
    stop: impl Fn() -> bool,
) -> Result<Reply, Errno> {
    ask_as(home, KMSG_XEMEM_EVENT, req, deadline, stop)
}

fn ask_as(
    home: Home,
    kind: u16,
    mut req: XememReq,
    deadline: Option<u64>,
    stop: impl Fn() -> bool,
) -> Result<Reply, Errno> {
    req.id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let id = req.id;
    let from = home.answerer();
    PENDING.lock().push(Pending { id, from, reply: Reply::default(), result: None });
    if let Err(e) = deliver(home, kind, &req) {
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
        cancel.id = 0; // answered through the WAIT's own id
        cancel.io.op = XEMEM_CANCEL;
        cancel.attachment = id;
        // Without a ring to it nothing can answer; the wait ends as it would.
        if let Err(e) = deliver(home, kind, &cancel) {
            PENDING.lock().retain(|p| p.id != id);
            return Err(if matches!(home, Home::Enclave(_)) { EIDRM } else { e });
        }
        // Answered at once, unless the answer was lost or the other kernel
        // hangs: then the wait ends after a while (and an event a late
        // answer from another LWK took goes back, see on_reply).
        let give_up = cpu::rdtsc() + tsc::ns_to_cycles(CANCEL_WAIT_NS);
        ANSWERED.wait_until_deadline(answered, Some(give_up));
    }
    let mut pending = PENDING.lock();
    let i = pending.iter().position(|p| p.id == id).ok_or(EIO)?;
    let done = pending.swap_remove(i);
    drop(pending);
    match done.result {
        None => Err(ETIMEDOUT),
        Some(r) if r < 0 => Err(Errno::from_return(r).err().unwrap_or(EIO)),
        Some(_) => Ok(done.reply),
    }
}

/// Sends without waiting for an answer (the host gives none).
pub fn tell(req: XememReq) {
    if let Err(e) = send(Peer::Host, KMSG_XEMEM_REQ, &req.to_bytes(), EAGAIN) {
        hal::println!("xemem: request {} for pid {} not sent: {e:?}", req.io.op, req.pid);
    }
}

/// An event request that wants no answer (request id 0).
pub fn tell_event(home: Home, req: XememReq) -> Result<(), Errno> {
    deliver(home, KMSG_XEMEM_EVENT, &req)
}

/// A request to where its event lives: the host gets the whole request
/// (it checks the program's user), an LWK the event's part only.
fn deliver(home: Home, kind: u16, req: &XememReq) -> Result<(), Errno> {
    let ev = || XememEvent {
        id: req.id,
        segid: req.io.segid,
        cancel: req.attachment,
        op: req.io.op,
        kernel: 0,
    };
    match home {
        Home::Host => send(Peer::Host, kind, &req.to_bytes(), EAGAIN),
        Home::Here => {
            event::ask(ev());
            Ok(())
        }
        Home::Enclave(id) if GONE.lock().contains(&id) => Err(EIDRM),
        Home::Enclave(id) => {
            let to = Peer::Enclave(id);
            let give_up = cpu::rdtsc() + tsc::ns_to_cycles(LINK_WAIT_NS);
            while !kmsg::is_linked(to) && cpu::rdtsc() < give_up {
                crate::sched::yield_now();
            }
            send(to, KMSG_XEMEM_HOME, &ev().to_bytes(), EAGAIN)
        }
    }
}

/// Into the ring to `to`, waiting a while when it is full (EAGAIN after
/// that); `no_ring` if there is none.
fn send(to: Peer, kind: u16, bytes: &[u8], no_ring: Errno) -> Result<(), Errno> {
    let give_up = cpu::rdtsc() + tsc::ns_to_cycles(FULL_WAIT_NS);
    loop {
        match kmsg::send(to, kind, bytes) {
            Ok(()) => return Ok(()),
            Err(SendError::Full) if cpu::rdtsc() < give_up => crate::sched::yield_now(),
            Err(SendError::Full) => return Err(EAGAIN),
            Err(_) => return Err(no_ring),
        }
    }
}

/// An answer from this LWK's own events (event.rs); false if nobody waits for it.
pub fn answered(id: u64, result: i64) -> bool {
    let mut pending = PENDING.lock();
    let Some(p) = pending.iter_mut().find(|p| p.id == id && p.from.is_none() && p.result.is_none())
    else {
        return false;
    };
    p.result = Some(result);
    drop(pending);
    ANSWERED.wake_all(true);
    true
}

/// Another enclave is gone: requests it was to answer end with EIDRM
/// (the segment whose event it held went with it).
pub fn peer_gone(id: u32) {
    GONE.lock().push(id);
    let mut pending = PENDING.lock();
    let mut woke = false;
    for p in pending.iter_mut().filter(|p| p.from == Some(Peer::Enclave(id)) && p.result.is_none())
    {
        p.result = Some(-i64::from(EIDRM.number()));
        woke = true;
    }
    drop(pending);
    if woke {
        ANSWERED.wake_all(true);
    }
}

/// XEMEM_REPLY, in the message interrupt: adds to its request's answer,
/// if it comes from where the request went.
pub fn on_reply(msg: &Message) {
    let parsed = XememReply::parse(msg.data);
    // Only the host's answers carry runs; another LWK's answer an event.
    let Some((head, runs)) = parsed.filter(|(r, _)| msg.from == Peer::Host || r.count == 0) else {
        hal::println!("xemem: a malformed reply from {:?}; dropped", msg.from);
        return;
    };
    let mut pending = PENDING.lock();
    let asked = |p: &&mut Pending| p.id == head.id && p.from == Some(msg.from);
    let Some(p) = pending.iter_mut().find(|p| asked(p) && p.result.is_none()) else {
        drop(pending);
        return unasked(msg.from, &head);
    };
    p.reply.runs.extend(runs.map(|r| (r.phys, r.len)));
    if head.last != 0 {
        let elsewhere = head.result == XEMEM_ELSEWHERE && msg.from == Peer::Host;
        p.reply.value = head.value;
        p.reply.writable = head.writable != 0;
        p.reply.elsewhere = elsewhere.then_some(head.value as u32);
        // Another LWK answers 0 or -errno; anything else is an error.
        let result = match head.result {
            r if elsewhere || msg.from == Peer::Host || (-4095..=0).contains(&r) => r,
            _ => -i64::from(EIO.number()),
        };
        p.result = Some(if elsewhere { 0 } else { result });
        drop(pending);
        ANSWERED.wake_all(true);
    }
}

/// An answer to no request: a wait in another LWK given up (it did not
/// answer the cancel in time) that took an event after all gives it back.
fn unasked(from: Peer, head: &XememReply) {
    if from == Peer::Host || head.result != 0 {
        hal::println!("xemem: a reply from {from:?} to no request ({}); dropped", head.id);
        return;
    }
    let back = XememEvent { segid: head.value, op: XEMEM_SIGNAL, ..Default::default() };
    if kmsg::send(from, KMSG_XEMEM_HOME, &back.to_bytes()).is_err() {
        hal::println!("xemem: an event of segment {} could not go back", head.value);
    }
}
