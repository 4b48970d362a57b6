//! Reading and writing the program's memory (an iovec array, a msghdr)
//! without risking this process: the bytes go through a pipe, so the kernel copies them and an
//! unmapped program page gives EFAULT. Reading the mirror directly would
//! kill this process on such a page, and process_vm_readv cannot read the
//! mirror (device memory that get_user_pages refuses).

use crate::sys;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};
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
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 just opened both descriptors; nothing else owns them.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
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
    /// of them is not mapped. `addr` must lie in the program area (checked
    /// by the caller), so the kernel only ever reads the mirror.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), i32> {
        let pipe = self.pipe.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (read_end, write_end) = (pipe.0.as_raw_fd(), pipe.1.as_raw_fd());
        for (i, chunk) in out.chunks_mut(CHUNK).enumerate() {
            let from = addr + (i * CHUNK) as u64;
            // SAFETY: write only reads `chunk.len()` bytes at `from`, program
            // memory in the mirror; a fault there makes it fail with EFAULT.
            let put = unsafe { libc::write(write_end, from as *const libc::c_void, chunk.len()) };
            if put != chunk.len() as isize {
                let errno = if put < 0 { io::Error::last_os_error().raw_os_error() } else { None };
                drain(read_end);
                return Err(errno.filter(|&e| e != libc::EFAULT).map_or(libc::EFAULT, |e| e));
            }
            let mut got = 0;
            while got < chunk.len() {
                let rest = &mut chunk[got..];
                // SAFETY: `rest` is an exclusively borrowed buffer of
                // rest.len() bytes; read writes at most that many.
                let n = unsafe { libc::read(read_end, rest.as_mut_ptr().cast(), rest.len()) };
                if n <= 0 {
                    drain(read_end);
                    return Err(libc::EIO);
                }
                got += n as usize;
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
            if !super::policy::inside(at, n as u64) {
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

    /// Copies `bytes` to program address `addr`; EFAULT if any of them is
    /// not mapped. `addr` must lie in the program area (checked by the
    /// caller), so the kernel only ever writes the mirror.
    pub fn write(&self, addr: u64, bytes: &[u8]) -> Result<(), i32> {
        let pipe = self.pipe.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (read_end, write_end) = (pipe.0.as_raw_fd(), pipe.1.as_raw_fd());
        for (i, chunk) in bytes.chunks(CHUNK).enumerate() {
            let to = addr + (i * CHUNK) as u64;
            // SAFETY: write reads `chunk.len()` bytes of our own slice.
            let put = unsafe { libc::write(write_end, chunk.as_ptr().cast(), chunk.len()) };
            if put != chunk.len() as isize {
                drain(read_end);
                return Err(libc::EIO);
            }
            // SAFETY: read writes at most `chunk.len()` bytes at `to`,
            // program memory in the mirror; a fault there makes it fail
            // with EFAULT. A pipe read of what one write put in is whole.
            let got = unsafe { libc::read(read_end, to as *mut libc::c_void, chunk.len()) };
            if got != chunk.len() as isize {
                drain(read_end);
                return Err(libc::EFAULT);
            }
        }
        Ok(())
    }
}

/// Empties the pipe after a partial copy.
fn drain(read_end: RawFd) {
    let mut scrap = [0u8; CHUNK];
    // SAFETY: `scrap` is a local buffer of CHUNK bytes; read writes at most
    // that many. The pipe is non-blocking, so this ends when it is empty.
    while unsafe { libc::read(read_end, scrap.as_mut_ptr().cast(), scrap.len()) } > 0 {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_reports_faults() {
        let copier = UserCopy::new(1000).unwrap();
        assert!(copier.fds().iter().all(|&fd| fd >= 1000));
        // This process's own memory stands in for the program's here.
        let source: Vec<u8> = (0..10_000u32).map(|i| (i % 251) as u8).collect();
        let mut out = vec![0u8; source.len()];
        copier.read(source.as_ptr() as u64, &mut out).unwrap();
        assert_eq!(out, source);
        // Page 0 is never mapped.
        assert_eq!(copier.read(16, &mut out[..100]), Err(libc::EFAULT));
        // Still usable afterwards, with nothing left over in the pipe.
        let mut small = [0u8; 3];
        copier.read(source[5..].as_ptr() as u64, &mut small).unwrap();
        assert_eq!(small, [5, 6, 7]);
    }

    #[test]
    fn writes_and_reports_faults() {
        let copier = UserCopy::new(1000).unwrap();
        let mut target = vec![0u8; 9000];
        let bytes: Vec<u8> = (0..9000u32).map(|i| (i % 253) as u8).collect();
        copier.write(target.as_mut_ptr() as u64, &bytes).unwrap();
        assert_eq!(target, bytes);
        assert_eq!(copier.write(16, &bytes[..10]), Err(libc::EFAULT));
        copier.write(target.as_mut_ptr() as u64, &[9, 9]).unwrap();
        assert_eq!(&target[..3], &[9, 9, 2]);
    }
}
