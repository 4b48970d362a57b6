//! Our ring to one peer and how to interrupt it: where messages to it,
//! answers included, go.

use atoll_abi::KMSG_HEAD_DATA;
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
        // A full slot's payload goes inline, without calls (no registers to
        // keep); all else, and whatever is not plain, goes to send_any.
        let full = <&[u8; KMSG_HEAD_DATA]>::try_from(payload).ok();
        if full.and_then(|full| rings::send_full(&self.out, kind, full, 1)).is_none() {
            return self.send_any(kind, payload);
        }
        self.notify_sent()
    }

    /// `send` of what `rings::send_full` did not send.
    #[inline(never)]
    fn send_any(&self, kind: u16, payload: &[u8]) -> Result<(), SendError> {
        let sent = match rings::send(&self.out, kind, payload, 1) {
            Err(SendError::Invalid) => return Err(SendError::Invalid),
            sent => sent.map(|_| ()),
        };
        self.notify_sent().and(sent)
    }

    /// Interrupts the peer unless it polls, then Ok: the interrupt is a tail
    /// call, out of line, so a send needs no stack frame (its interrupts-off
    /// section uses the stack).
    #[inline(always)]
    fn notify_sent(&self) -> Result<(), SendError> {
        if rings::needs_interrupt(&self.out, 0) {
            return self.interrupt();
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn interrupt(&self) -> Result<(), SendError> {
        apic::send_ipi(self.notify.0, self.notify.1);
        // Opaque: a result the compiler knew would be returned by the
        // caller instead, after a call rather than a jump.
        core::hint::black_box(Ok(()))
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
