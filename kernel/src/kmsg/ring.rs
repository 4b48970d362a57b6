//! A message ring in memory shared with another kernel, for the ring
//! algorithm in `lwk_logic::kmsg`.

use atoll_abi::{KmsgRing, KmsgSlot};
use core::mem::{offset_of, size_of};
use core::sync::atomic::AtomicU32;
use hal::shared::SharedRegion;
use lwk_logic::kmsg::RingMemory;

pub struct SharedRing {
    region: SharedRegion,
    slots: u32,
    /// Our last look at the ring's tail, kept out of the shared cache lines.
    tail_seen: AtomicU32,
}

const SLOTS_START: usize = size_of::<KmsgRing>();

impl SharedRing {
    /// The ring at the start of `region`, with `slots` slots (what this
    /// kernel knows, never what the shared header claims).
    pub fn new(region: SharedRegion, slots: u32) -> Self {
        assert!(slots.is_power_of_two());
        SharedRing { region, slots, tail_seen: AtomicU32::new(0) }
    }

    fn slot(&self, index: u32) -> usize {
        SLOTS_START + index as usize * size_of::<KmsgSlot>()
    }
}

impl RingMemory for SharedRing {
    fn slots(&self) -> u32 {
        self.slots
    }
    fn head(&self) -> &AtomicU32 {
        self.region.atomic_u32(offset_of!(KmsgRing, head))
    }
    fn tail(&self) -> &AtomicU32 {
        self.region.atomic_u32(offset_of!(KmsgRing, tail))
    }
    fn tail_seen(&self) -> &AtomicU32 {
        &self.tail_seen
    }
    fn polling(&self) -> &AtomicU32 {
        self.region.atomic_u32(offset_of!(KmsgRing, polling))
    }
    fn stamp(&self, index: u32) -> &AtomicU32 {
        self.region.atomic_u32(self.slot(index) + offset_of!(KmsgSlot, stamp))
    }
    fn readers(&self, index: u32) -> &AtomicU32 {
        self.region.atomic_u32(self.slot(index) + offset_of!(KmsgSlot, readers))
    }
    fn write_data(&self, index: u32, offset: usize, src: &[u8]) {
        self.region.copy_in(self.slot(index) + offset_of!(KmsgSlot, data) + offset, src);
    }
    fn read_data(&self, index: u32, offset: usize, dst: &mut [u8]) {
        self.region.copy_out(self.slot(index) + offset_of!(KmsgSlot, data) + offset, dst);
    }
}
