//! The handler of each message type: each protocol registers its own.

use atoll_abi::KMSG_MAX_TYPES;
use spin::Once;

use super::message::Message;

pub type Handler = fn(&Message);

static HANDLERS: [Once<Handler>; KMSG_MAX_TYPES] = [const { Once::new() }; KMSG_MAX_TYPES];

/// Handles messages of `kind` with `handler`; taking a type twice is a bug.
pub fn register(kind: u16, handler: Handler) {
    let slot = &HANDLERS[kind as usize];
    assert!(slot.get().is_none(), "kmsg: message type {kind} registered twice");
    slot.call_once(|| handler);
}

/// Runs the handler of `msg`'s type.
pub(super) fn handle(msg: &Message) {
    match HANDLERS.get(msg.kind as usize).and_then(|h| h.get()) {
        Some(handler) => handler(msg),
        None => hal::println!("kmsg: {:?} sent unknown type {}", msg.from, msg.kind),
    }
}
