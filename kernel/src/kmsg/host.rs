//! The link to the host module, on the rings it made in the shared area.

use atoll_abi::{kmsg_ring_bytes, BENCH_LINE_OFFSET, HOST_VECTOR, KMSG_RING_SLOTS};
use atoll_abi::{KMSG_TO_HOST_OFFSET, KMSG_TO_LWK_OFFSET};
use hal::shared::SharedRegion;
use spin::Once;

use super::link::Link;
use super::outbox::Outbox;
use super::peer::Peer;
use super::ring::SharedRing;

static HOST: Once<Link> = Once::new();
/// A cache line in the shared area for benchmarks with the host.
static HOST_LINE: Once<SharedRegion> = Once::new();

/// Attaches to the rings the host made in the shared area.
pub fn attach(shared_phys: u64, host_apic_id: u32) {
    let ring_at = |offset: u64| {
        let region =
            SharedRegion::in_enclave_area(shared_phys + offset, kmsg_ring_bytes(KMSG_RING_SLOTS))
                .unwrap_or_else(|e| hal::fatal!("message ring: {e:?}"));
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
    HOST_LINE.call_once(|| {
        SharedRegion::in_enclave_area(shared_phys + BENCH_LINE_OFFSET, 64)
            .unwrap_or_else(|e| hal::fatal!("benchmark line: {e:?}"))
    });
}

/// The link, once attached.
#[inline]
pub fn link() -> Option<&'static Link> {
    HOST.get()
}

/// Our ring to the host, where answers to its multicasts go.
pub fn outbox() -> Option<&'static Outbox> {
    HOST.get().map(Link::outbox)
}

/// The benchmarks' cache line, once attached.
#[cfg(feature = "testing")]
pub fn line() -> Option<SharedRegion> {
    HOST_LINE.get().copied()
}

/// `Link::send_words_waiting` to the host; says so if there is no link.
pub fn send_words_waiting(kind: u16, words: &[u64]) {
    match link() {
        Some(host) => host.send_words_waiting(kind, words),
        None => hal::println!("kmsg: message {kind} to the host not sent: no link"),
    }
}
