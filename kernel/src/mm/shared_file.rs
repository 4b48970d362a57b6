//! The enclave's one copy of each file page that programs map MAP_SHARED:
//! every process of the enclave that maps the same page of the same file
//! (its Linux device and inode) maps the same frame, so writes by one are
//! seen by the others at once (MPI's shared-memory transports rely on it).
//! A page lives while some mapping holds it; the last unmap lets go of
//! the file's hold on its frame (each mapping's leaf holds one of its own).

use crate::sync::SpinLock as Mutex;
use alloc::collections::BTreeMap;
use alloc::sync::Arc;
use hal::frames::Frames;
use lwk_logic::errno::{Errno, ENOMEM};

/// A file as Linux knows it: (st_dev, st_ino).
pub type FileKey = (u64, u64);

pub struct SharedFile {
    key: FileKey,
    /// Page index in the file -> (its frame, mappings holding it).
    pages: Mutex<BTreeMap<u64, (Frames, u32)>>,
}

static FILES: Mutex<BTreeMap<FileKey, Arc<SharedFile>>> = Mutex::new(BTreeMap::new());

/// The shared pages of file `key`.
pub fn open(key: FileKey) -> Arc<SharedFile> {
    FILES
        .lock()
        .entry(key)
        .or_insert_with(|| Arc::new(SharedFile { key, pages: Mutex::new(BTreeMap::new()) }))
        .clone()
}

/// The shared pages of file `key`, if the enclave has any.
pub fn find(key: FileKey) -> Option<Arc<SharedFile>> {
    FILES.lock().get(&key).cloned()
}

impl SharedFile {
    /// One more mapping of page `index`: a hold on its frame, which is
    /// `offered` (a frame that holds the page's bytes) if the enclave had
    /// no copy yet. ENOMEM, and no mapping more, if the frame has as many
    /// holders as it can count.
    pub fn hold(&self, index: u64, offered: Frames) -> Result<Frames, Errno> {
        let mut pages = self.pages.lock();
        let entry = pages.entry(index).or_insert((offered, 0));
        let frame = entry.0.share().ok_or(ENOMEM)?;
        entry.1 += 1;
        Ok(frame)
    }

    pub fn key(&self) -> FileKey {
        self.key
    }

    /// One more mapping of page `index`, if the enclave has it: a hold on
    /// its frame (ENOMEM as in `hold`).
    pub fn hold_existing(&self, index: u64) -> Result<Option<Frames>, Errno> {
        let mut pages = self.pages.lock();
        let Some(entry) = pages.get_mut(&index) else { return Ok(None) };
        let frame = entry.0.share().ok_or(ENOMEM)?;
        entry.1 += 1;
        Ok(Some(frame))
    }

    /// How many hold page `index` (mappings, and a System V segment's own).
    pub fn holders(&self, index: u64) -> u32 {
        self.pages.lock().get(&index).map_or(0, |&(_, n)| n)
    }

    /// One mapping of page `index` fewer; the last lets go of the file's
    /// hold on its frame.
    pub fn release(&self, index: u64) {
        let mut files = FILES.lock();
        let mut pages = self.pages.lock();
        let Some(entry) = pages.get_mut(&index) else { return };
        entry.1 -= 1;
        if entry.1 == 0 {
            pages.remove(&index);
        }
        if pages.is_empty() {
            files.remove(&self.key);
        }
    }
}
