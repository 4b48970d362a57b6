//! A program's file as execve reads it: mapped read-only and private, so
//! its bytes come from Linux's page cache as they are touched, not copied
//! into a buffer first (for a 770 KiB static program that copy and its
//! freeing were a quarter of a posix_spawn's time in an enclave). A file
//! cut short while mapped raises SIGBUS when its lost pages are touched,
//! which ends `atoll run` and so its program, as it ends a Linux process
//! that touches such a page of its own program. (Linux also refuses writes
//! to a file being exec'ed, ETXTBSY; here a writer meanwhile changes what
//! is read, which only the program being started sees.)

use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;
use std::path::Path;
use std::ptr::NonNull;

use rustix::mm::{mmap, munmap, MapFlags, ProtFlags};

pub struct MappedFile {
    /// None for an empty file or one that is not a regular file (then
    /// read into `read`, as before).
    at: Option<NonNull<u8>>,
    len: usize,
    read: Vec<u8>,
}

// SAFETY: the mapping is read-only and owned by this value alone.
unsafe impl Send for MappedFile {}
// SAFETY: as above; shared references only read.
unsafe impl Sync for MappedFile {}

impl MappedFile {
    /// The file at `path`, mapped if it is a regular file (else read, with
    /// read's errors: EISDIR for a directory).
    pub fn open(path: &Path) -> io::Result<MappedFile> {
        let file = File::open(path)?;
        let meta = file.metadata()?;
        let len = usize::try_from(meta.len()).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
        if !meta.is_file() || len == 0 {
            let mut read = Vec::new();
            (&file).read_to_end(&mut read)?;
            return Ok(MappedFile { at: None, len: 0, read });
        }
        // SAFETY: a new private read-only mapping at an address the kernel
        // picks overlaps nothing of ours; it stays valid until Drop.
        let at = unsafe { mmap(std::ptr::null_mut(), len, ProtFlags::READ, MapFlags::PRIVATE, &file, 0)? };
        Ok(MappedFile { at: NonNull::new(at.cast()), len, read: Vec::new() })
    }
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MappedFile({} bytes)", self.len())
    }
}

impl Deref for MappedFile {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self.at {
            // SAFETY: `len` readable bytes are mapped at `at` until Drop.
            Some(at) => unsafe { std::slice::from_raw_parts(at.as_ptr(), self.len) },
            None => &self.read,
        }
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        if let Some(at) = self.at {
            // SAFETY: our own mapping, and no slice of it outlives `self`.
            let _ = unsafe { munmap(at.as_ptr().cast(), self.len) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_what_read_reads() {
        let path = std::env::current_exe().unwrap();
        let mapped = MappedFile::open(&path).unwrap();
        assert_eq!(&mapped[..], &std::fs::read(&path).unwrap()[..]);
    }

    #[test]
    fn an_empty_file_is_empty() {
        let dir = std::env::temp_dir().join(format!("atoll-mapped-{}", std::process::id()));
        std::fs::write(&dir, b"").unwrap();
        assert!(MappedFile::open(&dir).unwrap().is_empty());
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn a_directory_is_refused_as_read_refuses_it() {
        let e = MappedFile::open(Path::new("/")).err().unwrap();
        assert_eq!(e.raw_os_error(), Some(libc::EISDIR));
    }

    #[test]
    fn a_missing_file_says_so() {
        let e = MappedFile::open(Path::new("/nonexistent/atoll")).err().unwrap();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    }
}
