//! The one transport to other kernels (Popcorn's messaging layer): send a
//! typed message to a peer (the host, or another enclave's LWK directly),
//! or register a handler for a type. Each protocol owns its types and
//! handlers in its own file; this module knows none of them. Handlers run
//! in the message interrupt (on the enclave's first CPU, which Linux and
//! the other enclaves interrupt), or in a benchmark's polling thread, one
//! at a time per ring, and must not sleep.

mod handlers;
mod host;
mod inbox;
mod link;
mod message;
mod outbox;
mod peer;
mod peers;
mod ring;
mod words;

use atoll_abi::LWK_VECTOR;
#[cfg(feature = "testing")]
use hal::shared::SharedRegion;

pub use handlers::register;
use link::Link;
pub use lwk_logic::kmsg::SendError;
pub use message::Message;
pub use peer::Peer;

/// `hook` hears each enclave whose rings went: it was destroyed, and
/// nothing it was to send will come (one hook; a second is ignored).
pub fn on_peer_gone(hook: fn(u32)) {
    peers::on_gone(hook);
}

/// Attaches to the rings the host made in the shared area and listens for
/// every peer's interrupt.
pub fn init_host(shared_phys: u64, host_apic_id: u32) {
    host::attach(shared_phys, host_apic_id);
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
        Peer::Host => host::link().ok_or(SendError::Invalid)?.send(kind, payload),
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
        Peer::Host => host::link().is_some(),
        Peer::Enclave(id) => peers::get(id).is_some(),
    }
}

/// Says whether this LWK polls its link from `from` (which then sends no
/// interrupts), and handles what waits on it.
#[cfg(feature = "testing")]
pub fn set_polling(from: Peer, on: bool) {
    match from {
        Peer::Host => host::link().inspect(|l| l.set_polling(on)).map(|_| ()),
        Peer::Enclave(id) => peers::get(id).and_then(|p| p.link().map(|l| l.set_polling(on))),
    };
}

/// The APIC id of the CPU that hears our messages to `to`.
#[cfg(feature = "testing")]
pub fn notify_of(to: Peer) -> Option<u32> {
    match to {
        Peer::Host => host::link().map(Link::notify_apic),
        Peer::Enclave(id) => peers::get(id).and_then(|p| p.link().map(Link::notify_apic)),
    }
}

/// A cache line shared with `peer`, for benchmarks.
#[cfg(feature = "testing")]
pub fn bench_line(peer: Peer) -> Option<SharedRegion> {
    match peer {
        Peer::Host => host::line(),
        Peer::Enclave(id) => peers::get(id).and_then(|p| p.line()),
    }
}

/// Sends `words` as little-endian u64s, the payload of most control messages.
pub fn send_words(to: Peer, kind: u16, words: &[u64]) -> Result<(), SendError> {
    let (bytes, len) = words::to_bytes(words);
    send(to, kind, &bytes[..len])
}

/// As `send_words`, waiting up to a second for room; says when it gave up.
pub fn send_words_waiting(to: Peer, kind: u16, words: &[u64]) {
    match to {
        Peer::Host => host::send_words_waiting(kind, words),
        Peer::Enclave(id) => {
            let peer = peers::get(id);
            match peer.as_ref().and_then(|p| p.link()) {
                Some(link) => link.send_words_waiting(kind, words),
                None => hal::println!("kmsg: message {kind} to {to:?} not sent: no link"),
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
            Peer::Host => host::link().map(Poller::Host),
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
    if let Some(host) = host::link() {
        host.drain();
    }
    peers::drain_all();
}
