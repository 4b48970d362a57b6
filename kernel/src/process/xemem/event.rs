//! The events of segments this LWK's programs made (signalled segments,
//! atoll_abi.h "XEMEM"), kept here, in the owner's kernel
//! (`lwk_logic::xemem_events`), so another enclave's signal is one message
//! from its CPU to ours (XEMEM_HOME) and the answer to its wait one back,
//! with Linux off the path. The host opens and closes them, forwards
//! Linux's signals and waits, and grants each other enclave its use (GET)
//! when it tells that enclave's program where the event is, after checking
//! the segment's mode.

use atoll_abi::*;
use lwk_logic::errno::Errno;
use lwk_logic::xemem_events::{self, Events};

use crate::kmsg::{self, Message, Peer};
use crate::sync::SpinLock;
use spin::Once;

/// Who asked: a program here (answered through `ANSWER_HERE`) or another kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asker {
    Here,
    Kernel(Peer),
}

impl xemem_events::Asker for Asker {
    fn enclave(&self) -> Option<u32> {
        match self {
            Asker::Kernel(Peer::Enclave(id)) => Some(*id),
            _ => None,
        }
    }
}

static EVENTS: SpinLock<Events<Asker>> = SpinLock::new(Events::new());
/// How a program here hears its answer (request.rs, which sent the request).
static ANSWER_HERE: Once<fn(u64, i64) -> bool> = Once::new();

/// Sets how answers to programs here are given, once at start.
pub fn answer_here_with(answered: fn(u64, i64) -> bool) {
    ANSWER_HERE.call_once(|| answered);
}

/// XEMEM_HOME, in the message interrupt.
pub fn on_home(msg: &Message) {
    let Some(ev) = XememEvent::parse(msg.data) else {
        hal::println!("xemem: a malformed event request from {:?}; refused", msg.from);
        return;
    };
    let mut events = EVENTS.lock();
    match (ev.op, msg.from) {
        (XEMEM_MAKE, Peer::Host) => events.open(ev.segid, &mut answer),
        (XEMEM_REMOVE, Peer::Host) => events.close(ev.segid, &mut answer),
        (XEMEM_GET, Peer::Host) => events.grant(ev.kernel, ev.segid, &mut answer),
        (XEMEM_WAIT, from) if ev.id == 0 => {
            hal::println!("xemem: a wait nobody would hear from {from:?}; refused");
        }
        (XEMEM_SIGNAL | XEMEM_WAIT | XEMEM_CANCEL, from) => {
            events.serve(Asker::Kernel(from), ev, &mut answer)
        }
        (op, from) => hal::println!("xemem: event request {op} from {from:?} refused"),
    }
}

/// SIGNAL, WAIT or CANCEL for an event here, from a program here.
pub fn ask(ev: XememEvent) {
    EVENTS.lock().serve(Asker::Here, ev, &mut answer);
}

/// Another enclave is gone: its waits here end (nobody would hear the answer).
pub fn peer_gone(id: u32) {
    EVENTS.lock().forget(Asker::Kernel(Peer::Enclave(id)));
}

/// Answers request `id` (0: nobody listens) with the segid as its value;
/// false if it could not be sent.
fn answer(asker: Asker, id: u64, segid: i64, result: Result<(), Errno>) -> bool {
    let result = result.map_or_else(|e| -i64::from(e.number()), |()| 0);
    if id == 0 {
        return true;
    }
    match asker {
        Asker::Here => ANSWER_HERE.get().is_some_and(|answered| answered(id, result)),
        Asker::Kernel(to) => {
            let reply = XememReply { id, result, value: segid, last: 1, ..Default::default() };
            match kmsg::send(to, KMSG_XEMEM_REPLY, &reply.to_bytes()) {
                Ok(()) => true,
                Err(e) => {
                    hal::println!("xemem: an event answer to {to:?} was not sent: {e:?}");
                    false
                }
            }
        }
    }
}
