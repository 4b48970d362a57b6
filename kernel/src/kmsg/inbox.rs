//! One ring this LWK receives from (alone, or as one of a multicast
//! ring's receivers), with its own place in it and a buffer to copy each
//! message into. A sender that breaks the protocol is not read again.

use alloc::boxed::Box;
use alloc::vec;
use atoll_abi::KMSG_MAX_LEN;
use core::sync::atomic::{fence, AtomicBool, AtomicU32, Ordering};
use lwk_logic::kmsg::{self as rings, Ready, Received, Receiver};
use spin::mutex::SpinMutex;

use super::handlers::handle;
use super::message::Message;
use super::outbox::Outbox;
use super::peer::Peer;
use super::ring::{SharedRing, Slot};

struct State {
    receiver: Receiver,
    /// Of known size: no check of a message's length against it at run time.
    buf: Box<[u8; KMSG_MAX_LEN]>,
}

/// A zeroed message buffer, made on the heap (never on the stack).
fn buffer() -> Box<[u8; KMSG_MAX_LEN]> {
    match vec![0; KMSG_MAX_LEN].into_boxed_slice().try_into() {
        Ok(buf) => buf,
        Err(_) => unreachable!("a vector of KMSG_MAX_LEN bytes"),
    }
}

pub struct Inbox {
    from: Peer,
    ring: SharedRing,
    /// Held by whoever drains now. A drain never waits for it: one that
    /// finds it taken leaves the ring to its holder, who looks again after
    /// letting go. So the message interrupt and a polling thread on the
    /// same CPU cannot deadlock, and neither masks interrupts for it.
    state: SpinMutex<State>,
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
            state: SpinMutex::new(State { receiver, buf: buffer() }),
            broken: AtomicBool::new(false),
        }
    }

    /// Says whether we poll this ring (its sender then sends no interrupts),
    /// then drains it, as every holder of the receiver does after letting
    /// go: a message may have come while the bit was still set, or its
    /// interrupt's drain found the receiver taken here.
    #[cfg(feature = "testing")]
    pub fn set_polling(&self, on: bool, link: Option<&Outbox>) {
        // Waiting here cannot deadlock: only threads wait (cooperative ones,
        // which no poller holding it gives way to), and a message interrupt
        // on this CPU only tries the lock.
        self.state.lock().receiver.set_polling(&self.ring, on);
        self.drain(link);
    }

    /// Whether a message waits (its first slot is stamped).
    #[cfg(feature = "testing")]
    #[inline]
    pub fn waiting(&self) -> bool {
        self.ready().is_some()
    }

    /// The message that waits, if one does.
    #[inline(always)]
    fn ready(&self) -> Option<Ready<Slot>> {
        if self.broken.load(Ordering::Relaxed) {
            return None;
        }
        rings::ready(&self.ring, self.expected.load(Ordering::Acquire))
    }

    /// Hands every waiting message to the handler of its type; `link`, if
    /// any, is the one answers go back on.
    #[inline]
    pub fn drain(&self, link: Option<&Outbox>) {
        while let Some(ready) = self.ready() {
            let Some(mut s) = self.state.try_lock() else {
                return; // its holder looks again after letting go
            };
            self.drain_locked(&mut s, link, ready);
            drop(s);
            // A message that came after the holder's last look, while a
            // drain that saw it found the lock taken: look again. SeqCst:
            // the release above is visible before this look reads the ring.
            fence(Ordering::SeqCst);
        }
    }

    /// Receives from `ready`, the message seen written before the lock.
    fn drain_locked(&self, s: &mut State, link: Option<&Outbox>, ready: Ready<Slot>) {
        let State { receiver, buf } = s;
        let first = receiver.receive_ready(&self.ring, &mut buf[..], ready);
        if self.handled(first, receiver, buf, link) {
            while self.handled(receiver.receive(&self.ring, &mut buf[..]), receiver, buf, link) {}
        }
    }

    /// Hands what was received to its handler; false when nothing more is.
    #[inline(always)]
    fn handled(
        &self,
        received: Received,
        receiver: &Receiver,
        buf: &[u8; KMSG_MAX_LEN],
        link: Option<&Outbox>,
    ) -> bool {
        self.expected.store(receiver.next_ticket(), Ordering::Release);
        match received {
            Received::Empty => false,
            Received::Message { kind, len } => {
                handle(&Message { from: self.from, kind, data: &buf[..len], link });
                true
            }
            Received::Broken(why) => {
                hal::println!(
                    "kmsg: the ring from {:?} is broken ({}); ignoring it",
                    self.from,
                    why
                );
                self.broken.store(true, Ordering::Relaxed);
                false
            }
        }
    }
}
