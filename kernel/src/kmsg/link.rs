//! Both directions between this LWK and one peer: our ring to it, its ring
//! to us, and whether programs on both sides may talk.

use core::sync::atomic::{AtomicBool, Ordering};
use lwk_logic::kmsg::SendError;

use super::inbox::Inbox;
use super::outbox::Outbox;
use super::peer::Peer;
use super::ring::SharedRing;

pub struct Link {
    out: Outbox,
    inbox: Inbox,
    /// Programs here and there may message each other (same owner; the host says).
    programs_talk: AtomicBool,
}

impl Link {
    pub fn new(peer: Peer, out: SharedRing, incoming: SharedRing, notify: (u32, u8)) -> Self {
        Link {
            out: Outbox::new(peer, out, notify),
            inbox: Inbox::new(peer, incoming, 0, 1),
            programs_talk: AtomicBool::new(false),
        }
    }

    /// Whether programs on both sides may message each other.
    pub fn programs_talk(&self) -> bool {
        self.programs_talk.load(Ordering::Acquire)
    }

    pub fn set_programs_talk(&self, on: bool) {
        self.programs_talk.store(on, Ordering::Release);
    }

    /// Our ring to the peer.
    pub fn outbox(&self) -> &Outbox {
        &self.out
    }

    /// `Outbox::send` on our ring to the peer.
    #[inline]
    pub fn send(&self, kind: u16, payload: &[u8]) -> Result<(), SendError> {
        self.out.send(kind, payload)
    }

    /// `Outbox::send_words_waiting` on our ring to the peer.
    pub fn send_words_waiting(&self, kind: u16, words: &[u64]) {
        self.out.send_words_waiting(kind, words)
    }

    /// Says whether we poll this link (the peer then sends no interrupts),
    /// and handles what waits on it.
    #[cfg(feature = "testing")]
    pub fn set_polling(&self, on: bool) {
        self.inbox.set_polling(on, Some(&self.out));
    }

    /// The APIC id that hears our messages.
    #[cfg(feature = "testing")]
    pub fn notify_apic(&self) -> u32 {
        self.out.notify_apic()
    }

    /// Whether a message waits to be handled.
    #[cfg(feature = "testing")]
    pub fn waiting(&self) -> bool {
        self.inbox.waiting()
    }

    /// Hands every waiting message to its handler; answers go back on this link.
    #[inline]
    pub fn drain(&self) {
        self.inbox.drain(Some(&self.out));
    }
}
