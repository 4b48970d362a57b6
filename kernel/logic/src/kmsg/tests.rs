//! The ring under real threads: ordering and integrity with several
//! senders, every message size, multicast, a full ring and garbage.

use super::*;
use atoll_abi::{kmsg_check_fill, kmsg_check_verify, KMSG_CHECK_HEAD, KMSG_RING_SLOTS};
use std::sync::atomic::{AtomicU8, AtomicUsize};
use std::sync::Arc;
use std::thread;

/// A ring in ordinary memory; every byte is atomic so racing threads are
/// well defined, as the other kernel's accesses are in shared memory.
struct TestRing {
    slots: u32,
    head: AtomicU32,
    tail: AtomicU32,
    tail_seen: AtomicU32,
    /// How often `head` and `tail` were looked up: the shared lines the
    /// protocol keeps out of the common path.
    head_looks: AtomicUsize,
    tail_looks: AtomicUsize,
    polling: AtomicU32,
    stamps: Vec<AtomicU32>,
    readers: Vec<AtomicU32>,
    data: Vec<AtomicU8>,
}

const DATA: usize = 56;

impl TestRing {
    fn new(slots: u32) -> Arc<Self> {
        Arc::new(TestRing {
            slots,
            head: AtomicU32::new(0),
            tail: AtomicU32::new(0),
            tail_seen: AtomicU32::new(0),
            head_looks: AtomicUsize::new(0),
            tail_looks: AtomicUsize::new(0),
            polling: AtomicU32::new(0),
            stamps: (0..slots).map(|_| AtomicU32::new(0)).collect(),
            readers: (0..slots).map(|_| AtomicU32::new(0)).collect(),
            data: (0..slots as usize * DATA).map(|_| AtomicU8::new(0)).collect(),
        })
    }
}

impl RingMemory for TestRing {
    type Slot<'a> = TestSlot<'a>;
    fn slots(&self) -> u32 {
        self.slots
    }
    fn head(&self) -> &AtomicU32 {
        self.head_looks.fetch_add(1, Ordering::Relaxed);
        &self.head
    }
    fn tail(&self) -> &AtomicU32 {
        self.tail_looks.fetch_add(1, Ordering::Relaxed);
        &self.tail
    }
    fn tail_seen(&self) -> &AtomicU32 {
        &self.tail_seen
    }
    fn polling(&self) -> &AtomicU32 {
        &self.polling
    }
    fn slot(&self, ticket: u32) -> TestSlot<'_> {
        TestSlot { ring: self, index: (ticket % self.slots) as usize }
    }
}

struct TestSlot<'a> {
    ring: &'a TestRing,
    index: usize,
}

impl RingSlot for TestSlot<'_> {
    fn stamp(&self) -> &AtomicU32 {
        &self.ring.stamps[self.index]
    }
    fn readers(&self) -> &AtomicU32 {
        &self.ring.readers[self.index]
    }
    fn write_data(&self, offset: usize, src: &[u8]) {
        let base = self.index * DATA + offset;
        assert!(offset + src.len() <= DATA);
        for (i, &b) in src.iter().enumerate() {
            self.ring.data[base + i].store(b, Ordering::Relaxed);
        }
    }
    fn read_data(&self, offset: usize, dst: &mut [u8]) {
        let base = self.index * DATA + offset;
        assert!(offset + dst.len() <= DATA);
        for (i, b) in dst.iter_mut().enumerate() {
            *b = self.ring.data[base + i].load(Ordering::Relaxed);
        }
    }
}

/// A check message (atoll_abi's pattern) of `16 + extra` bytes.
fn check_message(sender: u32, seq: u32, extra: usize) -> Vec<u8> {
    let mut m = vec![0u8; KMSG_CHECK_HEAD + extra];
    kmsg_check_fill(&mut m, sender, seq);
    m
}

/// (sender, seq) of a check message, after verifying every byte.
fn verify(m: &[u8]) -> (u32, u32) {
    kmsg_check_verify(m).expect("a check message arrived damaged")
}

fn send_retrying(ring: &TestRing, kind: u16, m: &[u8], readers: u32) {
    loop {
        match send(ring, kind, m, readers) {
            Ok(_) => return,
            Err(SendError::Full) => thread::yield_now(),
            Err(e) => panic!("send: {e:?}"),
        }
    }
}

fn receive_one(ring: &TestRing, r: &mut Receiver, buf: &mut [u8]) -> (u16, usize) {
    loop {
        match r.receive(ring, buf) {
            Received::Message { kind, len } => return (kind, len),
            Received::Empty => thread::yield_now(),
            Received::Broken(why) => panic!("ring broken: {why}"),
        }
    }
}

#[test]
fn one_slot_heads_are_told_apart() {
    let head = |slots: u64, len: u64| 7 | slots << 16 | len << 32;
    for len in [0, 1, 47, 48] {
        assert!(one_slot(head(1, len)), "len {len}");
    }
    for (slots, len) in [(1, 49), (1, 1 << 31), (0, 0), (0, 1), (0, 48), (2, 0), (2, 48)] {
        assert!(!one_slot(head(slots, len)), "slots {slots} len {len}");
    }
    for (slots, len) in [(0xffff, 0), (0xffff, 48), (0x8000, 3), (1, u32::MAX as u64)] {
        assert!(!one_slot(head(slots, len)), "slots {slots} len {len}");
    }
}

#[test]
fn slot_counts_follow_the_layout() {
    assert_eq!(slots_for(0), 1);
    assert_eq!(slots_for(48), 1);
    assert_eq!(slots_for(49), 2);
    assert_eq!(slots_for(48 + 56), 2);
    assert_eq!(slots_for(48 + 57), 3);
    assert!(slots_for(KMSG_MAX_LEN) <= KMSG_RING_SLOTS);
}

#[test]
fn several_senders_one_receiver_keep_order_and_bytes() {
    const SENDERS: u32 = 4;
    const EACH: u32 = 1_000_000;
    let ring = TestRing::new(64); // small: senders meet a full ring often
    let senders: Vec<_> = (0..SENDERS)
        .map(|s| {
            let ring = ring.clone();
            thread::spawn(move || {
                for seq in 0..EACH {
                    // Mostly one slot, now and then two or three.
                    let extra = [16, 32, 60, 100][(seq % 4) as usize];
                    send_retrying(&ring, 5, &check_message(s, seq, extra), 1);
                }
            })
        })
        .collect();
    let mut r = Receiver::new(0, 1);
    let mut buf = vec![0u8; KMSG_MAX_LEN];
    let mut next = [0u32; SENDERS as usize];
    for _ in 0..SENDERS * EACH {
        let (kind, len) = receive_one(&ring, &mut r, &mut buf);
        assert_eq!(kind, 5);
        let (s, seq) = verify(&buf[..len]);
        assert_eq!(seq, next[s as usize], "sender {s} out of order");
        next[s as usize] += 1;
    }
    senders.into_iter().for_each(|t| t.join().unwrap());
    assert_eq!(r.receive(&*ring, &mut buf), Received::Empty);
}

#[test]
fn every_size_up_to_the_largest_arrives_intact() {
    let ring = TestRing::new(KMSG_RING_SLOTS);
    let sender = {
        let ring = ring.clone();
        thread::spawn(move || {
            for size in 16..=KMSG_MAX_LEN {
                send_retrying(&ring, 9, &check_message(0, size as u32, size - 16), 1);
            }
        })
    };
    let mut r = Receiver::new(0, 1);
    let mut buf = vec![0u8; KMSG_MAX_LEN];
    for size in 16..=KMSG_MAX_LEN {
        let (_, len) = receive_one(&ring, &mut r, &mut buf);
        assert_eq!(len, size);
        assert_eq!(verify(&buf[..len]), (0, size as u32));
    }
    sender.join().unwrap();
    // Sizes below a check message's header: plain bytes.
    for size in 0..16 {
        let m: Vec<u8> = (0..size as u8).collect();
        send(&*ring, 3, &m, 1).unwrap();
        let (_, len) = receive_one(&ring, &mut r, &mut buf);
        assert_eq!(&buf[..len], &m[..]);
    }
}

#[test]
fn multicast_reaches_every_receiver_and_frees_slots_after_the_last() {
    const RECEIVERS: u32 = 3;
    const COUNT: u32 = 200_000;
    let ring = TestRing::new(32);
    let receivers: Vec<_> = (0..RECEIVERS)
        .map(|i| {
            let ring = ring.clone();
            thread::spawn(move || {
                let mut r = Receiver::new(i, RECEIVERS);
                let mut buf = vec![0u8; KMSG_MAX_LEN];
                for seq in 0..COUNT {
                    let (_, len) = receive_one(&ring, &mut r, &mut buf);
                    assert_eq!(verify(&buf[..len]), (7, seq), "receiver {i}");
                }
            })
        })
        .collect();
    for seq in 0..COUNT {
        send_retrying(&ring, 4, &check_message(7, seq, (seq % 90) as usize), RECEIVERS);
    }
    receivers.into_iter().for_each(|t| t.join().unwrap());
    assert_eq!(ring.tail.load(Ordering::Relaxed), ring.head.load(Ordering::Relaxed));
}

#[test]
fn a_full_ring_refuses_and_overwrites_nothing() {
    let ring = TestRing::new(16);
    let mut sent = 0;
    while send(&*ring, 2, &check_message(1, sent, 20), 1).is_ok() {
        sent += 1;
    }
    assert_eq!(sent, 16);
    assert_eq!(send(&*ring, 2, &[0; 8], 1), Err(SendError::Full));
    let mut r = Receiver::new(0, 1);
    let mut buf = vec![0u8; KMSG_MAX_LEN];
    for seq in 0..sent {
        let (_, len) = receive_one(&ring, &mut r, &mut buf);
        assert_eq!(verify(&buf[..len]), (1, seq));
    }
    assert!(send(&*ring, 2, &[0; 8], 1).is_ok(), "room again once read");
}

#[test]
fn receivers_leave_head_alone_and_senders_rarely_read_tail() {
    let ring = TestRing::new(64);
    let mut r = Receiver::new(0, 1);
    let mut buf = vec![0u8; KMSG_MAX_LEN];
    let mut tail_looks = 0;
    for seq in 0..1000 {
        let before = ring.tail_looks.load(Ordering::Relaxed);
        send(&*ring, 2, &check_message(1, seq, 48), 1).unwrap();
        tail_looks += ring.tail_looks.load(Ordering::Relaxed) - before;
        let looks = ring.head_looks.load(Ordering::Relaxed);
        let (_, len) = receive_one(&ring, &mut r, &mut buf);
        assert_eq!(verify(&buf[..len]), (1, seq));
        assert_eq!(ring.head_looks.load(Ordering::Relaxed), looks, "a receive read head");
    }
    // 2000 slots through a 64-slot ring: about one look per lap.
    assert!(tail_looks <= 2000 / 64 + 1, "senders read tail {tail_looks} times");
    // A sender's own view may lag by laps (a ring it attached to late):
    // it reads tail again rather than call the ring full.
    ring.tail_seen
        .store(ring.tail.load(Ordering::Relaxed).wrapping_sub(1 << 20), Ordering::Relaxed);
    assert!(send(&*ring, 2, &[0; 8], 1).is_ok());
}

#[test]
fn bad_sends_are_refused() {
    let ring = TestRing::new(16);
    assert_eq!(send(&*ring, 0, &[], 1), Err(SendError::Invalid));
    assert_eq!(send(&*ring, KMSG_MAX_TYPES as u16, &[], 1), Err(SendError::Invalid));
    assert_eq!(send(&*ring, 1, &vec![0; KMSG_MAX_LEN + 1], 1), Err(SendError::Invalid));
    assert_eq!(send(&*ring, 1, &[], 0), Err(SendError::Invalid));
    // Larger than the whole ring: never fits.
    assert_eq!(send(&*ring, 1, &vec![0; 2000], 1), Err(SendError::Full));
}

#[test]
fn polling_receivers_need_no_interrupt() {
    let ring = TestRing::new(16);
    let r = Receiver::new(2, 3);
    assert!(needs_interrupt(&*ring, 2));
    r.set_polling(&*ring, true);
    assert!(!needs_interrupt(&*ring, 2));
    assert!(needs_interrupt(&*ring, 1));
    r.set_polling(&*ring, false);
    assert!(needs_interrupt(&*ring, 2));
}

/// xorshift: garbage that repeats from run to run.
fn garbage(state: &mut u64) -> u32 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state as u32
}

#[test]
fn garbage_in_the_ring_is_refused_never_trusted() {
    let mut seed = 0x2545_f491_4f6c_dd1d;
    let mut buf = vec![0u8; KMSG_MAX_LEN];
    let (mut broken, mut messages) = (0, 0);
    for round in 0..2000 {
        let ring = TestRing::new(64);
        // A hostile sender: any head, stamps that often look right, random bytes.
        ring.head.store(garbage(&mut seed) % 200, Ordering::Relaxed);
        for i in 0..64 {
            let stamp =
                if garbage(&mut seed).is_multiple_of(2) { i + 1 } else { garbage(&mut seed) };
            ring.stamps[i as usize].store(stamp, Ordering::Relaxed);
            let bytes: Vec<u8> = (0..DATA).map(|_| garbage(&mut seed) as u8).collect();
            ring.slot(i).write_data(0, &bytes);
        }
        if round % 3 == 0 {
            // A plausible head: small length and the right slot count.
            let len = garbage(&mut seed) % 300;
            ring.slot(0).write_data(0, &encode_head(1, slots_for(len as usize) as u16, len));
        }
        let mut r = Receiver::new(0, 1);
        for _ in 0..100 {
            match r.receive(&*ring, &mut buf) {
                Received::Message { len, .. } => {
                    assert!(len <= KMSG_MAX_LEN);
                    messages += 1;
                }
                Received::Broken(_) => {
                    broken += 1;
                    break;
                }
                Received::Empty => break,
            }
        }
    }
    assert!(broken > 100, "garbage was detected {broken} times");
    assert!(messages > 0, "well-formed messages in garbage still arrive");
}

#[test]
fn a_message_seen_ready_is_received_once() {
    let ring = TestRing::new(16);
    let mut r = Receiver::new(0, 1);
    let mut buf = vec![0u8; KMSG_MAX_LEN];
    assert!(ready(&*ring, 0).is_none(), "nothing sent yet");
    for seq in 0..2 {
        send(&*ring, 3, &check_message(1, seq, 8), 1).unwrap();
    }
    let seen = ready(&*ring, 0).expect("the first is written");
    let Received::Message { kind: 3, len } = r.receive_ready(&*ring, &mut buf, seen) else {
        panic!("the message seen ready was not received");
    };
    assert_eq!(verify(&buf[..len]), (1, 0));
    // Seen before the receiver moved on: the next message, not that one again.
    let stale = ready(&*ring, 0);
    assert!(stale.is_some(), "its stamp stays until the slot is reused");
    let Received::Message { len, .. } = r.receive_ready(&*ring, &mut buf, stale.unwrap()) else {
        panic!("the next message was not received");
    };
    assert_eq!(verify(&buf[..len]), (1, 1));
    assert_eq!(r.receive_ready(&*ring, &mut buf, ready(&*ring, 1).unwrap()), Received::Empty);
}

#[test]
fn full_slots_go_inline_or_not_at_all() {
    let ring = TestRing::new(16);
    let mut m = [0u8; KMSG_HEAD_DATA];
    m.copy_from_slice(&check_message(4, 0, KMSG_HEAD_DATA - KMSG_CHECK_HEAD));
    assert_eq!(send_full(&*ring, 0, &m, 1), None, "type 0");
    assert_eq!(send_full(&*ring, KMSG_MAX_TYPES as u16, &m, 1), None, "a type too big");
    assert_eq!(send_full(&*ring, 5, &m, 0), None, "no readers");
    let mut sent = 0;
    while let Some(ticket) = send_full(&*ring, 5, &m, 1) {
        assert_eq!(ticket, sent);
        sent += 1;
    }
    assert_eq!(sent, 16, "None once full, nothing overwritten");
    let mut r = Receiver::new(0, 1);
    let mut buf = vec![0u8; KMSG_MAX_LEN];
    for _ in 0..sent {
        assert_eq!(receive_one(&ring, &mut r, &mut buf), (5, KMSG_HEAD_DATA));
        assert_eq!(verify(&buf[..KMSG_HEAD_DATA]), (4, 0));
    }
}
