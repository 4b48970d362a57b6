//! Rings to other enclaves, lent by the host (PEER_ADD and PEER_REMOVE in
//! atoll_abi.h). On ADD the block is mapped and the link listed; on REMOVE
//! it leaves the list, the last sender using it finishes, it is unmapped on
//! every CPU, and only then does the host hear PEER_REMOVED and take it
//! back. Commands run in a thread: mapping allocates and the flush waits
//! for the other CPUs, which a message interrupt must not do.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use atoll_abi::{kmsg_ring_bytes, KmsgPeer, LWK_VECTOR};
use atoll_abi::{KMSG_PEER_ADD, KMSG_PEER_ADDED, KMSG_PEER_REMOVE, KMSG_PEER_REMOVED};
use core::mem::size_of;

use super::link::Link;
use super::ring::SharedRing;
use super::{Message, Peer};
use crate::sync::{SpinLock, WaitQueue};
use crate::{println, sched, tlb};
use hal::lent::{self, Lent};
use hal::shared::SharedRegion;
use lwk_logic::errno::{Errno, EEXIST, EINVAL, ENOMEM};

/// At most this many other enclaves at once (the host's limit, less us).
const MAX_PEERS: usize = 16;

pub struct PeerLink {
    pub id: u32,
    pub link: Link,
    /// A cache line in the block both sides may bounce (benchmarks).
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    pub line: Option<SharedRegion>,
    lent: Lent,
}

type Table = [Option<Arc<PeerLink>>; MAX_PEERS];

static TABLE: SpinLock<Table> = SpinLock::new([const { None }; MAX_PEERS]);
static COMMANDS: SpinLock<VecDeque<Command>> = SpinLock::new(VecDeque::new());
static ARRIVED: WaitQueue = WaitQueue::new();

enum Command {
    Add(KmsgPeer),
    Remove(u32),
}

pub fn init() {
    super::register(KMSG_PEER_ADD, post);
    super::register(KMSG_PEER_REMOVE, post);
    sched::spawn(0, "peers", || loop {
        ARRIVED.wait_until(|| !COMMANDS.lock().is_empty());
        let next = COMMANDS.lock().pop_front();
        match next {
            Some(Command::Add(p)) => {
                let result = add(&p).map_or_else(|e| e.to_return(), |()| 0);
                super::send_words_waiting(Peer::Host, KMSG_PEER_ADDED, &[p.peer_id.into(), result]);
            }
            Some(Command::Remove(id)) => {
                remove(id);
                super::send_words_waiting(Peer::Host, KMSG_PEER_REMOVED, &[id.into()]);
            }
            None => {}
        }
    });
}

/// From the message interrupt: queued for the thread.
fn post(msg: &Message) {
    if msg.from != Peer::Host {
        return; // only the host lends and takes back
    }
    let command = if msg.kind == KMSG_PEER_ADD {
        Command::Add(parse(msg.data))
    } else {
        Command::Remove(msg.word(0) as u32)
    };
    COMMANDS.lock().push_back(command);
    ARRIVED.wake_one(true);
}

fn parse(data: &[u8]) -> KmsgPeer {
    let mut b = [0u8; size_of::<KmsgPeer>()];
    let n = data.len().min(b.len());
    b[..n].copy_from_slice(&data[..n]);
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or_default());
    let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
    KmsgPeer {
        peer_id: u32_at(0),
        notify_apic_id: u32_at(4),
        block_phys: u64_at(8),
        block_size: u64_at(16),
        out_offset: u64_at(24),
        in_offset: u64_at(32),
        slots: u32_at(40),
        pad0: 0,
        line_offset: u64_at(48),
    }
}

/// The link to enclave `id`, while it is listed.
pub fn get(id: u32) -> Option<Arc<PeerLink>> {
    TABLE.lock().iter().flatten().find(|p| p.id == id).cloned()
}

/// Hands every peer's waiting messages to `handle`.
pub fn drain_all(handle: fn(&Message)) {
    let links: Table = TABLE.lock().clone();
    for p in links.iter().flatten() {
        p.link.drain(handle);
    }
}

fn add(p: &KmsgPeer) -> Result<(), Errno> {
    let ring_bytes = kmsg_ring_bytes(p.slots) as u64;
    let fits = |offset: u64| offset.checked_add(ring_bytes).is_some_and(|end| end <= p.block_size);
    if p.peer_id == 0 || !p.slots.is_power_of_two() || !fits(p.out_offset) || !fits(p.in_offset) {
        println!("kmsg: the host lent a malformed block for enclave {}", p.peer_id);
        return Err(EINVAL);
    }
    if get(p.peer_id).is_some() {
        return Err(EEXIST);
    }
    let lent = lent::map(p.block_phys, p.block_size).map_err(|e| {
        println!("kmsg: cannot map the block for enclave {}: {:?}", p.peer_id, e);
        if e == lent::LendError::NoMemory {
            ENOMEM
        } else {
            EINVAL
        }
    })?;
    let ring = |offset| SharedRing::new(lent.region(offset, ring_bytes as usize), p.slots);
    let link = Link::new(
        Peer::Enclave(p.peer_id),
        ring(p.out_offset),
        ring(p.in_offset),
        (p.notify_apic_id, LWK_VECTOR),
    );
    let line = (p.line_offset.is_multiple_of(64)
        && p.line_offset.saturating_add(64) <= p.block_size)
        .then(|| lent.region(p.line_offset, 64));
    let peer = Arc::new(PeerLink { id: p.peer_id, link, line, lent });
    let mut table = TABLE.lock();
    match table.iter_mut().find(|slot| slot.is_none()) {
        Some(slot) => {
            *slot = Some(peer);
            drop(table);
            // The peer may have sent before we listened: look now, in the
            // message interrupt where handlers run.
            hal::irq::send(hal::cpu_index(), LWK_VECTOR);
            Ok(())
        }
        None => {
            drop(table);
            unmap(peer);
            Err(ENOMEM)
        }
    }
}

fn remove(id: u32) {
    let peer = TABLE
        .lock()
        .iter_mut()
        .find(|s| s.as_ref().is_some_and(|p| p.id == id))
        .and_then(Option::take);
    match peer {
        Some(peer) => unmap(peer),
        None => println!("kmsg: the host took back enclave {id}'s rings, which were not mapped"),
    }
}

/// Waits for the senders and receivers still holding it, then unmaps.
fn unmap(mut peer: Arc<PeerLink>) {
    let link = loop {
        match Arc::try_unwrap(peer) {
            Ok(link) => break link,
            Err(still_shared) => {
                peer = still_shared;
                sched::yield_now();
            }
        }
    };
    link.lent.unmap();
    tlb::flush_everywhere();
}
