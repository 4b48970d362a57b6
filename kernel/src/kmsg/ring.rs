//! A message ring in memory shared with another kernel, for the ring
//! algorithm in `lwk_logic::kmsg`.

use atoll_abi::{KmsgRing, KmsgSlot};
use core::mem::{offset_of, size_of};
use core::sync::atomic::AtomicU32;
use hal::shared::{SharedRegion, SharedSlot, SharedSlots};
use lwk_logic::kmsg::{RingMemory, RingSlot};

const HEADER: usize = size_of::<KmsgRing>();
const SLOT: usize = size_of::<KmsgSlot>();
const DATA: usize = offset_of!(KmsgSlot, data);

pub struct SharedRing {
    /// The ring's header: head, tail and polling.
    header: SharedSlot<HEADER>,
    /// Its slots, checked once here: no access on the message path checks
    /// bounds again.
    ring: SharedSlots<SLOT>,
    slots: u32,
    /// Our last look at the ring's tail, kept out of the shared cache lines.
    tail_seen: AtomicU32,
}

impl SharedRing {
    /// The ring at the start of `region`, with `slots` slots (what this
    /// kernel knows, never what the shared header claims).
    pub fn new(region: SharedRegion, slots: u32) -> Self {
        let (Some(header), Some(ring)) = (region.slots(0, 1), region.slots(HEADER, slots)) else {
            panic!("kmsg: a ring of {slots} slots does not fit its region");
        };
        SharedRing { header: header.slot(0), ring, slots, tail_seen: AtomicU32::new(0) }
    }
}

impl RingMemory for SharedRing {
    type Slot<'a> = Slot;
    #[inline(always)]
    fn slots(&self) -> u32 {
        self.slots
    }
    #[inline(always)]
    fn head(&self) -> &AtomicU32 {
        self.header.atomic_u32::<{ offset_of!(KmsgRing, head) }>()
    }
    #[inline(always)]
    fn tail(&self) -> &AtomicU32 {
        self.header.atomic_u32::<{ offset_of!(KmsgRing, tail) }>()
    }
    #[inline(always)]
    fn tail_seen(&self) -> &AtomicU32 {
        &self.tail_seen
    }
    #[inline(always)]
    fn polling(&self) -> &AtomicU32 {
        self.header.atomic_u32::<{ offset_of!(KmsgRing, polling) }>()
    }
    #[inline(always)]
    fn slot(&self, ticket: u32) -> Slot {
        Slot(self.ring.slot(ticket))
    }
}

/// One slot of a `SharedRing`.
pub struct Slot(SharedSlot<SLOT>);

impl RingSlot for Slot {
    #[inline(always)]
    fn stamp(&self) -> &AtomicU32 {
        self.0.atomic_u32::<{ offset_of!(KmsgSlot, stamp) }>()
    }
    #[inline(always)]
    fn readers(&self) -> &AtomicU32 {
        self.0.atomic_u32::<{ offset_of!(KmsgSlot, readers) }>()
    }
    #[inline(always)]
    fn write_data(&self, offset: usize, src: &[u8]) {
        self.0.copy_in::<DATA>(offset, src);
    }
    #[inline(always)]
    fn read_data(&self, offset: usize, dst: &mut [u8]) {
        self.0.copy_out::<DATA>(offset, dst);
    }
}
