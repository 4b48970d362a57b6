//! Reading and writing the program's memory (an iovec array, a msghdr)
//! without risking this process: the bytes go through a pipe, so the kernel
//! copies them and an unmapped program page gives EFAULT. Reading the
//! mirror directly would kill this process on such a page, and
//! process_vm_readv cannot read the mirror (device memory that
//! get_user_pages refuses). Only addresses in the program area are copied.

use crate::serve::policy;
use crate::sys;
use rustix::io::{read, write};
use rustix::pipe::{pipe_with, PipeFlags};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Mutex;

/// At most this much goes through the pipe at once: writes up to PIPE_BUF
/// are atomic and fit even a one-page pipe.
const CHUNK: usize = 4096;

pub struct UserCopy {
    /// (read end, write end), both non-blocking.
    pipe: Mutex<(OwnedFd, OwnedFd)>,
    fds: [RawFd; 2],
}

impl UserCopy {
    /// A copier whose pipe sits on descriptors >= `min_fd` where possible.
    pub fn new(min_fd: RawFd) -> io::Result<UserCopy> {
        let (read, write) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
        let high = |fd: OwnedFd| sys::dup_above(fd.as_fd(), min_fd).unwrap_or(fd);
        let (read, write) = (high(read), high(write));
        let fds = [read.as_raw_fd(), write.as_raw_fd()];
        Ok(UserCopy { pipe: Mutex::new((read, write)), fds })
    }

    /// The pipe's descriptors, which the program must not touch.
    pub fn fds(&self) -> [RawFd; 2] {
        self.fds
    }

    /// Copies the bytes at program address `addr` into `out`; EFAULT if any
    /// of them lies outside the program area or is not mapped.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), i32> {
        if !policy::inside(addr, out.len() as u64) {
            return Err(libc::EFAULT);
        }
        let pipe = self.pipe.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (read_end, write_end) = (pipe.0.as_fd(), pipe.1.as_raw_fd());
        for (i, chunk) in out.chunks_mut(CHUNK).enumerate() {
            let from = addr + (i * CHUNK) as u64;
            // SAFETY: write only reads `chunk.len()` bytes at `from`, in the
            // program area (checked above), the mirror; a fault there makes
            // it fail with EFAULT.
            let put = unsafe { libc::write(write_end, from as *const libc::c_void, chunk.len()) };
            if put != chunk.len() as isize {
                let errno = if put < 0 { io::Error::last_os_error().raw_os_error() } else { None };
                drain(read_end);
                return Err(errno.filter(|&e| e != libc::EFAULT).map_or(libc::EFAULT, |e| e));
            }
            let mut got = 0;
            while got < chunk.len() {
                match read(read_end, &mut chunk[got..]) {
                    Ok(n) if n > 0 => got += n,
                    _ => {
                        drain(read_end);
                        return Err(libc::EIO);
                    }
                }
            }
        }
        Ok(())
    }
}

impl UserCopy {
    /// The NUL-terminated string at program address `addr`, without its
    /// NUL: EFAULT if it leaves the program area or meets an unmapped page,
    /// E2BIG if it is longer than `max` bytes.
    pub fn read_c_string(&self, addr: u64, max: usize) -> Result<Vec<u8>, i32> {
        let mut out = Vec::new();
        let mut at = addr;
        loop {
            // Up to the end of the page: the next one may not be mapped.
            let n = (4096 - at % 4096).min(256) as usize;
            if !policy::inside(at, n as u64) {
                return Err(libc::EFAULT);
            }
            let mut chunk = vec![0u8; n];
            self.read(at, &mut chunk)?;
            if let Some(end) = chunk.iter().position(|&b| b == 0) {
                out.extend_from_slice(&chunk[..end]);
                return Ok(out);
            }
            out.extend_from_slice(&chunk);
            if out.len() > max {
                return Err(libc::E2BIG);
            }
            at += n as u64;
        }
    }

    /// Copies `bytes` to program address `addr`; EFAULT if any of them
    /// lies outside the program area or is not mapped.
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), i32> {
        if !policy::inside(addr, bytes.len() as u64) {
            return Err(libc::EFAULT);
        }
        let pipe = self.pipe.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (read_end, write_end) = (pipe.0.as_fd(), pipe.1.as_fd());
        for (i, chunk) in bytes.chunks(CHUNK).enumerate() {
            let to = addr + (i * CHUNK) as u64;
            if write(write_end, chunk) != Ok(chunk.len()) {
                drain(read_end);
                return Err(libc::EIO);
            }
            // SAFETY: read writes at most `chunk.len()` bytes at `to`, in the
            // program area (checked above), the mirror; a fault there makes
            // it fail with EFAULT. A pipe read of what one write put in is whole.
            let got = unsafe { libc::read(read_end.as_raw_fd(), to as *mut libc::c_void, chunk.len()) };
            if got != chunk.len() as isize {
                drain(read_end);
                return Err(libc::EFAULT);
            }
        }
        Ok(())
    }
}

/// Empties the pipe after a partial copy.
fn drain(read_end: BorrowedFd<'_>) {
    let mut scrap = [0u8; CHUNK];
    // The pipe is non-blocking, so this ends when it is empty.
    while read(read_end, &mut scrap).is_ok_and(|n| n > 0) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::passthrough::test_area::Area;

    #[test]
    fn copies_and_reports_faults() {
        let area = Area::map(0x2000_0004_0000);
        let copier = UserCopy::new(1000).unwrap();
        assert!(copier.fds().iter().all(|&fd| fd >= 1000));
        let source: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let at = area.put(0x100, &source);
        let mut out = vec![0u8; source.len()];
        copier.read(at, &mut out).unwrap();
        assert_eq!(out, source);
        // An unmapped page, and memory outside the program area.
        assert_eq!(copier.read(area.hole(), &mut out[..100]), Err(libc::EFAULT));
        assert_eq!(copier.read(source.as_ptr() as u64, &mut out[..100]), Err(libc::EFAULT));
        // Still usable afterwards, with nothing left over in the pipe.
        let mut small = [0u8; 3];
        copier.read(at + 5, &mut small).unwrap();
        assert_eq!(small, [5, 6, 7]);
    }

    #[test]
    fn writes_and_reports_faults() {
        let area = Area::map(0x2000_0005_0000);
        let copier = UserCopy::new(1000).unwrap();
        let bytes: Vec<u8> = (0..9000u32).map(|i| (i % 253) as u8).collect();
        copier.write(area.base, &bytes).unwrap();
        assert_eq!(area.get(0, 9000), bytes);
        assert_eq!(copier.write(area.hole(), &bytes[..10]), Err(libc::EFAULT));
        let mut ours = [0u8; 4];
        assert_eq!(copier.write(ours.as_mut_ptr() as u64, &bytes[..2]), Err(libc::EFAULT));
        copier.write(area.base, &[9, 9]).unwrap();
        assert_eq!(area.get(0, 3), [9, 9, 2]);
    }
}
