//! One ring this LWK receives from (alone, or as one of a multicast
//! ring's receivers), with its own place in it and a buffer to copy each
//! message into. A sender that breaks the protocol is not read again.

use alloc::vec;
use alloc::vec::Vec;
use atoll_abi::KMSG_MAX_LEN;
use core::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use lwk_logic::kmsg::{self as rings, Received, Receiver};

use super::link::Link;
use super::ring::SharedRing;
use super::{Message, Peer};
use crate::sync::SpinLock;

struct State {
    receiver: Receiver,
    buf: Vec<u8>,
}

pub struct Inbox {
    from: Peer,
    ring: SharedRing,
    state: SpinLock<State>,
    /// The ticket the receiver expects next: while its slot is not
    /// stamped, nothing waits, and a poll need not take the lock.
    expected: AtomicU32,
    broken: AtomicBool,
}

impl Inbox {
    /// Receiver `index` of `count` of `ring`, whose messages come from `from`.
    pub fn new(from: Peer, ring: SharedRing, index: u32, count: u32) -> Self {
        let receiver = Receiver::new(index, count);
        Inbox {
            from,
            ring,
            expected: AtomicU32::new(receiver.next_ticket()),
            state: SpinLock::new(State { receiver, buf: vec![0; KMSG_MAX_LEN] }),
            broken: AtomicBool::new(false),
        }
    }

    /// Says whether we poll this ring (its sender then sends no interrupts).
    /// After turning it off, drain once more.
    #[cfg(feature = "testing")]
    pub fn set_polling(&self, on: bool) {
        self.state.lock().receiver.set_polling(&self.ring, on);
    }

    /// Hands every waiting message to `handle`; `link`, if any, is the
    /// one answers go back on.
    pub fn drain(&self, handle: fn(&Message), link: Option<&Link>) {
        if self.broken.load(Ordering::Relaxed)
            || !rings::is_ready(&self.ring, self.expected.load(Ordering::Acquire))
        {
            return;
        }
        let mut s = self.state.lock();
        let State { receiver, buf } = &mut *s;
        loop {
            let received = receiver.receive(&self.ring, buf);
            self.expected.store(receiver.next_ticket(), Ordering::Release);
            match received {
                Received::Empty => return,
                Received::Message { kind, len } => {
                    handle(&Message { from: self.from, kind, data: &buf[..len], link })
                }
                Received::Broken(why) => {
                    crate::println!(
                        "kmsg: the ring from {:?} is broken ({}); ignoring it",
                        self.from,
                        why
                    );
                    self.broken.store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
    }
}
