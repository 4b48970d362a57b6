//! System V shared memory calls (process::sysv_shm has the segments):
//! shmat maps a segment as a shared file mapping is mapped.

use lwk_logic::errno::*;
use lwk_logic::maps::Backing;
use lwk_logic::user_pages::Access;

use super::call::Call;
use super::mapping::{how, retire, settle};
use crate::mm::uaccess;
use crate::mm::{sysv_shm, vm};

const IPC_CREAT: u64 = 0o1000;
const IPC_EXCL: u64 = 0o2000;
const IPC_RMID: u64 = 0;
const IPC_SET: u64 = 1;
const IPC_STAT: u64 = 2;
const SHM_RDONLY: u64 = 0o10000;
const SHM_RND: u64 = 0o20000;
const SHM_EXEC: u64 = 0o100000;
const SHMLBA: u64 = 4096;
/// shmat at an address must not replace what is there (no SHM_REMAP).
const MAP_FIXED_NOREPLACE: u64 = 0x100000;
/// struct shmid_ds on x86-64.
const SHMID_DS_SIZE: usize = 112;

pub fn shmget(c: &mut Call) -> SysResult {
    let [key, size, flags, ..] = c.args;
    let id = sysv_shm::get(
        key as i32,
        size,
        flags & IPC_CREAT != 0,
        flags & IPC_EXCL != 0,
        flags as u32,
        c.process.pid,
    )?;
    crate::status::report_memory();
    Ok(u64::from(id))
}

pub fn shmat(c: &mut Call) -> SysResult {
    let [id, addr, flags, ..] = c.args;
    let id = id as u32;
    let size = vm::page_up(sysv_shm::size_of(id)?);
    let key = sysv_shm::stat(id).map_or(0, |facts| facts.0);
    let addr = if flags & SHM_RND != 0 { addr & !(SHMLBA - 1) } else { addr };
    if !addr.is_multiple_of(SHMLBA) {
        return Err(EINVAL);
    }
    let access = Access { read: true, write: flags & SHM_RDONLY == 0, exec: flags & SHM_EXEC != 0 };
    let mut placement = how(if addr != 0 { MAP_FIXED_NOREPLACE } else { 0 });
    placement.small_pages = true;
    let mut freed = vm::Freed::new();
    let m = c.mem();
    let mut space = m.vm.lock();
    let at = space.mmap(addr, size, Access::NONE, placement, &mut freed).map_err(|e| {
        if e == EEXIST {
            EINVAL
        } else {
            e
        }
    });
    let r = at.and_then(|at| {
        // Reserved without frames: every page is the segment's.
        space.share_reserved(at, size, sysv_shm::file_key(id), access)?;
        space.label(at, at + size, true, &Backing::SysV { key, id });
        Ok(at)
    });
    if let (Err(_), Ok(at)) = (&r, at) {
        space.unmap(at, size, &mut freed);
    }
    drop(space);
    settle(c, freed);
    r
}

pub fn shmdt(c: &mut Call) -> SysResult {
    let addr = c.args[0];
    let m = c.mem();
    let mut space = m.vm.lock();
    let (key, end) = space.shared_at(addr).ok_or(EINVAL)?;
    sysv_shm::segment_of(key).ok_or(EINVAL)?;
    let mut freed = vm::Freed::new();
    space.unmap(addr, end - addr, &mut freed);
    drop(space);
    retire(c, freed);
    Ok(0)
}

pub fn shmctl(c: &mut Call) -> SysResult {
    let [id, cmd, buf, ..] = c.args;
    let id = id as u32;
    match cmd & 0xff {
        IPC_RMID => sysv_shm::remove(id).map(|()| 0),
        IPC_SET => sysv_shm::stat(id).map(|_| 0),
        IPC_STAT => {
            let (key, size, mode, creator, attaches) = sysv_shm::stat(id)?;
            let mut ds = [0u8; SHMID_DS_SIZE];
            let mut put = |at: usize, bytes: &[u8]| ds[at..at + bytes.len()].copy_from_slice(bytes);
            put(0, &key.to_le_bytes()); // shm_perm.__key
            put(20, &mode.to_le_bytes()); // shm_perm.mode
            put(48, &size.to_le_bytes()); // shm_segsz
            put(80, &creator.to_le_bytes()); // shm_cpid
            put(88, &u64::from(attaches).to_le_bytes()); // shm_nattch
            uaccess::write_bytes(c.process, buf, &ds).map(|()| 0)
        }
        _ => Err(EINVAL),
    }
}
