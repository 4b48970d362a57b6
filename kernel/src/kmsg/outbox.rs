//! Our ring to one peer and how to interrupt it: where messages to it,
//! answers included, go.

use lwk_logic::kmsg::{self as rings, SendError};

use super::peer::Peer;
use super::ring::SharedRing;
use super::words;
use hal::{apic, cpu, tsc};

pub struct Outbox {
    peer: Peer,
    out: SharedRing,
    /// Who hears our messages: its APIC id and vector.
    notify: (u32, u8),
}

impl Outbox {
    pub fn new(peer: Peer, out: SharedRing, notify: (u32, u8)) -> Self {
        Outbox { peer, out, notify }
    }

    /// Sends and interrupts the peer unless it polls (no lock taken). A
    /// full ring interrupts it too: a receiver that missed a notification
    /// (it attached after the message came) would otherwise never drain it.
    #[inline]
    pub fn send(&self, kind: u16, payload: &[u8]) -> Result<(), SendError> {
        let sent = match rings::send(&self.out, kind, payload, 1) {
            Err(SendError::Invalid) => return Err(SendError::Invalid),
            sent => sent.map(|_| ()),
        };
        if rings::needs_interrupt(&self.out, 0) {
            apic::send_ipi(self.notify.0, self.notify.1);
        }
        sent
    }

    /// `send` of little-endian u64s, waiting up to a second for room; says
    /// when it gave up.
    pub fn send_words_waiting(&self, kind: u16, words: &[u64]) {
        let (bytes, len) = words::to_bytes(words);
        let deadline = cpu::rdtsc() + tsc::ns_to_cycles(1_000_000_000);
        loop {
            match self.send(kind, &bytes[..len]) {
                Err(SendError::Full) if cpu::rdtsc() < deadline => cpu::relax(),
                Ok(()) => return,
                Err(e) => {
                    hal::println!("kmsg: message {kind} to {:?} not sent: {e:?}", self.peer);
                    return;
                }
            }
        }
    }

    /// The APIC id that hears our messages.
    #[cfg(feature = "testing")]
    pub fn notify_apic(&self) -> u32 {
        self.notify.0
    }
}
