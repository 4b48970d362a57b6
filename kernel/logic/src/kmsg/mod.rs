//! The inter-kernel message ring (Popcorn's design, laid out in
//! `atoll_abi.h` under "Inter-kernel messages"): 64-byte slots, a message
//! claims its slots by moving `head` with compare-and-swap, writes them,
//! and sets its first slot's stamp last; receivers check everything they
//! read, so a sender that writes garbage breaks only its own ring.
//!
//! The ring lives in memory another kernel writes too; [`RingMemory`] is how
//! the caller hands it in (shared memory in the LWK, plain atomics in the
//! tests). The host module implements the same protocol in C (`host/kmsg_ring.c`).

use atoll_abi::{KMSG_HEAD_DATA, KMSG_MAX_LEN, KMSG_MAX_READERS, KMSG_MAX_TYPES, KMSG_SLOT_DATA};
use core::sync::atomic::{AtomicU32, Ordering};

#[cfg(test)]
mod tests;

/// One ring's words and slots.
pub trait RingMemory {
    /// One slot of the ring.
    type Slot<'a>: RingSlot
    where
        Self: 'a;
    /// Slots in the ring: a power of two, from the ring's maker (never read
    /// back from the shared header, which the other side could change).
    fn slots(&self) -> u32;
    /// Next ticket a sender claims.
    fn head(&self) -> &AtomicU32;
    /// Tickets below it have been read by every receiver.
    fn tail(&self) -> &AtomicU32;
    /// The senders' last look at `tail`, in the sending kernel's own memory
    /// (0 for a new ring): a sender reads the shared `tail` (a cache line the
    /// receiver writes) only when this says the ring has no room. Senders
    /// racing may store an older look over a newer one: it lags, and a
    /// lagging look only costs one more read of `tail`.
    fn tail_seen(&self) -> &AtomicU32;
    /// Bit r set: receiver r polls and needs no interrupt.
    fn polling(&self) -> &AtomicU32;
    /// The slot `ticket` falls in: slot `ticket` modulo [`RingMemory::slots`].
    fn slot(&self, ticket: u32) -> Self::Slot<'_>;
}

/// One slot of a ring.
pub trait RingSlot {
    /// Its stamp: its ticket + 1 once written.
    fn stamp(&self) -> &AtomicU32;
    /// Receivers yet to read the message starting here.
    fn readers(&self) -> &AtomicU32;
    /// Copies `src` into its data bytes from `offset`.
    fn write_data(&self, offset: usize, src: &[u8]);
    /// Copies its data bytes from `offset` into `dst`.
    fn read_data(&self, offset: usize, dst: &mut [u8]);
}

/// Why a message was not sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The ring has no room now: nothing was written; try again later.
    Full,
    /// Longer than `KMSG_MAX_LEN`, a type outside 1..`KMSG_MAX_TYPES`, or
    /// more readers than a ring can count.
    Invalid,
}

/// What a receiver found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// Nothing (or a message still being written).
    Empty,
    /// A message of this type whose `len` payload bytes are in the buffer.
    Message {
        /// Its type.
        kind: u16,
        /// Payload bytes.
        len: usize,
    },
    /// The ring breaks the protocol; its receiver should give it up.
    Broken(&'static str),
}

/// Slots a payload of `len` bytes takes.
pub const fn slots_for(len: usize) -> u32 {
    if len <= KMSG_HEAD_DATA {
        1
    } else {
        1 + (len - KMSG_HEAD_DATA).div_ceil(KMSG_SLOT_DATA) as u32
    }
}

/// Whether a message's head (a [`KmsgHead`](atoll_abi::KmsgHead) as a
/// little-endian u64: type, slots << 16, len << 32) says one slot and at
/// most `KMSG_HEAD_DATA` bytes, in one compare: `(len << 16 | slots) - 1`
/// rotated right by 16 is `(slots - 1) << 48 | len` when slots >= 1, and
/// has its top 16 bits set when slots is 0; so it is at most 48 exactly
/// when slots is 1 and len at most 48.
#[inline(always)]
pub const fn one_slot(head: u64) -> bool {
    one_slot_len(head).is_some()
}

/// `one_slot`, giving the message's length (then at most `KMSG_HEAD_DATA`,
/// which the compiler sees: no bounds check on it later).
#[inline(always)]
const fn one_slot_len(head: u64) -> Option<usize> {
    let len = (head >> 16).wrapping_sub(1).rotate_right(16);
    if len <= KMSG_HEAD_DATA as u64 {
        Some(len as usize)
    } else {
        None
    }
}

/// Sends one message read by `readers` receivers (1 for unicast); returns
/// the message's ticket. Safe to call from several CPUs at once.
#[inline]
pub fn send<M: RingMemory>(
    ring: &M,
    kind: u16,
    payload: &[u8],
    readers: u32,
) -> Result<u32, SendError> {
    let valid = payload.len() <= KMSG_MAX_LEN
        && (1..KMSG_MAX_TYPES).contains(&(kind as usize))
        && (1..=KMSG_MAX_READERS as u32).contains(&readers);
    if !valid {
        return Err(SendError::Invalid);
    }
    if payload.len() > KMSG_HEAD_DATA {
        return send_slots(ring, kind, payload, readers);
    }
    // One slot (most messages).
    let ticket = claim(ring, 1)?;
    publish_one(&ring.slot(ticket), ticket, kind, readers, payload.len(), |slot| {
        match <&[u8; KMSG_HEAD_DATA]>::try_from(payload) {
            // A full slot: a copy of known size, a few moves.
            Ok(full) => slot.write_data(8, full),
            Err(_) => write_short(slot, payload),
        }
    });
    Ok(ticket)
}

/// Fills the claimed slot of a one-slot message: readers, head, the
/// payload (`write`), then its stamp.
#[inline(always)]
fn publish_one<S: RingSlot>(
    slot: &S,
    ticket: u32,
    kind: u16,
    readers: u32,
    len: usize,
    write: impl FnOnce(&S),
) {
    slot.readers().store(readers, Ordering::Relaxed);
    slot.write_data(0, &encode_head(kind, 1, len as u32));
    write(slot);
    // Last: everything above is visible before a receiver sees the stamp.
    slot.stamp().store(ticket.wrapping_add(1), Ordering::Release);
}

/// `send` of a full slot's payload (a copy of known size: a few moves)
/// when it is valid and the last look at tail says there is room; None,
/// nothing done, if not: then `send` sends it or says why not. Inline and
/// without calls, so its callers keep no registers for it.
#[inline(always)]
pub fn send_full<M: RingMemory>(
    ring: &M,
    kind: u16,
    payload: &[u8; KMSG_HEAD_DATA],
    readers: u32,
) -> Option<u32> {
    let valid = (1..KMSG_MAX_TYPES).contains(&(kind as usize))
        && (1..=KMSG_MAX_READERS as u32).contains(&readers);
    if !valid {
        return None;
    }
    let ticket = claim(ring, 1).ok()?;
    publish_one(&ring.slot(ticket), ticket, kind, readers, KMSG_HEAD_DATA, |slot| {
        slot.write_data(8, payload)
    });
    Some(ticket)
}

/// A payload shorter than one slot's, into `slot` (not inlined: the copy of
/// a full slot stays one of known size).
#[inline(never)]
fn write_short<S: RingSlot>(slot: &S, payload: &[u8]) {
    slot.write_data(8, payload);
}

/// `send` of a message longer than one slot's payload.
#[inline(never)]
fn send_slots<M: RingMemory>(
    ring: &M,
    kind: u16,
    payload: &[u8],
    readers: u32,
) -> Result<u32, SendError> {
    let n = slots_for(payload.len());
    let ticket = claim(ring, n)?;
    let (first, rest) = payload.split_at(KMSG_HEAD_DATA);
    for (i, chunk) in rest.chunks(KMSG_SLOT_DATA).enumerate() {
        let t = ticket.wrapping_add(1 + i as u32);
        let slot = ring.slot(t);
        slot.write_data(0, chunk);
        slot.stamp().store(t.wrapping_add(1), Ordering::Relaxed);
    }
    let slot = ring.slot(ticket);
    slot.readers().store(readers, Ordering::Relaxed);
    slot.write_data(0, &encode_head(kind, n as u16, payload.len() as u32));
    slot.write_data(8, first);
    // Last: everything above is visible before a receiver sees the stamp.
    slot.stamp().store(ticket.wrapping_add(1), Ordering::Release);
    Ok(ticket)
}

/// Claims `n` consecutive slots, or says the ring is full.
#[inline(always)]
fn claim<M: RingMemory>(ring: &M, n: u32) -> Result<u32, SendError> {
    let room = |head: u32, tail: u32| {
        let used = head.wrapping_sub(tail);
        used <= ring.slots() && ring.slots() - used >= n
    };
    loop {
        let head = ring.head().load(Ordering::Relaxed);
        // Acquire: pairs with the release below, made after a read of tail.
        let mut tail = ring.tail_seen().load(Ordering::Acquire);
        if !room(head, tail) {
            // Acquire: the receivers' reads of the freed slots happen before our writes.
            tail = ring.tail().load(Ordering::Acquire);
            ring.tail_seen().store(tail, Ordering::Release);
            if !room(head, tail) {
                return Err(SendError::Full);
            }
        }
        let next = head.wrapping_add(n);
        if ring
            .head()
            .compare_exchange_weak(head, next, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return Ok(head);
        }
    }
}

#[inline(always)]
fn encode_head(kind: u16, slots: u16, len: u32) -> [u8; 8] {
    let mut h = [0u8; 8];
    h[0..2].copy_from_slice(&kind.to_le_bytes());
    h[2..4].copy_from_slice(&slots.to_le_bytes());
    h[4..8].copy_from_slice(&len.to_le_bytes());
    h
}

/// Whether a sender should interrupt receiver `r` (it is not polling).
#[inline]
pub fn needs_interrupt<M: RingMemory>(ring: &M, r: u32) -> bool {
    // The message's stamp is visible before we look at the bit, as the
    // receiver clears the bit before it looks at the ring once more.
    core::sync::atomic::fence(Ordering::SeqCst);
    ring.polling().load(Ordering::Acquire) & (1 << r) == 0
}

/// Whether the message with `ticket` is written (its first slot stamped).
/// Receivers look at the slot, not at `head`: the slot's cache line comes
/// to them once, with the message in it, and `head` stays with the senders.
pub fn is_ready<M: RingMemory>(ring: &M, ticket: u32) -> bool {
    ready(ring, ticket).is_some()
}

/// A message seen written: its ticket and first slot (`ready`).
pub struct Ready<S> {
    ticket: u32,
    slot: S,
}

/// The message with `ticket`, if it is written (as `is_ready`).
#[inline(always)]
pub fn ready<M: RingMemory>(ring: &M, ticket: u32) -> Option<Ready<M::Slot<'_>>> {
    let slot = ring.slot(ticket);
    // Acquire: pairs with the sender's release of the stamp.
    (slot.stamp().load(Ordering::Acquire) == ticket.wrapping_add(1))
        .then_some(Ready { ticket, slot })
}

/// One receiver's place in a ring. It lives in the receiver's own memory,
/// so another kernel cannot move it.
#[derive(Clone, Copy, Debug)]
pub struct Receiver {
    next: u32,
    index: u32,
    count: u32,
}

impl Receiver {
    /// Receiver `index` of `count` (a unicast ring has one, index 0), at a
    /// ring whose first ticket is 0.
    pub const fn new(index: u32, count: u32) -> Self {
        Receiver { next: 0, index, count }
    }

    /// The ticket of the next message it expects.
    pub fn next_ticket(&self) -> u32 {
        self.next
    }

    /// Says whether this receiver polls (senders then skip its interrupt).
    /// After turning polling off, receive once more: a message may have
    /// come while the bit was still set.
    pub fn set_polling<M: RingMemory>(&self, ring: &M, on: bool) {
        let bit = 1 << self.index;
        // SeqCst: pairs with the sender's fence in `needs_interrupt`.
        if on {
            ring.polling().fetch_or(bit, Ordering::SeqCst);
        } else {
            ring.polling().fetch_and(!bit, Ordering::SeqCst);
        }
    }

    /// Copies the next message into `buf` (at least `KMSG_MAX_LEN` bytes).
    #[inline]
    pub fn receive<M: RingMemory>(&mut self, ring: &M, buf: &mut [u8]) -> Received {
        let ticket = self.next;
        let slot = ring.slot(ticket);
        // Acquire: pairs with the sender's release of the stamp.
        if slot.stamp().load(Ordering::Acquire) != ticket.wrapping_add(1) {
            return Received::Empty; // nothing, or claimed and still being written
        }
        self.take(ring, slot, ticket, buf)
    }

    /// `receive`, when the caller saw a message written (`ready`) while
    /// it might not hold this receiver: if that message is still the next,
    /// its stamp is not read again (a sender never unstamps a slot it has
    /// not got back, and a hostile one could change it meanwhile anyway).
    #[inline(always)]
    pub fn receive_ready<'r, M: RingMemory>(
        &mut self,
        ring: &'r M,
        buf: &mut [u8],
        ready: Ready<M::Slot<'r>>,
    ) -> Received {
        if self.next != ready.ticket {
            return self.receive(ring, buf);
        }
        self.take(ring, ready.slot, ready.ticket, buf)
    }

    /// The message at `ticket`, whose stamp says it is written.
    #[inline(always)]
    fn take<M: RingMemory>(
        &mut self,
        ring: &M,
        slot: M::Slot<'_>,
        ticket: u32,
        buf: &mut [u8],
    ) -> Received {
        let mut head = [0u8; 8];
        slot.read_data(0, &mut head);
        let head = u64::from_le_bytes(head);
        let (n, len) = match (buf.first_chunk_mut::<KMSG_HEAD_DATA>(), one_slot_len(head)) {
            // One slot, as its length says (most messages): the whole of its
            // payload bytes, a copy of known size (those past `len` are not
            // the message's and go unread).
            (Some(first), Some(len)) => {
                slot.read_data(8, first);
                (1, len)
            }
            // read_slots checked len; min says so to the compiler (no
            // bounds check when the caller slices its buffer).
            _ => match read_slots(ring, ticket, head, buf) {
                Ok(n) => (n, ((head >> 32) as usize).min(KMSG_MAX_LEN)),
                Err(why) => return Received::Broken(why),
            },
        };
        self.next = ticket.wrapping_add(n);
        self.release(ring, &slot);
        Received::Message { kind: head as u16, len }
    }

    /// This receiver is done with the message starting in `slot`.
    #[inline(always)]
    fn release<M: RingMemory>(&self, ring: &M, slot: &M::Slot<'_>) {
        if self.count == 1 {
            // The only reader: the slots are free once copied (release).
            ring.tail().store(self.next, Ordering::Release);
        } else if slot.readers().fetch_sub(1, Ordering::AcqRel) == 1 {
            advance_tail(ring);
        }
    }
}

/// `Receiver::receive`'s copy of the message at `ticket` whose `head` does
/// not say one slot of at most 48 bytes, after checking it; its slots.
#[inline(never)]
fn read_slots<M: RingMemory>(
    ring: &M,
    ticket: u32,
    head: u64,
    buf: &mut [u8],
) -> Result<u32, &'static str> {
    let (n, len) = ((head >> 16) as u16 as u32, (head >> 32) as usize);
    if len > KMSG_MAX_LEN || len > buf.len() || n != slots_for(len) || n > ring.slots() {
        return Err("a message's length or slot count is wrong");
    }
    let first = len.min(KMSG_HEAD_DATA);
    ring.slot(ticket).read_data(8, &mut buf[..first]);
    for (i, chunk) in buf[first..len].chunks_mut(KMSG_SLOT_DATA).enumerate() {
        let t = ticket.wrapping_add(1 + i as u32);
        let slot = ring.slot(t);
        if slot.stamp().load(Ordering::Relaxed) != t.wrapping_add(1) {
            return Err("a message's further slot was not written");
        }
        slot.read_data(0, chunk);
    }
    Ok(n)
}

/// Moves tail past every message at its front that all receivers have read
/// (several receivers may finish in any order; whoever finishes last moves it).
fn advance_tail<M: RingMemory>(ring: &M) {
    loop {
        let tail = ring.tail().load(Ordering::Acquire);
        let slot = ring.slot(tail);
        if slot.stamp().load(Ordering::Acquire) != tail.wrapping_add(1)
            || slot.readers().load(Ordering::Acquire) != 0
        {
            return;
        }
        let mut head = [0u8; 8];
        slot.read_data(0, &mut head);
        let n = u16::from_le_bytes([head[2], head[3]]) as u32;
        if n == 0 || n > ring.slots() {
            return; // garbage: leave the ring full rather than free what is unread
        }
        // Fails if another receiver moved it first; then look again.
        let _ = ring.tail().compare_exchange(
            tail,
            tail.wrapping_add(n),
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
    }
}
