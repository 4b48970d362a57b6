//! Blocks of Linux's memory the host lends this LWK for messages: rings to
//! another enclave (PEER_ADD, PEER_REMOVE) and multicast rings it is one
//! receiver of (GROUP_JOIN, GROUP_LEAVE). On ADD or JOIN the block is
//! mapped and listed; on REMOVE or LEAVE it leaves the list, the last
//! sender or receiver using it finishes, it is unmapped on every CPU, and
//! only then does the host hear so and take it back. Commands run in a
//! thread: mapping allocates and the flush waits for the other CPUs, which
//! a message interrupt must not do.

use alloc::sync::Arc;
use atoll_abi::{kmsg_ring_bytes, KmsgGroup, KmsgPeer, LWK_VECTOR};
use atoll_abi::{KMSG_GROUP_JOIN, KMSG_GROUP_JOINED, KMSG_GROUP_LEAVE, KMSG_GROUP_LEFT};
use atoll_abi::{KMSG_PEER_ADD, KMSG_PEER_ADDED, KMSG_PEER_REMOVE, KMSG_PEER_REMOVED};
use atoll_abi::{KMSG_PEER_TRUST, KMSG_PEER_TRUSTED};

use super::handlers::register;
use super::inbox::Inbox;
use super::link::Link;
use super::message::Message;
use super::peer::Peer;
use super::ring::SharedRing;
use crate::sync::{Queue, SpinLock};
use crate::{sched, tlb};
use hal::lent::{self, Lent};
use hal::println;
use lwk_logic::errno::{Errno, EEXIST, EINVAL, ENOMEM};

/// Other enclaves (the host's limit, less us) and groups at once.
const MAX_LENT: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Peer(u32),
    Group(u32),
}

enum What {
    /// Both ways with another enclave, and a cache line for benchmarks.
    Peer {
        link: Link,
        #[cfg(feature = "testing")]
        line: Option<hal::shared::SharedRegion>,
    },
    /// One receiver of a multicast ring.
    Group(Inbox),
}

pub struct Lending {
    key: Key,
    what: What,
    lent: Lent,
}

impl Lending {
    /// The link, for a block lent for another enclave.
    pub fn link(&self) -> Option<&Link> {
        match &self.what {
            What::Peer { link, .. } => Some(link),
            What::Group(_) => None,
        }
    }

    /// The benchmarks' cache line in a peer's block.
    #[cfg(feature = "testing")]
    pub fn line(&self) -> Option<hal::shared::SharedRegion> {
        match &self.what {
            What::Peer { line, .. } => *line,
            What::Group(_) => None,
        }
    }

    fn drain(&self) {
        match &self.what {
            What::Peer { link, .. } => link.drain(),
            // Multicast comes from the host: answers go on its link.
            What::Group(inbox) => inbox.drain(super::host::outbox()),
        }
    }
}

type Table = [Option<Arc<Lending>>; MAX_LENT];

static TABLE: SpinLock<Table> = SpinLock::new([const { None }; MAX_LENT]);
static COMMANDS: Queue<Command> = Queue::new();
/// Told an enclave's id once its rings are gone (see `super::on_peer_gone`).
static PEER_GONE: spin::Once<fn(u32)> = spin::Once::new();

pub fn on_gone(hook: fn(u32)) {
    PEER_GONE.call_once(|| hook);
}

enum Command {
    Add(KmsgPeer),
    Join(KmsgGroup),
    Remove(Key),
    /// Whether programs may message the peer now (its or our owner
    /// changed), and the cookie to answer with.
    Trust(u32, bool, u64),
}

pub fn init() {
    for kind in
        [KMSG_PEER_ADD, KMSG_PEER_REMOVE, KMSG_PEER_TRUST, KMSG_GROUP_JOIN, KMSG_GROUP_LEAVE]
    {
        register(kind, post);
    }
    sched::spawn(0, "peers", || loop {
        let next = COMMANDS.pop();
        let answer = |kind, id: u32, result: Result<(), Errno>| {
            let result = result.map_or_else(|e| e.to_return(), |()| 0);
            super::host::send_words_waiting(kind, &[id.into(), result]);
        };
        match next {
            Command::Add(p) => answer(KMSG_PEER_ADDED, p.peer_id, add(&p)),
            Command::Join(g) => answer(KMSG_GROUP_JOINED, g.group, join(&g)),
            Command::Trust(id, on, cookie) => {
                if let Some(link) = get(id).as_deref().and_then(Lending::link) {
                    link.set_programs_talk(on);
                }
                super::host::send_words_waiting(KMSG_PEER_TRUSTED, &[cookie]);
            }
            Command::Remove(key) => {
                remove(key);
                let (kind, id) = match key {
                    Key::Peer(id) => (KMSG_PEER_REMOVED, id),
                    Key::Group(id) => (KMSG_GROUP_LEFT, id),
                };
                super::host::send_words_waiting(kind, &[id.into()]);
            }
        }
    });
}

/// From the message interrupt: queued for the thread.
fn post(msg: &Message) {
    if msg.from != Peer::Host {
        return; // only the host lends and takes back
    }
    let id = msg.word(0) as u32;
    let command = match msg.kind {
        KMSG_PEER_ADD => Command::Add(parse_peer(msg.data)),
        KMSG_GROUP_JOIN => Command::Join(parse_group(msg.data)),
        KMSG_PEER_REMOVE => Command::Remove(Key::Peer(id)),
        KMSG_PEER_TRUST => Command::Trust(id, msg.word(1) == 1, msg.word(2)),
        _ => Command::Remove(Key::Group(id)),
    };
    COMMANDS.push(command);
}

/// Little-endian fields of a message, zero past its end.
struct Fields<'a>(&'a [u8]);

impl Fields<'_> {
    fn u32_at(&self, i: usize) -> u32 {
        self.0.get(i..i + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64_at(&self, i: usize) -> u64 {
        u64::from(self.u32_at(i)) | u64::from(self.u32_at(i + 4)) << 32
    }
}

fn parse_peer(data: &[u8]) -> KmsgPeer {
    let f = Fields(data);
    KmsgPeer {
        peer_id: f.u32_at(0),
        notify_apic_id: f.u32_at(4),
        block_phys: f.u64_at(8),
        block_size: f.u64_at(16),
        out_offset: f.u64_at(24),
        in_offset: f.u64_at(32),
        slots: f.u32_at(40),
        programs_talk: f.u32_at(44),
        line_offset: f.u64_at(48),
    }
}

fn parse_group(data: &[u8]) -> KmsgGroup {
    let f = Fields(data);
    KmsgGroup {
        group: f.u32_at(0),
        index: f.u32_at(4),
        count: f.u32_at(8),
        slots: f.u32_at(12),
        block_phys: f.u64_at(16),
        block_size: f.u64_at(24),
    }
}

/// The link to enclave `id`, while it is listed.
pub fn get(id: u32) -> Option<Arc<Lending>> {
    find(Key::Peer(id))
}

fn find(key: Key) -> Option<Arc<Lending>> {
    TABLE.lock().iter().flatten().find(|p| p.key == key).cloned()
}

/// Hands every lent ring's waiting messages to their handlers.
pub fn drain_all() {
    let all: Table = TABLE.lock().clone();
    for p in all.iter().flatten() {
        p.drain();
    }
}

/// Maps the block the host lends for `key`.
fn map(key: Key, phys: u64, size: u64) -> Result<Lent, Errno> {
    if find(key).is_some() {
        return Err(EEXIST);
    }
    lent::map(phys, size).map_err(|e| {
        println!("kmsg: cannot map the block for {key:?}: {e:?}");
        if e == lent::LendError::NoMemory {
            ENOMEM
        } else {
            EINVAL
        }
    })
}

fn add(p: &KmsgPeer) -> Result<(), Errno> {
    let ring_bytes = kmsg_ring_bytes(p.slots) as u64;
    let fits = |offset: u64| offset.checked_add(ring_bytes).is_some_and(|end| end <= p.block_size);
    if p.peer_id == 0 || !p.slots.is_power_of_two() || !fits(p.out_offset) || !fits(p.in_offset) {
        println!("kmsg: the host lent a malformed block for enclave {}", p.peer_id);
        return Err(EINVAL);
    }
    let key = Key::Peer(p.peer_id);
    let lent = map(key, p.block_phys, p.block_size)?;
    let ring = |offset| SharedRing::new(lent.region(offset, ring_bytes as usize), p.slots);
    let link = Link::new(
        Peer::Enclave(p.peer_id),
        ring(p.out_offset),
        ring(p.in_offset),
        (p.notify_apic_id, LWK_VECTOR),
    );
    link.set_programs_talk(p.programs_talk == 1);
    #[cfg(feature = "testing")]
    let line = (p.line_offset.is_multiple_of(64)
        && p.line_offset.saturating_add(64) <= p.block_size)
        .then(|| lent.region(p.line_offset, 64));
    let what = What::Peer {
        link,
        #[cfg(feature = "testing")]
        line,
    };
    list(Lending { key, what, lent })
}

fn join(g: &KmsgGroup) -> Result<(), Errno> {
    let ring_bytes = kmsg_ring_bytes(g.slots) as u64;
    let valid = g.slots.is_power_of_two() && g.index < g.count && ring_bytes <= g.block_size;
    if !valid || g.count as usize > atoll_abi::KMSG_MAX_READERS {
        println!("kmsg: the host lent a malformed block for group {}", g.group);
        return Err(EINVAL);
    }
    let key = Key::Group(g.group);
    let lent = map(key, g.block_phys, g.block_size)?;
    let ring = SharedRing::new(lent.region(0, ring_bytes as usize), g.slots);
    let inbox = Inbox::new(Peer::Host, ring, g.index, g.count);
    list(Lending { key, what: What::Group(inbox), lent })
}

fn list(lending: Lending) -> Result<(), Errno> {
    let mut table = TABLE.lock();
    match table.iter_mut().find(|slot| slot.is_none()) {
        Some(slot) => {
            *slot = Some(Arc::new(lending));
            drop(table);
            // Messages may have come before we listened: look now, in the
            // message interrupt where handlers run.
            hal::irq::send(hal::cpu_index(), LWK_VECTOR);
            Ok(())
        }
        None => {
            drop(table);
            unmap(Arc::new(lending));
            Err(ENOMEM)
        }
    }
}

fn remove(key: Key) {
    let found = TABLE
        .lock()
        .iter_mut()
        .find(|s| s.as_ref().is_some_and(|p| p.key == key))
        .and_then(Option::take);
    match found {
        Some(lending) => unmap(lending),
        None => println!("kmsg: the host took back {key:?}'s block, which was not mapped"),
    }
    if let (Key::Peer(id), Some(hook)) = (key, PEER_GONE.get()) {
        hook(id);
    }
}

/// Waits for the senders and receivers still holding it, then unmaps.
fn unmap(mut shared: Arc<Lending>) {
    let lending = loop {
        match Arc::try_unwrap(shared) {
            Ok(lending) => break lending,
            Err(still_shared) => {
                shared = still_shared;
                sched::yield_now();
            }
        }
    };
    lending.lent.unmap();
    tlb::flush_everywhere();
}
