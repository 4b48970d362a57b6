//! Both directions between this LWK and one peer: our ring to it, its ring
//! to us, and how to interrupt it.

use alloc::vec;
use alloc::vec::Vec;
use atoll_abi::KMSG_MAX_LEN;
use core::sync::atomic::{AtomicBool, Ordering};
use lwk_logic::kmsg::{self as rings, Received, Receiver, SendError};

use super::ring::SharedRing;
use super::{Message, Peer};
use crate::sync::SpinLock;
use hal::apic;

struct Incoming {
    ring: SharedRing,
    receiver: Receiver,
    buf: Vec<u8>,
}

pub struct Link {
    peer: Peer,
    out: SharedRing,
    /// Who hears our messages: its APIC id and vector.
    notify: (u32, u8),
    incoming: SpinLock<Incoming>,
    /// The peer broke the ring protocol; nothing more is read from it.
    broken: AtomicBool,
}

impl Link {
    pub fn new(peer: Peer, out: SharedRing, incoming: SharedRing, notify: (u32, u8)) -> Self {
        Link {
            peer,
            out,
            notify,
            incoming: SpinLock::new(Incoming {
                ring: incoming,
                receiver: Receiver::new(0, 1),
                buf: vec![0; KMSG_MAX_LEN],
            }),
            broken: AtomicBool::new(false),
        }
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

    /// Says whether we poll this link (the peer then sends no interrupts).
    /// After turning it off, drain once more.
    #[cfg(feature = "testing")]
    pub fn set_polling(&self, on: bool) {
        let inc = self.incoming.lock();
        inc.receiver.set_polling(&inc.ring, on);
    }

    /// The APIC id that hears our messages.
    #[cfg(feature = "testing")]
    pub fn notify_apic(&self) -> u32 {
        self.notify.0
    }

    /// Hands every waiting message to `handle`.
    pub fn drain(&self, handle: fn(&Message)) {
        if self.broken.load(Ordering::Relaxed) {
            return;
        }
        let mut inc = self.incoming.lock();
        let Incoming { ring, receiver, buf } = &mut *inc;
        loop {
            match receiver.receive(ring, buf) {
                Received::Empty => return,
                Received::Message { kind, len } => {
                    handle(&Message { from: self.peer, kind, data: &buf[..len] })
                }
                Received::Broken(why) => {
                    crate::println!(
                        "kmsg: the ring from {:?} is broken ({}); ignoring it",
                        self.peer,
                        why
                    );
                    self.broken.store(true, Ordering::Relaxed);
                    return;
                }
            }
        }
    }
}
