//! Both directions between this LWK and one peer: our ring to it, its ring
//! to us, and how to interrupt it.

use core::sync::atomic::{AtomicBool, Ordering};
use lwk_logic::kmsg::{self as rings, SendError};

use super::inbox::Inbox;
use super::ring::SharedRing;
use super::Peer;
use hal::apic;

pub struct Link {
    out: SharedRing,
    /// Who hears our messages: its APIC id and vector.
    notify: (u32, u8),
    inbox: Inbox,
    /// Programs here and there may message each other (same owner; the host says).
    programs_talk: AtomicBool,
}

impl Link {
    pub fn new(peer: Peer, out: SharedRing, incoming: SharedRing, notify: (u32, u8)) -> Self {
        let programs_talk = AtomicBool::new(false);
        Link { out, notify, inbox: Inbox::new(peer, incoming, 0, 1), programs_talk }
    }

    /// Whether programs on both sides may message each other.
    pub fn programs_talk(&self) -> bool {
        self.programs_talk.load(Ordering::Acquire)
    }

    pub fn set_programs_talk(&self, on: bool) {
        self.programs_talk.store(on, Ordering::Release);
    }

    /// Sends and interrupts the peer unless it polls (no lock taken). A
    /// full ring interrupts it too: a receiver that missed a notification
    /// (it attached after the message came) would otherwise never drain it.
    pub fn send(&self, kind: u16, payload: &[u8]) -> Result<(), SendError> {
        let sent = rings::send(&self.out, kind, payload, 1);
        if sent != Err(SendError::Invalid) && rings::needs_interrupt(&self.out, 0) {
            apic::send_ipi(self.notify.0, self.notify.1);
        }
        sent.map(|_| ())
    }

    /// Says whether we poll this link (the peer then sends no interrupts),
    /// and handles what waits on it.
    #[cfg(feature = "testing")]
    pub fn set_polling(&self, on: bool) {
        self.inbox.set_polling(on, Some(self));
    }

    /// The APIC id that hears our messages.
    #[cfg(feature = "testing")]
    pub fn notify_apic(&self) -> u32 {
        self.notify.0
    }

    /// Whether a message waits to be handled.
    #[cfg(feature = "testing")]
    pub fn waiting(&self) -> bool {
        self.inbox.waiting()
    }

    /// Hands every waiting message to its handler; answers go back on this link.
    #[inline]
    pub fn drain(&self) {
        self.inbox.drain(Some(self));
    }
}
