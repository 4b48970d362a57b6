//! The LWK's ring (this crate, Rust) and the module's (host/kmsg_ring.c, C)
//! read each other's rings byte for byte: the C program
//! (host/tests/kmsg_ring_interop.c) writes a ring to a file that Rust reads,
//! and reads one Rust wrote. Message i: type 1 + i % 60, length i * 37 % 300,
//! byte j = i * 7 + j * 13 (the same rule on both sides).

use atoll_abi::{kmsg_ring_bytes, KmsgRing, KmsgSlot, KMSG_MAX_LEN};
use lwk_logic::kmsg::{send, Received, Receiver, RingMemory, RingSlot};
use std::mem::{offset_of, size_of};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

const SLOTS: u32 = 4096;
const MESSAGES: u32 = 500;

/// A ring laid out exactly as the ABI says, in 32-bit words.
struct ByteRing {
    words: Vec<AtomicU32>,
    tail_seen: AtomicU32,
}

impl ByteRing {
    fn new() -> Self {
        let n = kmsg_ring_bytes(SLOTS) / 4;
        ByteRing {
            words: (0..n).map(|_| AtomicU32::new(0)).collect(),
            tail_seen: AtomicU32::new(0),
        }
    }
    fn from_bytes(bytes: &[u8]) -> Self {
        assert_eq!(bytes.len(), kmsg_ring_bytes(SLOTS));
        let words =
            bytes.chunks(4).map(|c| AtomicU32::new(u32::from_le_bytes(c.try_into().unwrap())));
        ByteRing { words: words.collect(), tail_seen: AtomicU32::new(0) }
    }
    fn to_bytes(&self) -> Vec<u8> {
        self.words.iter().flat_map(|w| w.load(Ordering::Relaxed).to_le_bytes()).collect()
    }
    fn word(&self, byte_offset: usize) -> &AtomicU32 {
        &self.words[byte_offset / 4]
    }
    fn slot(index: u32) -> usize {
        size_of::<KmsgRing>() + index as usize * size_of::<KmsgSlot>()
    }
    fn byte(&self, at: usize) -> u8 {
        self.word(at).load(Ordering::Relaxed).to_le_bytes()[at % 4]
    }
    fn set_byte(&self, at: usize, value: u8) {
        let mut b = self.word(at).load(Ordering::Relaxed).to_le_bytes();
        b[at % 4] = value;
        self.word(at).store(u32::from_le_bytes(b), Ordering::Relaxed);
    }
}

impl RingMemory for ByteRing {
    type Slot<'a> = ByteSlot<'a>;
    fn slots(&self) -> u32 {
        SLOTS
    }
    fn head(&self) -> &AtomicU32 {
        self.word(offset_of!(KmsgRing, head))
    }
    fn tail(&self) -> &AtomicU32 {
        self.word(offset_of!(KmsgRing, tail))
    }
    fn tail_seen(&self) -> &AtomicU32 {
        &self.tail_seen
    }
    fn polling(&self) -> &AtomicU32 {
        self.word(offset_of!(KmsgRing, polling))
    }
    fn slot(&self, ticket: u32) -> ByteSlot<'_> {
        ByteSlot { ring: self, at: Self::slot(ticket % SLOTS) }
    }
}

/// A slot of a `ByteRing`: its first byte's offset.
struct ByteSlot<'a> {
    ring: &'a ByteRing,
    at: usize,
}

impl RingSlot for ByteSlot<'_> {
    fn stamp(&self) -> &AtomicU32 {
        self.ring.word(self.at + offset_of!(KmsgSlot, stamp))
    }
    fn readers(&self) -> &AtomicU32 {
        self.ring.word(self.at + offset_of!(KmsgSlot, readers))
    }
    fn write_data(&self, offset: usize, src: &[u8]) {
        let base = self.at + offset_of!(KmsgSlot, data) + offset;
        src.iter().enumerate().for_each(|(i, &b)| self.ring.set_byte(base + i, b));
    }
    fn read_data(&self, offset: usize, dst: &mut [u8]) {
        let base = self.at + offset_of!(KmsgSlot, data) + offset;
        dst.iter_mut().enumerate().for_each(|(i, b)| *b = self.ring.byte(base + i));
    }
}

fn message(i: u32) -> (u16, Vec<u8>) {
    let len = i * 37 % 300;
    (1 + (i % 60) as u16, (0..len).map(|j| (i * 7 + j * 13) as u8).collect())
}

/// Builds the C half against the module's own ring code.
fn c_program(dir: &Path) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let exe = dir.join("kmsg_ring_interop");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(cc)
        .args(["-O2", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg("-I")
        .arg(root.join("host/tests/shim"))
        .arg("-I")
        .arg(root.join("host"))
        .arg("-I")
        .arg(root.join("abi"))
        .arg(root.join("host/tests/kmsg_ring_interop.c"))
        .arg(root.join("host/kmsg_ring.c"))
        .status()
        .expect("running the C compiler");
    assert!(status.success(), "building host/tests/kmsg_ring_interop.c failed");
    exe
}

#[test]
fn rust_and_c_read_each_others_rings() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let exe = c_program(&dir);

    // C writes, Rust reads.
    let from_c = dir.join("ring-from-c");
    assert!(Command::new(&exe).arg("send").arg(&from_c).status().unwrap().success());
    let ring = ByteRing::from_bytes(&std::fs::read(&from_c).unwrap());
    let mut rx = Receiver::new(0, 1);
    let mut buf = vec![0u8; KMSG_MAX_LEN];
    for i in 0..MESSAGES {
        let (kind, bytes) = message(i);
        match rx.receive(&ring, &mut buf) {
            Received::Message { kind: k, len } => {
                assert_eq!((k, &buf[..len]), (kind, &bytes[..]), "message {i} from C");
            }
            other => panic!("message {i} from C: {other:?}"),
        }
    }
    assert_eq!(rx.receive(&ring, &mut buf), Received::Empty);

    // Rust writes, C reads.
    let ring = ByteRing::new();
    for i in 0..MESSAGES {
        let (kind, bytes) = message(i);
        send(&ring, kind, &bytes, 1).unwrap();
    }
    let from_rust = dir.join("ring-from-rust");
    std::fs::write(&from_rust, ring.to_bytes()).unwrap();
    let out = Command::new(&exe).arg("receive").arg(&from_rust).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("500 messages from Rust intact"), "{text}");
}
