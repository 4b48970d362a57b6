//! The LWK's side of the message-transport checks (test image only).
//!
//! `kmsggarbage=<seed>`: a hostile LWK. Once Linux has read its messages,
//! it writes garbage into its ring to Linux (a head anywhere, a first slot
//! that looks written, random bytes everywhere else) and interrupts Linux,
//! which must refuse it, report the enclave as crashed and stay up.

use alloc::vec;
use alloc::vec::Vec;
use atoll_abi::{kmsg_check_fill, kmsg_check_verify, kmsg_ring_bytes, KmsgCheckStart};
use atoll_abi::{KmsgRing, KmsgSlot, HOST_VECTOR, KMSG_CHECK_HEAD, KMSG_MAX_LEN};
use atoll_abi::{KMSG_CHECK, KMSG_CHECK_DONE, KMSG_CHECK_END, KMSG_CHECK_REPORT, KMSG_CHECK_START};
use atoll_abi::{KMSG_RING_SLOTS, KMSG_TO_HOST_OFFSET};
use core::mem::{offset_of, size_of};
use core::sync::atomic::Ordering;

use crate::kmsg::{self, Message, Peer, SendError};
use crate::sched;
use crate::sync::{SpinLock, WaitQueue};
use hal::println;
use hal::shared::SharedRegion;

pub fn garbage(seed: u64) {
    let Some(e) = crate::boot::enclave() else {
        println!("kmsggarbage: only in an enclave");
        return;
    };
    let Ok(ring) = SharedRegion::in_enclave_area(
        e.shared.0 + KMSG_TO_HOST_OFFSET,
        kmsg_ring_bytes(KMSG_RING_SLOTS),
    ) else {
        println!("kmsggarbage: the ring is outside the shared area");
        return;
    };
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // Linux reads "booted" and the rest first: the garbage follows them.
    let head = ring.atomic_u32(offset_of!(KmsgRing, head)).load(Ordering::Acquire);
    let tail = ring.atomic_u32(offset_of!(KmsgRing, tail));
    let deadline = hal::cpu::rdtsc() + hal::tsc::ns_to_cycles(1_000_000_000);
    while tail.load(Ordering::Acquire) != head && hal::cpu::rdtsc() < deadline {
        hal::cpu::relax();
    }
    let tail = head;
    let slot =
        |t: u32| size_of::<KmsgRing>() + (t % KMSG_RING_SLOTS) as usize * size_of::<KmsgSlot>();
    for t in tail..tail + 64 {
        let mut bytes = [0u8; 56];
        bytes.iter_mut().for_each(|b| *b = next() as u8);
        ring.copy_in(slot(t) + offset_of!(KmsgSlot, data), &bytes);
        // Half the stamps look right, so Linux reads on into the garbage.
        let stamp = if next() % 2 == 0 { t + 1 } else { next() as u32 };
        ring.atomic_u32(slot(t) + offset_of!(KmsgSlot, stamp)).store(stamp, Ordering::Relaxed);
    }
    ring.atomic_u32(slot(tail) + offset_of!(KmsgSlot, stamp)).store(tail + 1, Ordering::Release);
    let head = tail.wrapping_add(next() as u32 % (2 * KMSG_RING_SLOTS) + 1);
    ring.atomic_u32(offset_of!(KmsgRing, head)).store(head, Ordering::Release);
    println!("kmsggarbage: wrote garbage into the ring to Linux (seed {seed}, head {head})");
    hal::apic::send_ipi(e.host_apic_id, HOST_VECTOR);
}

// ---- The LWK's side of `atoll kmsg-check` (ATOLL_IOC_KMSG_CHECK) ----

/// What arrived from Linux's stream: (received intact and in order, bad).
static FROM_HOST: SpinLock<(u64, u64)> = SpinLock::new((0, 0));
static STARTS: SpinLock<Option<KmsgCheckStart>> = SpinLock::new(None);
static STARTED: WaitQueue = WaitQueue::new();

pub fn init() {
    kmsg::register(KMSG_CHECK, on_check);
    kmsg::register(KMSG_CHECK_END, on_end);
    kmsg::register(KMSG_CHECK_START, on_start);
    sched::spawn(0, "kmsg-check", || loop {
        STARTED.wait_until(|| STARTS.lock().is_some());
        let start = STARTS.lock().take();
        if let Some(start) = start {
            flood(start);
        }
    });
}

fn on_check(msg: &Message) {
    if msg.from != Peer::Host {
        return on_peer_check(msg);
    }
    let mut counts = FROM_HOST.lock();
    match kmsg_check_verify(msg.data) {
        Some((0, seq)) if seq as u64 == counts.0 => counts.0 += 1,
        _ => counts.1 += 1,
    }
}

fn on_end(msg: &Message) {
    let (received, bad) = core::mem::take(&mut *FROM_HOST.lock());
    if received + bad != msg.word(0) {
        println!("kmsg-check: Linux sent {} messages, {} arrived", msg.word(0), received + bad);
    }
    let _ = kmsg::send_words(Peer::Host, KMSG_CHECK_REPORT, &[received, bad]);
}

/// From the message interrupt: the flood itself runs in threads.
fn on_start(msg: &Message) {
    let word = |i: usize| {
        msg.data.get(i * 4..i * 4 + 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    *STARTS.lock() =
        Some(KmsgCheckStart { count: word(0), min_len: word(1), max_len: word(2), pad0: 0 });
    STARTED.wake_one(true);
}

/// Every CPU sends `count` check messages to Linux at once, then says so.
fn flood(start: KmsgCheckStart) {
    let senders: Vec<_> = hal::smp::online_cpus()
        .map(|cpu| sched::spawn(cpu, "kmsg-sender", move || send_stream(cpu as u32, start)))
        .collect();
    for s in senders {
        s.join();
    }
}

fn send_stream(sender: u32, start: KmsgCheckStart) {
    let max = (start.max_len as usize).clamp(KMSG_CHECK_HEAD, KMSG_MAX_LEN);
    let min = (start.min_len as usize).clamp(KMSG_CHECK_HEAD, max);
    let mut buf = vec![0u8; max];
    let (mut sent, mut waits) = (0u64, 0u64);
    for seq in 0..start.count {
        let len = min + seq as usize % (max - min + 1);
        kmsg_check_fill(&mut buf[..len], sender, seq);
        loop {
            match kmsg::send(Peer::Host, KMSG_CHECK, &buf[..len]) {
                Ok(()) => break,
                Err(kmsg::SendError::Full) => {
                    waits += 1;
                    hal::cpu::relax();
                }
                Err(e) => {
                    println!("kmsg-check: CPU {sender} stops: {e:?}");
                    return;
                }
            }
        }
        sent += 1;
    }
    kmsg::send_words_waiting(Peer::Host, KMSG_CHECK_DONE, &[sender as u64, sent, waits]);
}

// ---- `kmsgflood=<enclave id>`: this LWK floods another one directly ----

/// What arrived from another enclave's flood: the next sequence number per
/// sending CPU, and (intact and in order, bad).
static FROM_PEER: SpinLock<([u32; hal::MAX_CPUS], u64, u64)> =
    SpinLock::new(([0; hal::MAX_CPUS], 0, 0));

/// Messages between the receiver's progress lines on its console.
const PROGRESS_EVERY: u64 = 20_000;

fn on_peer_check(msg: &Message) {
    let mut s = FROM_PEER.lock();
    let (next, good, bad) = &mut *s;
    match kmsg_check_verify(msg.data) {
        Some((cpu, seq)) if next.get(cpu as usize) == Some(&seq) => {
            next[cpu as usize] += 1;
            *good += 1;
        }
        _ => *bad += 1,
    }
    if (*good + *bad).is_multiple_of(PROGRESS_EVERY) {
        println!("kmsgflood: from {:?}: {} intact and in order, {} bad", msg.from, good, bad);
    }
}

/// Every CPU sends check messages to enclave `peer` until it is gone; the
/// senders give way when the ring is full, so the LWK keeps serving Linux.
pub fn flood_peer(peer: u32) {
    sched::spawn(0, "kmsgflood", move || {
        for _ in 0..300 {
            if kmsg::is_linked(Peer::Enclave(peer)) {
                break;
            }
            sched::sleep_ns(100_000_000);
        }
        if !kmsg::is_linked(Peer::Enclave(peer)) {
            println!("kmsgflood: no rings to enclave {peer} after 30 s");
            return;
        }
        println!("kmsgflood: sending to enclave {peer}");
        let senders: Vec<_> = hal::smp::online_cpus()
            .map(|cpu| sched::spawn(cpu, "kmsgflood-cpu", move || flood_stream(peer, cpu as u32)))
            .collect();
        let (sent, full): (u64, u64) =
            senders.into_iter().map(|s| s.join()).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        println!("kmsgflood: enclave {peer} is gone after {sent} messages ({full} times full); senders stopped");
    });
}

/// (sent, times the ring was full) until sending fails for good.
fn flood_stream(peer: u32, cpu: u32) -> (u64, u64) {
    let mut buf = [0u8; 200];
    let (mut seq, mut full) = (0u32, 0u64);
    loop {
        let len = KMSG_CHECK_HEAD + seq as usize % (buf.len() - KMSG_CHECK_HEAD);
        kmsg_check_fill(&mut buf[..len], cpu, seq);
        match kmsg::send(Peer::Enclave(peer), KMSG_CHECK, &buf[..len]) {
            Ok(()) => seq += 1,
            Err(SendError::Full) => {
                full += 1;
                sched::yield_now();
            }
            Err(SendError::Invalid) => return (seq.into(), full),
        }
        if seq.is_multiple_of(64) {
            sched::yield_now();
        }
    }
}
