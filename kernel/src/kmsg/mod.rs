//! The one transport to other kernels (Popcorn's messaging layer): send a
//! typed message to a peer (the host, or another enclave's LWK directly),
//! or register a handler for a type. Each protocol owns its types and
//! handlers in its own file; this module knows none of them. Handlers run
//! in the message interrupt (on the enclave's first CPU, which Linux and
//! the other enclaves interrupt), or in a benchmark's polling thread, one
//! at a time per ring, and must not sleep.

mod inbox;
mod link;
mod peers;
mod ring;

use atoll_abi::{kmsg_ring_bytes, BENCH_LINE_OFFSET, HOST_VECTOR, KMSG_MAX_TYPES, KMSG_RING_SLOTS};
use atoll_abi::{KMSG_TO_HOST_OFFSET, KMSG_TO_LWK_OFFSET, LWK_VECTOR};
use spin::Once;

use hal::{cpu, shared::SharedRegion, tsc};
use link::Link;
use ring::SharedRing;

pub use lwk_logic::kmsg::SendError;

/// Who a message comes from or goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// The host module on Linux.
    Host,
    /// The LWK of the enclave with this id.
    Enclave(u32),
}

/// A received message; `data` is valid only during the handler.
pub struct Message<'a> {
    pub from: Peer,
    pub kind: u16,
    pub data: &'a [u8],
    /// The link it came on, for answers without a lookup (None: a
    /// multicast ring's).
    link: Option<&'a Link>,
}

impl Message<'_> {
    /// Sends an answer to whoever sent this, as `send` does.
    pub fn reply(&self, kind: u16, payload: &[u8]) -> Result<(), SendError> {
        match self.link {
            Some(link) => link.send(kind, payload),
            None => send(self.from, kind, payload),
        }
    }

    /// `reply` of little-endian u64s, as `send_words` does.
    pub fn reply_words(&self, kind: u16, words: &[u64]) -> Result<(), SendError> {
        let (bytes, len) = words_to_bytes(words);
        self.reply(kind, &bytes[..len])
    }

    /// The payload's `i`-th little-endian u64, 0 past its end.
    pub fn word(&self, i: usize) -> u64 {
        let bytes = self.data.get(i * 8..i * 8 + 8).unwrap_or(&[0; 8]);
        u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]))
    }
}

pub type Handler = fn(&Message);

static HANDLERS: [Once<Handler>; KMSG_MAX_TYPES] = [const { Once::new() }; KMSG_MAX_TYPES];

/// `hook` hears each enclave whose rings went: it was destroyed, and
/// nothing it was to send will come (one hook; a second is ignored).
pub fn on_peer_gone(hook: fn(u32)) {
    peers::on_gone(hook);
}

/// Handles messages of `kind` with `handler`; taking a type twice is a bug.
pub fn register(kind: u16, handler: Handler) {
    let slot = &HANDLERS[kind as usize];
    assert!(slot.get().is_none(), "kmsg: message type {kind} registered twice");
    slot.call_once(|| handler);
}

/// Runs the handler of `msg`'s type.
fn handle(msg: &Message) {
    match HANDLERS.get(msg.kind as usize).and_then(|h| h.get()) {
        Some(handler) => handler(msg),
        None => crate::println!("kmsg: {:?} sent unknown type {}", msg.from, msg.kind),
    }
}

static HOST: Once<Link> = Once::new();
/// A cache line in the shared area for benchmarks with the host.
static HOST_LINE: Once<SharedRegion> = Once::new();

/// Attaches to the rings the host made in the shared area and listens for
/// every peer's interrupt.
pub fn init_host(shared_phys: u64, host_apic_id: u32) {
    let ring_at = |offset: u64| {
        let region =
            SharedRegion::in_enclave_area(shared_phys + offset, kmsg_ring_bytes(KMSG_RING_SLOTS));
        SharedRing::new(region, KMSG_RING_SLOTS)
    };
    HOST.call_once(|| {
        Link::new(
            Peer::Host,
            ring_at(KMSG_TO_HOST_OFFSET),
            ring_at(KMSG_TO_LWK_OFFSET),
            (host_apic_id, HOST_VECTOR),
        )
    });
    HOST_LINE.call_once(|| SharedRegion::in_enclave_area(shared_phys + BENCH_LINE_OFFSET, 64));
    hal::irq::register(LWK_VECTOR, |_| poll());
}

/// Takes the host's commands about other enclaves (once threads can run).
pub fn init_peers() {
    peers::init();
}

/// Sends `payload` to `to` and interrupts it unless it polls. Never waits:
/// a full ring gives `SendError::Full`, a peer that is gone `Invalid`.
/// Safe from any CPU and context; to the host even in a crash report (it
/// takes no lock).
pub fn send(to: Peer, kind: u16, payload: &[u8]) -> Result<(), SendError> {
    match to {
        Peer::Host => HOST.get().ok_or(SendError::Invalid)?.send(kind, payload),
        Peer::Enclave(id) => {
            let peer = peers::get(id).ok_or(SendError::Invalid)?;
            peer.link().ok_or(SendError::Invalid)?.send(kind, payload)
        }
    }
}

/// Whether programs here and on `peer` may message each other (None: no
/// rings to it): always with the host, which checks users itself; with
/// another enclave only while the host says both have one owner.
pub fn programs_talk(peer: Peer) -> Option<bool> {
    match peer {
        Peer::Host => Some(true),
        Peer::Enclave(id) => peers::get(id)?.link().map(Link::programs_talk),
    }
}

/// Whether there are rings to `to` now.
pub fn is_linked(to: Peer) -> bool {
    match to {
        Peer::Host => HOST.get().is_some(),
        Peer::Enclave(id) => peers::get(id).is_some(),
    }
}

/// Says whether this LWK polls its link from `from` (which then sends no
/// interrupts), and handles what waits on it.
#[cfg(feature = "testing")]
pub fn set_polling(from: Peer, on: bool) {
    match from {
        Peer::Host => HOST.get().inspect(|l| l.set_polling(on)).map(|_| ()),
        Peer::Enclave(id) => peers::get(id).and_then(|p| p.link().map(|l| l.set_polling(on))),
    };
}

/// The APIC id of the CPU that hears our messages to `to`.
#[cfg(feature = "testing")]
pub fn notify_of(to: Peer) -> Option<u32> {
    match to {
        Peer::Host => HOST.get().map(Link::notify_apic),
        Peer::Enclave(id) => peers::get(id).and_then(|p| p.link().map(Link::notify_apic)),
    }
}

/// A cache line shared with `peer`, for benchmarks.
#[cfg(feature = "testing")]
pub fn bench_line(peer: Peer) -> Option<SharedRegion> {
    match peer {
        Peer::Host => HOST_LINE.get().copied(),
        Peer::Enclave(id) => peers::get(id).and_then(|p| p.line()),
    }
}

/// Sends `words` as little-endian u64s, the payload of most control messages.
pub fn send_words(to: Peer, kind: u16, words: &[u64]) -> Result<(), SendError> {
    let (bytes, len) = words_to_bytes(words);
    send(to, kind, &bytes[..len])
}

/// Up to 6 words as little-endian bytes, and how many bytes they take.
fn words_to_bytes(words: &[u64]) -> ([u8; 48], usize) {
    let mut bytes = [0u8; 48];
    let words = &words[..words.len().min(6)];
    for (chunk, w) in bytes.chunks_mut(8).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    (bytes, words.len() * 8)
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

/// One link held for polling in a loop (benchmarks): no lookup per poll.
#[cfg(feature = "testing")]
pub enum Poller {
    Host(&'static Link),
    Enclave(alloc::sync::Arc<peers::Lending>),
}

#[cfg(feature = "testing")]
impl Poller {
    pub fn new(from: Peer) -> Option<Self> {
        match from {
            Peer::Host => HOST.get().map(Poller::Host),
            Peer::Enclave(id) => peers::get(id).map(Poller::Enclave),
        }
    }

    fn link(&self) -> Option<&Link> {
        match self {
            Poller::Host(link) => Some(link),
            Poller::Enclave(p) => p.link(),
        }
    }

    /// Whether a message waits on this link now.
    pub fn waiting(&self) -> bool {
        self.link().is_some_and(Link::waiting)
    }

    /// Handles what waits on this link alone.
    pub fn poll(&self) {
        if let Some(link) = self.link() {
            link.drain();
        }
    }

    /// Sends on this link, as `send` does, without a lookup.
    pub fn send(&self, kind: u16, payload: &[u8]) -> Result<(), SendError> {
        self.link().ok_or(SendError::Invalid)?.send(kind, payload)
    }
}

/// Receives and handles every message waiting from every peer.
pub fn poll() {
    if let Some(host) = HOST.get() {
        host.drain();
    }
    peers::drain_all();
}
