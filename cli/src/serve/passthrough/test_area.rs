//! For the tests: anonymous memory at a fixed address in the program area
//! of the test process, where the mirror would be.

use rustix::mm::{mmap_anonymous, munmap, MapFlags, ProtFlags};

/// One per test, each at its own address (the tests run side by side).
pub struct Area {
    pub base: u64,
    pub len: usize,
}

impl Area {
    pub fn map(base: u64) -> Area {
        let len = 0x10000;
        let flags = MapFlags::PRIVATE | MapFlags::FIXED_NOREPLACE;
        // SAFETY: a new private mapping at an address this process does not
        // use (MAP_FIXED_NOREPLACE fails otherwise); nothing aliases it.
        let at = unsafe { mmap_anonymous(base as *mut _, len, ProtFlags::READ | ProtFlags::WRITE, flags) };
        assert_eq!(at.map(|at| at as u64), Ok(base), "cannot map the test area");
        Area { base, len }
    }

    pub fn put(&self, offset: u64, bytes: &[u8]) -> u64 {
        assert!(offset as usize + bytes.len() <= self.len);
        // SAFETY: inside this mapping, which only this test uses.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), (self.base + offset) as *mut u8, bytes.len()) };
        self.base + offset
    }

    pub fn get(&self, offset: u64, len: usize) -> Vec<u8> {
        assert!(offset as usize + len <= self.len);
        // SAFETY: inside this mapping, which only this test uses.
        unsafe { std::slice::from_raw_parts((self.base + offset) as *const u8, len).to_vec() }
    }

    /// An address in the program area past this mapping, never mapped.
    pub fn hole(&self) -> u64 {
        self.base + self.len as u64 + 0x10_0000
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `map`.
        let _ = unsafe { munmap(self.base as *mut _, self.len) };
    }
}
