//! A pipe's bytes and ends, as pipe(7) defines them: a read takes what is
//! there (up to what was asked), or says end of file once no writer is
//! left; a write of at most PIPE_BUF bytes goes in whole or not at all, a
//! longer one in as much as fits; with no reader left a write is broken.
//! Waiting, copying to programs and signals are the kernel's.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

/// Writes up to this many bytes are never split (pipe(7)).
pub const PIPE_BUF: usize = 4096;

/// Which end of a pipe a descriptor is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Reads.
    Read,
    /// Writes.
    Write,
}

/// What a read found.
#[derive(Debug, PartialEq, Eq)]
pub enum Read {
    /// These bytes (at least one), taken out.
    Bytes(Vec<u8>),
    /// Nothing there, and no writer left: read returns 0.
    EndOfFile,
    /// Nothing there yet: a blocking read waits.
    Empty,
}

/// What a write did.
#[derive(Debug, PartialEq, Eq)]
pub enum Write {
    /// Took the first this many bytes (at least one).
    Took(usize),
    /// No reader left: EPIPE and SIGPIPE.
    Broken,
    /// No room for them now: a blocking write waits.
    Full,
}

/// The bytes in a pipe and whether each end is still open (one open
/// description each, which dup'ed and inherited descriptors share).
#[derive(Debug)]
pub struct PipeBuffer {
    bytes: VecDeque<u8>,
    capacity: usize,
    readers: u32,
    writers: u32,
}

impl PipeBuffer {
    /// An empty pipe holding up to `capacity` bytes, both ends open.
    pub fn new(capacity: usize) -> Self {
        PipeBuffer {
            bytes: VecDeque::new(),
            capacity: capacity.max(PIPE_BUF),
            readers: 1,
            writers: 1,
        }
    }

    /// Bytes it holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Bytes waiting to be read.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True if no byte waits.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// `end`'s description closed.
    pub fn close(&mut self, end: End) {
        match end {
            End::Read => self.readers = self.readers.saturating_sub(1),
            End::Write => self.writers = self.writers.saturating_sub(1),
        }
    }

    /// True while a reader is left.
    pub fn has_reader(&self) -> bool {
        self.readers > 0
    }

    /// A read of up to `max` bytes (at least 1) would not wait.
    pub fn readable(&self) -> bool {
        !self.bytes.is_empty() || self.writers == 0
    }

    /// A write of `len` more bytes (of `total` in the call) would not wait.
    pub fn writable(&self, len: usize, total: usize) -> bool {
        self.readers == 0 || self.room() >= Self::needed(len, total)
    }

    /// A read of up to `max` bytes (at least 1).
    pub fn read(&mut self, max: usize) -> Read {
        if self.bytes.is_empty() {
            return if self.writers == 0 { Read::EndOfFile } else { Read::Empty };
        }
        let n = max.min(self.bytes.len());
        Read::Bytes(self.bytes.drain(..n).collect())
    }

    /// Puts bytes a read took back in front (copying them out failed).
    pub fn unread(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().rev() {
            self.bytes.push_front(b);
        }
    }

    /// A write of `data` (at least a byte), the rest of a call that writes
    /// `total` bytes in all: at most PIPE_BUF in all go in whole.
    pub fn write(&mut self, data: &[u8], total: usize) -> Write {
        if self.readers == 0 {
            return Write::Broken;
        }
        let room = self.room();
        if room == 0 || room < Self::needed(data.len(), total) {
            return Write::Full;
        }
        let n = data.len().min(room);
        self.bytes.extend(&data[..n]);
        Write::Took(n)
    }

    /// Every byte waiting, taken out (the pipe moves to Linux's side).
    pub fn take_all(&mut self) -> Vec<u8> {
        self.bytes.drain(..).collect()
    }

    /// Gives back the memory its bytes took (it holds none any more).
    pub fn release(&mut self) {
        self.bytes = VecDeque::new();
    }

    fn room(&self) -> usize {
        self.capacity - self.bytes.len()
    }

    /// Room a write needs before it may take anything: all of a short
    /// call's bytes, one byte of a long one's.
    fn needed(len: usize, total: usize) -> usize {
        if total <= PIPE_BUF {
            len
        } else {
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_come_out_in_order_and_no_more_than_asked() {
        let mut p = PipeBuffer::new(PIPE_BUF);
        assert_eq!(p.write(b"hello", 5), Write::Took(5));
        assert_eq!(p.read(2), Read::Bytes(b"he".to_vec()));
        assert_eq!(p.read(100), Read::Bytes(b"llo".to_vec()));
        assert_eq!(p.read(1), Read::Empty);
        assert!(!p.readable());
    }

    #[test]
    fn end_of_file_only_when_empty_and_no_writer_left() {
        let mut p = PipeBuffer::new(PIPE_BUF);
        p.write(b"x", 1);
        p.close(End::Write);
        assert!(p.readable());
        assert_eq!(p.read(8), Read::Bytes(b"x".to_vec()));
        assert_eq!(p.read(8), Read::EndOfFile);
    }

    #[test]
    fn no_reader_breaks_a_write_even_a_full_one() {
        let mut p = PipeBuffer::new(PIPE_BUF);
        p.write(&[0; PIPE_BUF], PIPE_BUF);
        assert!(p.has_reader());
        p.close(End::Read);
        assert!(!p.has_reader());
        assert!(p.writable(1, 1));
        assert_eq!(p.write(b"x", 1), Write::Broken);
    }

    #[test]
    fn a_short_write_goes_in_whole_or_waits() {
        let mut p = PipeBuffer::new(PIPE_BUF);
        assert_eq!(p.write(&[1; PIPE_BUF - 10], PIPE_BUF - 10), Write::Took(PIPE_BUF - 10));
        assert!(!p.writable(11, 11));
        assert_eq!(p.write(&[2; 11], 11), Write::Full);
        assert_eq!(p.len(), PIPE_BUF - 10);
        assert_eq!(p.write(&[2; 10], 10), Write::Took(10));
    }

    #[test]
    fn a_long_write_takes_what_fits() {
        let mut p = PipeBuffer::new(2 * PIPE_BUF);
        p.write(&[1; 100], 100);
        let data = [7u8; 3 * PIPE_BUF];
        assert_eq!(p.write(&data, data.len()), Write::Took(2 * PIPE_BUF - 100));
        assert_eq!(p.write(&data, data.len()), Write::Full);
        assert!(!p.writable(1, data.len()));
        p.read(1);
        assert!(p.writable(1, data.len()));
        assert_eq!(p.write(&data, data.len()), Write::Took(1));
    }

    #[test]
    fn unread_bytes_come_first_again() {
        let mut p = PipeBuffer::new(PIPE_BUF);
        p.write(b"abcdef", 6);
        let Read::Bytes(taken) = p.read(3) else { panic!() };
        p.unread(&taken);
        assert_eq!(p.take_all(), b"abcdef".to_vec());
        assert!(p.is_empty());
    }

    #[test]
    fn capacity_is_never_below_pipe_buf() {
        assert_eq!(PipeBuffer::new(100).capacity(), PIPE_BUF);
        assert_eq!(PipeBuffer::new(65536).capacity(), 65536);
    }
}
