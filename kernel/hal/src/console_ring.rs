//! The co-kernel console: a byte ring in the enclave's shared area
//! (struct atoll_console). The LWK only appends; the host reads it at any
//! time, also after an LWK panic, so nothing here needs the LWK alive.

use atoll_abi::{Console, Header, CONSOLE_SIZE, MAGIC_CONSOLE};
use core::mem::{offset_of, size_of};
use core::sync::atomic::Ordering;

use crate::shared::SharedRegion;

#[derive(Clone, Copy)]
pub struct RingConsole {
    region: SharedRegion,
    capacity: u64,
}

const DATA: usize = size_of::<Console>();

impl RingConsole {
    /// Takes over the ring the host prepared, or prepares it if the host
    /// did not; None if the boot parameters put it outside the shared area.
    pub fn attach(phys: u64, size: u64) -> Option<Self> {
        let size = size.min(CONSOLE_SIZE) as usize;
        if size <= DATA {
            return None;
        }
        let region = SharedRegion::in_enclave_area(phys, size).ok()?;
        let capacity = (size - DATA) as u64;
        let hdr: Header = region.read(offset_of!(Console, hdr));
        if !hdr.is_valid::<Console>(MAGIC_CONSOLE) {
            region
                .write(offset_of!(Console, hdr), Header::new(MAGIC_CONSOLE, size_of::<Console>()));
            region.atomic_u64(offset_of!(Console, head)).store(0, Ordering::Release);
        }
        region.write(offset_of!(Console, capacity), capacity);
        Some(RingConsole { region, capacity })
    }

    pub fn write_bytes(&mut self, bytes: &[u8]) {
        let head = self.region.atomic_u64(offset_of!(Console, head));
        let start = head.load(Ordering::Relaxed);
        for (i, &b) in bytes.iter().enumerate() {
            let at = (start + i as u64) % self.capacity;
            self.region.write(DATA + at as usize, b);
        }
        // Readers see the bytes before the new head.
        head.store(start + bytes.len() as u64, Ordering::Release);
    }
}
