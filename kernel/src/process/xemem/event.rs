//! The events of segments this LWK's programs made (signalled segments,
//! atoll_abi.h "XEMEM"): each one's count and waiters live here, in the
//! owner's kernel, so another enclave's signal is one message from its CPU
//! to ours (XEMEM_HOME) and the answer to its wait one back, with Linux
//! off the path. The host opens and closes them, and forwards Linux's
//! signals and waits; everyone who asks here was let through by the host,
//! which checked the segment's mode before it said the event is here.

use alloc::collections::{BTreeMap, VecDeque};
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
    /// The highest segid opened here. The host opens events in segid order,
    /// so a request above it came on another kernel's ring before its
    /// opening on the host's, and waits in `early` for it.
    highest: i64,
    early: Vec<(Asker, XememEvent)>,
}

/// Requests kept for an event not opened yet, at most (a kernel that asks
/// for far more segids than exist is answered ENOENT).
const MAX_EARLY: usize = 256;

static EVENTS: SpinLock<Events> =
    SpinLock::new(Events { open: BTreeMap::new(), highest: 0, early: Vec::new() });

/// XEMEM_HOME, in the message interrupt.
pub fn on_home(msg: &Message) {
    let Some(ev) = XememEvent::parse(msg.data) else {
        crate::println!("xemem: a malformed event request from {:?}; refused", msg.from);
        return;
    };
    match (ev.op, msg.from) {
        (XEMEM_MAKE, Peer::Host) => open(ev.segid),
        (XEMEM_REMOVE, Peer::Host) => close(ev.segid),
        (XEMEM_SIGNAL | XEMEM_WAIT | XEMEM_CANCEL, from) => ask(Asker::Kernel(from), ev),
        (op, from) => crate::println!("xemem: event request {op} from {from:?} refused"),
    }
}

/// SIGNAL, WAIT or CANCEL for an event here, from a program here or another kernel.
pub fn ask(asker: Asker, ev: XememEvent) {
    serve(&mut EVENTS.lock(), asker, ev);
}

fn serve(events: &mut Events, asker: Asker, ev: XememEvent) {
    let Some(event) = events.open.get_mut(&ev.segid) else {
        return unknown(events, asker, ev);
    };
    match ev.op {
        XEMEM_SIGNAL => {
            // To the first waiter that can still hear it, else counted.
            let handed = core::iter::from_fn(|| event.waiters.pop_front())
                .any(|(waiter, id)| answer(waiter, id, Ok(())));
            if !handed {
                event.count += 1;
            }
            answer(asker, ev.id, Ok(()));
        }
        XEMEM_WAIT if event.count > 0 => {
            event.count -= 1;
            answer(asker, ev.id, Ok(()));
        }
        XEMEM_WAIT => event.waiters.push_back((asker, ev.id)),
        _ => {
            // CANCEL: a WAIT not answered yet ends; one answered already
            // took its event, and its answer is on the way.
            if let Some(i) = event.waiters.iter().position(|&w| w == (asker, ev.cancel)) {
                event.waiters.remove(i);
                answer(asker, ev.cancel, Err(ETIMEDOUT));
            }
        }
    }
}

/// A request for an event not open here: one not opened yet waits for
/// it; one closed (or never here) gets ENOENT.
fn unknown(events: &mut Events, asker: Asker, ev: XememEvent) {
    if ev.op == XEMEM_CANCEL {
        let waiting = |&(a, e): &(Asker, XememEvent)| a == asker && e.id == ev.cancel;
        if let Some(i) = events.early.iter().position(waiting) {
            events.early.swap_remove(i);
            answer(asker, ev.cancel, Err(ETIMEDOUT));
        }
    } else if ev.segid > events.highest && events.early.len() < MAX_EARLY {
        events.early.push((asker, ev));
    } else {
        answer(asker, ev.id, Err(ENOENT));
    }
}

/// The host opens the event of a segment a program here made.
fn open(segid: i64) {
    let mut events = EVENTS.lock();
    events.open.entry(segid).or_default();
    events.highest = events.highest.max(segid);
    let (ready, later) = core::mem::take(&mut events.early)
        .into_iter()
        .partition::<Vec<_>, _>(|(_, ev)| ev.segid <= segid);
    events.early = later;
    for (asker, ev) in ready {
        serve(&mut events, asker, ev);
    }
}

/// The segment is gone: every wait on it ends with EIDRM.
fn close(segid: i64) {
    let mut events = EVENTS.lock();
    if let Some(event) = events.open.remove(&segid) {
        for (waiter, id) in event.waiters {
            answer(waiter, id, Err(EIDRM));
        }
    }
}

/// Another enclave is gone: its waits here end (nobody would hear the answer).
pub fn peer_gone(id: u32) {
    let gone = Asker::Kernel(Peer::Enclave(id));
    let mut events = EVENTS.lock();
    for event in events.open.values_mut() {
        event.waiters.retain(|&(asker, _)| asker != gone);
    }
    events.early.retain(|&(asker, _)| asker != gone);
}

/// Answers request `id` (0: nobody listens); false if it could not be delivered.
fn answer(asker: Asker, id: u64, result: Result<(), Errno>) -> bool {
    let result = result.map_or_else(|e| -i64::from(e.number()), |()| 0);
    if id == 0 {
        return true;
    }
    match asker {
        Asker::Here => request::answered(id, result),
        Asker::Kernel(to) => {
            let reply = XememReply { id, result, last: 1, ..Default::default() };
            match kmsg::send(to, KMSG_XEMEM_REPLY, &reply.to_bytes()) {
                Ok(()) => true,
                Err(e) => {
                    crate::println!("xemem: an event answer to {to:?} was lost: {e:?}");
                    false
                }
            }
        }
    }
}
