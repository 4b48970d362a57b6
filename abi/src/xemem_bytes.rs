//! XEMEM's structs as the bytes that cross a boundary (a message, user
//! memory), written and read field by field in their C layout, so neither
//! side needs `unsafe` to send or receive them.

use crate::bytes::{Reader, Writer};
use crate::{Header, XememEvent, XememIo, XememReply, XememReq, XememRun, XEMEM_NAME_LEN};

pub const XEMEM_IO_BYTES: usize = core::mem::size_of::<XememIo>();
pub const XEMEM_REQ_BYTES: usize = core::mem::size_of::<XememReq>();
pub const XEMEM_REPLY_BYTES: usize = core::mem::size_of::<XememReply>();
pub const XEMEM_EVENT_BYTES: usize = core::mem::size_of::<XememEvent>();
pub const XEMEM_RUN_BYTES: usize = core::mem::size_of::<XememRun>();

impl XememIo {
    fn write(&self, w: &mut Writer) {
        for v in [self.hdr.magic, self.hdr.version, self.hdr.size, self.hdr.reserved] {
            w.put(&v.to_le_bytes());
        }
        w.put(&self.op.to_le_bytes());
        w.put(&self.mode.to_le_bytes());
        w.put(&self.segid.to_le_bytes());
        w.put(&self.apid.to_le_bytes());
        for v in [self.vaddr, self.size, self.offset] {
            w.put(&v.to_le_bytes());
        }
        w.put(&self.flags.to_le_bytes());
        w.put(&self.timeout_ms.to_le_bytes());
        w.put(&self.name);
    }

    fn read(r: &mut Reader) -> Self {
        let hdr = Header { magic: r.u32(), version: r.u32(), size: r.u32(), reserved: r.u32() };
        XememIo {
            hdr,
            op: r.u32(),
            mode: r.u32(),
            segid: r.i64(),
            apid: r.i64(),
            vaddr: r.u64(),
            size: r.u64(),
            offset: r.u64(),
            flags: r.u32(),
            timeout_ms: r.u32() as i32,
            name: r.take::<XEMEM_NAME_LEN>(),
        }
    }

    pub fn to_bytes(&self) -> [u8; XEMEM_IO_BYTES] {
        let mut out = [0u8; XEMEM_IO_BYTES];
        self.write(&mut Writer { out: &mut out, at: 0 });
        out
    }

    pub fn from_bytes(bytes: &[u8; XEMEM_IO_BYTES]) -> Self {
        Self::read(&mut Reader { bytes, at: 0 })
    }
}

impl XememReq {
    pub fn to_bytes(&self) -> [u8; XEMEM_REQ_BYTES] {
        let mut out = [0u8; XEMEM_REQ_BYTES];
        let mut w = Writer { out: &mut out, at: 0 };
        w.put(&self.id.to_le_bytes());
        w.put(&self.area.to_le_bytes());
        w.put(&self.pid.to_le_bytes());
        for v in [self.pin, self.runs_hash, self.root, self.attachment] {
            w.put(&v.to_le_bytes());
        }
        self.io.write(&mut w);
        out
    }
}

impl XememEvent {
    pub fn to_bytes(&self) -> [u8; XEMEM_EVENT_BYTES] {
        let mut out = [0u8; XEMEM_EVENT_BYTES];
        let mut w = Writer { out: &mut out, at: 0 };
        w.put(&self.id.to_le_bytes());
        w.put(&self.segid.to_le_bytes());
        w.put(&self.cancel.to_le_bytes());
        w.put(&self.op.to_le_bytes());
        w.put(&self.kernel.to_le_bytes());
        out
    }

    /// None unless `bytes` is exactly one event.
    pub fn parse(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != XEMEM_EVENT_BYTES {
            return None;
        }
        let mut r = Reader { bytes, at: 0 };
        Some(XememEvent {
            id: r.u64(),
            segid: r.i64(),
            cancel: r.u64(),
            op: r.u32(),
            kernel: r.u32(),
        })
    }
}

impl XememReply {
    /// A reply without runs, as its bytes.
    pub fn to_bytes(&self) -> [u8; XEMEM_REPLY_BYTES] {
        let mut out = [0u8; XEMEM_REPLY_BYTES];
        let mut w = Writer { out: &mut out, at: 0 };
        for v in [self.id, self.result as u64, self.value as u64] {
            w.put(&v.to_le_bytes());
        }
        for v in [self.writable, self.last, self.count, self.pad0] {
            w.put(&v.to_le_bytes());
        }
        out
    }

    /// The header and the runs after it; None if the lengths disagree.
    pub fn parse(bytes: &[u8]) -> Option<(XememReply, impl Iterator<Item = XememRun> + '_)> {
        let (head, rest) = bytes.split_at_checked(XEMEM_REPLY_BYTES)?;
        let mut r = Reader { bytes: head, at: 0 };
        let reply = XememReply {
            id: r.u64(),
            result: r.i64(),
            value: r.i64(),
            writable: r.u32(),
            last: r.u32(),
            count: r.u32(),
            pad0: r.u32(),
        };
        if rest.len() != reply.count as usize * XEMEM_RUN_BYTES {
            return None;
        }
        let runs = rest.chunks_exact(XEMEM_RUN_BYTES).map(|c| {
            let mut r = Reader { bytes: c, at: 0 };
            XememRun { phys: r.u64(), len: r.u64() }
        });
        Some((reply, runs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MAGIC_XEMEM;

    /// The struct's own memory, as C would see it.
    fn raw<T>(v: &T) -> &[u8] {
        // SAFETY: T is a repr(C) struct of integers and byte arrays with
        // explicit padding, so every byte is initialized.
        unsafe {
            core::slice::from_raw_parts(v as *const T as *const u8, core::mem::size_of::<T>())
        }
    }

    fn sample_io() -> XememIo {
        let mut io = XememIo::new();
        io.op = 5;
        io.mode = 0o640;
        io.segid = -3;
        io.apid = 77;
        io.vaddr = 0x7f00_1234_5000;
        io.size = 1 << 30;
        io.offset = 4096;
        io.flags = 2;
        io.timeout_ms = -1;
        io.name[..4].copy_from_slice(b"sim0");
        io
    }

    #[test]
    fn io_bytes_are_its_c_layout_and_read_back() {
        let io = sample_io();
        assert_eq!(io.hdr.magic, MAGIC_XEMEM);
        let bytes = io.to_bytes();
        assert_eq!(&bytes[..], raw(&io));
        let back = XememIo::from_bytes(&bytes);
        assert_eq!(raw(&back), raw(&io));
    }

    #[test]
    fn req_bytes_are_its_c_layout() {
        let req = XememReq {
            id: 9,
            area: 3,
            pid: 101,
            pin: 4,
            runs_hash: 0xdead_beef,
            root: 0x20_0000,
            attachment: 12,
            io: sample_io(),
        };
        assert_eq!(&req.to_bytes()[..], raw(&req));
    }

    #[test]
    fn reply_parses_with_its_runs_and_refuses_a_wrong_count() {
        let reply =
            XememReply { id: 1, result: -2, value: 3, writable: 1, last: 1, count: 2, pad0: 0 };
        let runs = [XememRun { phys: 0x1000, len: 0x2000 }, XememRun { phys: 0x9000, len: 0x1000 }];
        let mut bytes = raw(&reply).to_vec();
        runs.iter().for_each(|r| bytes.extend_from_slice(raw(r)));
        let (got, got_runs) = XememReply::parse(&bytes).expect("parses");
        assert_eq!((got.id, got.result, got.value, got.writable, got.count), (1, -2, 3, 1, 2));
        assert!(got_runs.eq(runs));
        assert!(XememReply::parse(&bytes[..bytes.len() - 1]).is_none());
    }

    #[test]
    fn event_and_reply_bytes_are_their_c_layout() {
        let ev = XememEvent { id: 7, segid: -5, cancel: 9, op: 10, kernel: 3 };
        assert_eq!(&ev.to_bytes()[..], raw(&ev));
        assert_eq!(XememEvent::parse(raw(&ev)), Some(ev));
        assert_eq!(XememEvent::parse(&raw(&ev)[1..]), None);
        let reply =
            XememReply { id: 1, result: -2, value: 3, writable: 0, last: 1, count: 0, pad0: 0 };
        assert_eq!(&reply.to_bytes()[..], raw(&reply));
    }

    #[test]
    fn hash_is_fnv1a_over_phys_then_len() {
        // One run hashed by hand, byte by byte.
        let mut h = crate::XEMEM_HASH_SEED;
        for b in 0x1000u64.to_le_bytes().into_iter().chain(0x2000u64.to_le_bytes()) {
            h = (h ^ u64::from(b)).wrapping_mul(crate::XEMEM_HASH_PRIME);
        }
        assert_eq!(crate::xemem_hash([XememRun { phys: 0x1000, len: 0x2000 }]), h);
        assert_ne!(crate::xemem_hash([XememRun { phys: 0x2000, len: 0x1000 }]), h);
    }
}
