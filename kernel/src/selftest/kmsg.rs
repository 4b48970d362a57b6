//! `kmsggarbage=<seed>`: a hostile LWK. It writes garbage into its ring to
//! Linux (a plausible head, a first slot that looks written, random bytes
//! everywhere else) and interrupts Linux, which must refuse it, report the
//! enclave as crashed and stay up.

use atoll_abi::{kmsg_ring_bytes, KmsgRing, KmsgSlot, HOST_VECTOR};
use atoll_abi::{KMSG_RING_SLOTS, KMSG_TO_HOST_OFFSET};
use core::mem::{offset_of, size_of};
use core::sync::atomic::Ordering;

use crate::println;
use hal::shared::SharedRegion;

pub fn garbage(seed: u64) {
    let Some(e) = crate::boot::enclave() else {
        println!("kmsggarbage: only in an enclave");
        return;
    };
    let ring = SharedRegion::in_enclave_area(
        e.shared.0 + KMSG_TO_HOST_OFFSET,
        kmsg_ring_bytes(KMSG_RING_SLOTS),
    );
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let tail = ring.atomic_u32(offset_of!(KmsgRing, tail)).load(Ordering::Acquire);
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
