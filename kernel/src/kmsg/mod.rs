//! The one transport to other kernels (Popcorn's messaging layer): send a
//! typed message to a peer, or register a handler for a type. Each
//! protocol owns its types and handlers in its own file; this module knows
//! none of them. Handlers run in the message interrupt (on the enclave's
//! first CPU, which Linux interrupts) and must not sleep.

mod ring;

use alloc::vec;
use alloc::vec::Vec;
use atoll_abi::{kmsg_ring_bytes, HOST_VECTOR, KMSG_MAX_LEN, KMSG_MAX_TYPES, KMSG_RING_SLOTS};
use atoll_abi::{KMSG_TO_HOST_OFFSET, KMSG_TO_LWK_OFFSET, LWK_VECTOR};
use core::sync::atomic::{AtomicBool, Ordering};
use lwk_logic::kmsg::{self as rings, Received, Receiver};
use spin::Once;

use crate::sync::SpinLock;
use hal::{apic, cpu, shared::SharedRegion, tsc};
use ring::SharedRing;

pub use lwk_logic::kmsg::SendError;

/// Who a message comes from or goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// The host module on Linux.
    Host,
}

/// A received message; `data` is valid only during the handler.
pub struct Message<'a> {
    pub from: Peer,
    pub kind: u16,
    pub data: &'a [u8],
}

impl Message<'_> {
    /// The payload's `i`-th little-endian u64, 0 past its end.
    pub fn word(&self, i: usize) -> u64 {
        let bytes = self.data.get(i * 8..i * 8 + 8).unwrap_or(&[0; 8]);
        u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]))
    }
}

pub type Handler = fn(&Message);

static HANDLERS: [Once<Handler>; KMSG_MAX_TYPES] = [const { Once::new() }; KMSG_MAX_TYPES];

/// Handles messages of `kind` with `handler`; taking a type twice is a bug.
pub fn register(kind: u16, handler: Handler) {
    let slot = &HANDLERS[kind as usize];
    assert!(slot.get().is_none(), "kmsg: message type {kind} registered twice");
    slot.call_once(|| handler);
}

struct Incoming {
    ring: SharedRing,
    receiver: Receiver,
    buf: Vec<u8>,
}

/// Both directions between this LWK and one peer.
struct Link {
    peer: Peer,
    out: SharedRing,
    /// Who hears our messages: its APIC id and vector.
    notify: (u32, u8),
    incoming: SpinLock<Incoming>,
    /// The peer broke the ring protocol; nothing more is read from it.
    broken: AtomicBool,
}

static HOST: Once<Link> = Once::new();

fn link(peer: Peer) -> Option<&'static Link> {
    match peer {
        Peer::Host => HOST.get(),
    }
}

/// Attaches to the rings the host made in the shared area and listens.
pub fn init_host(shared_phys: u64, host_apic_id: u32) {
    let ring_at = |offset: u64| {
        let region =
            SharedRegion::in_enclave_area(shared_phys + offset, kmsg_ring_bytes(KMSG_RING_SLOTS));
        SharedRing::new(region, KMSG_RING_SLOTS)
    };
    HOST.call_once(|| Link {
        peer: Peer::Host,
        out: ring_at(KMSG_TO_HOST_OFFSET),
        notify: (host_apic_id, HOST_VECTOR),
        incoming: SpinLock::new(Incoming {
            ring: ring_at(KMSG_TO_LWK_OFFSET),
            receiver: Receiver::new(0, 1),
            buf: vec![0; KMSG_MAX_LEN],
        }),
        broken: AtomicBool::new(false),
    });
    hal::irq::register(LWK_VECTOR, |_| poll());
}

/// Sends `payload` to `to` and interrupts it unless it polls. Never waits:
/// a full ring gives `SendError::Full`. Safe from any CPU and context,
/// even a crash report (it takes no lock).
pub fn send(to: Peer, kind: u16, payload: &[u8]) -> Result<(), SendError> {
    let link = link(to).ok_or(SendError::Invalid)?;
    rings::send(&link.out, kind, payload, 1)?;
    if rings::needs_interrupt(&link.out, 0) {
        apic::send_ipi(link.notify.0, link.notify.1);
    }
    Ok(())
}

/// Sends `words` as little-endian u64s, the payload of most control messages.
pub fn send_words(to: Peer, kind: u16, words: &[u64]) -> Result<(), SendError> {
    let mut bytes = [0u8; 48];
    let words = &words[..words.len().min(6)];
    for (chunk, w) in bytes.chunks_mut(8).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    send(to, kind, &bytes[..words.len() * 8])
}

/// As `send_words`, waiting up to a second for room; says when it gave up.
pub fn send_words_waiting(to: Peer, kind: u16, words: &[u64]) {
    let deadline = cpu::rdtsc() + tsc::ns_to_cycles(1_000_000_000);
    loop {
        match send_words(to, kind, words) {
            Err(SendError::Full) if cpu::rdtsc() < deadline => cpu::relax(),
            Ok(()) => return,
            Err(e) => {
                crate::println!("kmsg: message {kind} to {to:?} not sent: {e:?}");
                return;
            }
        }
    }
}

/// Receives and handles every message waiting from every peer.
pub fn poll() {
    for link in [HOST.get()].into_iter().flatten() {
        drain(link);
    }
}

fn drain(link: &Link) {
    if link.broken.load(Ordering::Relaxed) {
        return;
    }
    let mut inc = link.incoming.lock();
    let Incoming { ring, receiver, buf } = &mut *inc;
    loop {
        match receiver.receive(ring, buf) {
            Received::Empty => return,
            Received::Message { kind, len } => {
                let msg = Message { from: link.peer, kind, data: &buf[..len] };
                match HANDLERS.get(kind as usize).and_then(|h| h.get()) {
                    Some(handler) => handler(&msg),
                    None => crate::println!("kmsg: {:?} sent unknown type {}", link.peer, kind),
                }
            }
            Received::Broken(why) => {
                crate::println!(
                    "kmsg: the ring from {:?} is broken ({}); ignoring it",
                    link.peer,
                    why
                );
                link.broken.store(true, Ordering::Relaxed);
                return;
            }
        }
    }
}
