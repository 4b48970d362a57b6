//! The events of segments this LWK's programs made (signalled segments,
//! atoll_abi.h "XEMEM"): each one's count and waiters live here, in the
//! owner's kernel, so another enclave's signal is one message from its CPU
//! to ours (XEMEM_HOME) and the answer to its wait one back, with Linux
//! off the path. The host opens and closes them, forwards Linux's signals
//! and waits, and grants each other enclave its use (GET) when it tells
//! that enclave's program where the event is, after checking the
//! segment's mode. Another enclave is served only once granted.

use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::vec::Vec;
use atoll_abi::*;
use lwk_logic::errno::{Errno, EIDRM, ENOENT, ETIMEDOUT};

use super::request;
use crate::kmsg::{self, Message, Peer};
use crate::sync::SpinLock;

/// Who asked: a program here (answered through request.rs) or another kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asker {
    Here,
    Kernel(Peer),
}

#[derive(Default)]
struct Event {
    /// Signals not taken yet.
    count: u64,
    /// WAITs not answered yet, first come first served: (asker, request id).
    waiters: VecDeque<(Asker, u64)>,
}

struct Events {
    open: BTreeMap<i64, Event>,
    /// The highest segid opened here: the host opens events in segid order.
    highest: i64,
    /// (enclave, segid): that enclave's programs may use the event.
    granted: BTreeSet<(u32, i64)>,
    /// Requests that came on another kernel's ring before the event's
    /// opening or their grant came on the host's.
    early: Vec<(Asker, XememEvent)>,
    /// WAITs whose answer could not be sent: their CANCEL is answered.
    undelivered: VecDeque<(Asker, u64)>,
}

/// Requests kept for each asker before their event's opening or grant, and
/// undelivered answers remembered, at most.
const MAX_EARLY_EACH: usize = 64;
const MAX_UNDELIVERED: usize = 256;

static EVENTS: SpinLock<Events> = SpinLock::new(Events {
    open: BTreeMap::new(),
    highest: 0,
    granted: BTreeSet::new(),
    early: Vec::new(),
    undelivered: VecDeque::new(),
});

/// XEMEM_HOME, in the message interrupt.
pub fn on_home(msg: &Message) {
    let Some(ev) = XememEvent::parse(msg.data) else {
        crate::println!("xemem: a malformed event request from {:?}; refused", msg.from);
        return;
    };
    match (ev.op, msg.from) {
        (XEMEM_MAKE, Peer::Host) => open(ev.segid),
        (XEMEM_REMOVE, Peer::Host) => close(ev.segid),
        (XEMEM_GET, Peer::Host) => grant(ev.kernel, ev.segid),
        (XEMEM_WAIT, from) if ev.id == 0 => {
            crate::println!("xemem: a wait nobody would hear from {from:?}; refused");
        }
        (XEMEM_SIGNAL | XEMEM_WAIT | XEMEM_CANCEL, from) => ask(Asker::Kernel(from), ev),
        (op, from) => crate::println!("xemem: event request {op} from {from:?} refused"),
    }
}

/// SIGNAL, WAIT or CANCEL for an event here, from a program here or another kernel.
pub fn ask(asker: Asker, ev: XememEvent) {
    serve(&mut EVENTS.lock(), asker, ev);
}

/// May `asker` use segid's event: our programs and the host (which
/// checked its own), another enclave once granted.
fn allowed(events: &Events, asker: Asker, segid: i64) -> bool {
    match asker {
        Asker::Kernel(Peer::Enclave(id)) => events.granted.contains(&(id, segid)),
        _ => true,
    }
}

fn serve(events: &mut Events, asker: Asker, ev: XememEvent) {
    if ev.op == XEMEM_CANCEL {
        return cancel(events, asker, ev);
    }
    let ready = allowed(events, asker, ev.segid);
    let Some(event) = events.open.get_mut(&ev.segid).filter(|_| ready) else {
        return early_or_refused(events, asker, ev);
    };
    match ev.op {
        XEMEM_SIGNAL => {
            // To the first waiter that can still hear it, else counted.
            let mut handed = false;
            while let Some((waiter, id)) = event.waiters.pop_front() {
                if answer(waiter, id, ev.segid, Ok(())) {
                    handed = true;
                    break;
                }
                remember_undelivered(&mut events.undelivered, waiter, id);
            }
            if !handed {
                event.count += 1;
            }
            answer(asker, ev.id, ev.segid, Ok(()));
        }
        XEMEM_WAIT if event.count > 0 => {
            // Taken only if the answer goes out.
            if answer(asker, ev.id, ev.segid, Ok(())) {
                event.count -= 1;
            } else {
                remember_undelivered(&mut events.undelivered, asker, ev.id);
            }
        }
        _ => event.waiters.push_back((asker, ev.id)),
    }
}

/// A request for an event not open here, or not granted to its asker: it
/// waits for what is still coming on the host's ring (an opening for a
/// segid above the highest, a grant for an open one), up to
/// MAX_EARLY_EACH per asker; else ENOENT.
fn early_or_refused(events: &mut Events, asker: Asker, ev: XememEvent) {
    let coming = ev.segid > events.highest || events.open.contains_key(&ev.segid);
    let parked = events.early.iter().filter(|(a, _)| *a == asker).count();
    if coming && parked < MAX_EARLY_EACH {
        events.early.push((asker, ev));
    } else {
        answer(asker, ev.id, ev.segid, Err(ENOENT));
    }
}

/// A WAIT not answered yet ends with ETIMEDOUT (also one parked early, or
/// whose answer was lost); one answered already took its event, and the
/// answer is on the way.
fn cancel(events: &mut Events, asker: Asker, ev: XememEvent) {
    let id = ev.cancel;
    let waiting = events
        .open
        .get_mut(&ev.segid)
        .and_then(|e| take_where(&mut e.waiters, |&w| w == (asker, id)))
        .is_some();
    let lost = !waiting && take_where(&mut events.undelivered, |&w| w == (asker, id)).is_some();
    let parked = !waiting && !lost && {
        let i = events.early.iter().position(|&(a, e)| a == asker && e.id == id);
        i.map(|i| events.early.swap_remove(i)).is_some()
    };
    if waiting || lost || parked {
        answer(asker, id, ev.segid, Err(ETIMEDOUT));
    }
}

fn take_where<T>(queue: &mut VecDeque<T>, pred: impl Fn(&T) -> bool) -> Option<T> {
    let i = queue.iter().position(pred)?;
    queue.remove(i)
}

fn remember_undelivered(undelivered: &mut VecDeque<(Asker, u64)>, asker: Asker, id: u64) {
    if undelivered.len() == MAX_UNDELIVERED {
        undelivered.pop_front();
    }
    undelivered.push_back((asker, id));
}

/// Serves again what waited early (some may wait on).
fn replay(events: &mut Events, which: impl Fn(&(Asker, XememEvent)) -> bool) {
    let (ready, later): (Vec<_>, Vec<_>) =
        core::mem::take(&mut events.early).into_iter().partition(which);
    events.early = later;
    for (asker, ev) in ready {
        serve(events, asker, ev);
    }
}

/// The host opens the event of a segment a program here made.
fn open(segid: i64) {
    let mut events = EVENTS.lock();
    events.open.entry(segid).or_default();
    events.highest = events.highest.max(segid);
    replay(&mut events, |(_, ev)| ev.segid <= segid);
}

/// The host told a program of enclave `id` where segid's event is.
fn grant(id: u32, segid: i64) {
    let mut events = EVENTS.lock();
    if !events.open.contains_key(&segid) && segid <= events.highest {
        return; // closed meanwhile
    }
    events.granted.insert((id, segid));
    replay(&mut events, |&(asker, ev)| {
        asker == Asker::Kernel(Peer::Enclave(id)) && ev.segid == segid
    });
}

/// The segment is gone: every wait on it ends with EIDRM.
fn close(segid: i64) {
    let mut events = EVENTS.lock();
    events.granted.retain(|&(_, s)| s != segid);
    if let Some(event) = events.open.remove(&segid) {
        for (waiter, id) in event.waiters {
            answer(waiter, id, segid, Err(EIDRM));
        }
    }
    replay(&mut events, |(_, ev)| ev.segid == segid);
}

/// Another enclave is gone: its waits here end (nobody would hear the answer).
pub fn peer_gone(id: u32) {
    let gone = Asker::Kernel(Peer::Enclave(id));
    let mut events = EVENTS.lock();
    for event in events.open.values_mut() {
        event.waiters.retain(|&(asker, _)| asker != gone);
    }
    events.granted.retain(|&(kernel, _)| kernel != id);
    events.early.retain(|&(asker, _)| asker != gone);
    events.undelivered.retain(|&(asker, _)| asker != gone);
}

/// Answers request `id` (0: nobody listens) with the segid as its value;
/// false if it could not be sent.
fn answer(asker: Asker, id: u64, segid: i64, result: Result<(), Errno>) -> bool {
    let result = result.map_or_else(|e| -i64::from(e.number()), |()| 0);
    if id == 0 {
        return true;
    }
    match asker {
        Asker::Here => request::answered(id, result),
        Asker::Kernel(to) => {
            let reply = XememReply { id, result, value: segid, last: 1, ..Default::default() };
            match kmsg::send(to, KMSG_XEMEM_REPLY, &reply.to_bytes()) {
                Ok(()) => true,
                Err(e) => {
                    crate::println!("xemem: an event answer to {to:?} was not sent: {e:?}");
                    false
                }
            }
        }
    }
}
