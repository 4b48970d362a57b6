//! System V shared memory (shmget, shmat, shmdt, shmctl) among the
//! processes of this enclave: a segment is a set of enclave frames held in
//! shared_file.rs under a key no Linux file has, so attaching it is the
//! same as mapping a shared file. A segment lives until IPC_RMID and its
//! last detach, as on Linux. Linux's own segments are not these: a key
//! names a segment in this enclave only.

use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use hal::frames::Frames;
use lwk_logic::errno::*;

use super::shared_file::{self, FileKey};
use crate::sync::SpinLock;

/// The device number in a segment's FileKey: no Linux file system has it.
const SYSV_DEVICE: u64 = u64::MAX;
const PAGE: u64 = 4096;
/// Linux's SHMMAX default is far larger; this bounds one request's frames.
const MAX_SIZE: u64 = 1 << 36;

pub struct Segment {
    pub key: i32,
    pub size: u64,
    pub mode: u32,
    pub creator: u32,
    /// IPC_RMID came: its key finds it no more, and the frames go with the
    /// last detach; until then it may still be attached by id, as on Linux
    /// (UCX removes a segment at once and its peers attach it afterwards).
    pub removed: bool,
}

static SEGMENTS: SpinLock<BTreeMap<u32, Segment>> = SpinLock::new(BTreeMap::new());
static NEXT_ID: SpinLock<u32> = SpinLock::new(1);

pub fn file_key(id: u32) -> FileKey {
    (SYSV_DEVICE, u64::from(id))
}

/// Whether a shared range's file is a segment (and which).
pub fn segment_of(key: FileKey) -> Option<u32> {
    (key.0 == SYSV_DEVICE).then_some(key.1 as u32)
}

/// shmget: the segment with `key` (IPC_PRIVATE: always a new one), made
/// with `size` bytes of zeroed frames when `create` allows.
pub fn get(
    key: i32,
    size: u64,
    create: bool,
    exclusive: bool,
    mode: u32,
    pid: u32,
) -> Result<u32, Errno> {
    const IPC_PRIVATE: i32 = 0;
    let mut segments = SEGMENTS.lock();
    if key != IPC_PRIVATE {
        if let Some((&id, s)) = segments.iter().find(|(_, s)| s.key == key && !s.removed) {
            if create && exclusive {
                return Err(EEXIST);
            }
            return if size > s.size { Err(EINVAL) } else { Ok(id) };
        }
        if !create {
            return Err(ENOENT);
        }
    }
    if size == 0 || size > MAX_SIZE {
        return Err(EINVAL);
    }
    let pages = size.div_ceil(PAGE);
    let frames: Vec<Frames> =
        (0..pages).map(|_| Frames::alloc_zeroed(1, 1)).collect::<Option<_>>().ok_or(ENOMEM)?;
    let id = {
        let mut next = NEXT_ID.lock();
        let id = *next;
        *next = next.wrapping_add(1).max(1);
        id
    };
    // The segment itself holds each page until IPC_RMID.
    let file = shared_file::open(file_key(id));
    for (i, f) in frames.into_iter().enumerate() {
        // A new frame has one holder, so this cannot fail: the file keeps
        // it, this hold goes.
        drop(file.hold(i as u64, f));
    }
    segments.insert(id, Segment { key, size, mode: mode & 0o777, creator: pid, removed: false });
    Ok(id)
}

/// The size of segment `id`, to attach it.
pub fn size_of(id: u32) -> Result<u64, Errno> {
    SEGMENTS.lock().get(&id).map(|s| s.size).ok_or(EINVAL)
}

/// IPC_RMID: the segment's own hold on its pages goes; they are freed as
/// soon as no process has them attached.
pub fn remove(id: u32) -> Result<(), Errno> {
    let size = {
        let mut segments = SEGMENTS.lock();
        let s = segments.get_mut(&id).ok_or(EINVAL)?;
        if s.removed {
            return Ok(());
        }
        s.removed = true;
        s.size
    };
    let file = shared_file::open(file_key(id));
    for i in 0..size.div_ceil(PAGE) {
        file.release(i);
    }
    forget_if_unused(id);
    Ok(())
}

/// Drops a removed segment's entry once nothing holds its pages.
pub fn forget_if_unused(id: u32) {
    let mut segments = SEGMENTS.lock();
    if segments.get(&id).is_some_and(|s| s.removed) && shared_file::find(file_key(id)).is_none() {
        segments.remove(&id);
    }
}

/// IPC_STAT's facts: (key, size, mode, creator pid, attaches).
pub fn stat(id: u32) -> Result<(i32, u64, u32, u32, u32), Errno> {
    let segments = SEGMENTS.lock();
    let s = segments.get(&id).ok_or(EINVAL)?;
    let holders = shared_file::find(file_key(id)).map_or(0, |f| f.holders(0));
    let attaches = holders.saturating_sub(u32::from(!s.removed));
    Ok((s.key, s.size, s.mode | if s.removed { 0o1000 } else { 0 }, s.creator, attaches))
}
