//! mmap of a file. The pages live in enclave memory: the LWK maps them
//! (writable at first), has the program's `atoll run` fill them from the
//! file with a delegated pread64 (Linux writes through its mirror of the
//! program's memory), then gives them the protection asked for. A private
//! mapping is the program's own copy, as on Linux. A shared one maps the
//! enclave's one copy of the file's pages (process::shared_file): every
//! process in the enclave that maps them sees the others' writes; a
//! writable one's pages go back to the file on Linux at msync, munmap and
//! the program's end (write_back.rs). Each mapping is labelled with the
//! file's name, device and inode for /proc/self/maps (proc_maps.rs).

use lwk_logic::errno::*;
use lwk_logic::maps::Backing;

use super::call::Call;
use super::mapping::{access, how, retire, settle, MAP_SHARED, PROT_EXEC};
use super::proc_maps::{self, STAT_SIZE};
use super::write_back;
use crate::mm::uaccess;
use crate::mm::vm;
use crate::process::delegate;
use lwk_logic::user_pages::Access;

const SYS_PREAD64: u64 = 17;
const SYS_FSTAT: u64 = 5;
const S_IFMT: u32 = 0o170000;
const S_IFREG: u32 = 0o100000;

pub fn mmap_file(
    c: &mut Call,
    addr: u64,
    len: u64,
    prot: u64,
    flags: u64,
    fd: u64,
    offset: u64,
) -> SysResult {
    if !offset.is_multiple_of(4096) || len == 0 {
        return Err(EINVAL);
    }
    let shared = flags & MAP_SHARED != 0;
    let filling = Access { read: true, write: true, exec: prot & PROT_EXEC != 0 };
    let mut placement = how(flags);
    // Shared pages are 4 KiB each, one by one from the file's copy.
    placement.small_pages |= shared;
    let mut freed = vm::Freed::new();
    let at = c.mem().vm.lock().mmap(addr, len, filling, placement, &mut freed);
    settle(c, freed);
    let at = at?;
    let len = vm::page_up(len);
    // The name is only for /proc/self/maps: a file that has none maps as well.
    let named = proc_maps::file_name(c, fd, at).ok();
    let filled = if shared {
        let stat = match &named {
            Some((_, stat)) => Ok(*stat),
            None => stat_of(c, fd, at),
        };
        stat.and_then(|stat| share(c, fd, at, len, offset, access(prot), &stat))
    } else {
        fill(c, fd, at, len, offset)
    };
    if let Err(e) = filled {
        let mut freed = vm::Freed::new();
        c.mem().vm.lock().unmap(at, len, &mut freed);
        retire(c, freed);
        return Err(e);
    }
    if let Some((name, _)) = named {
        c.mem().vm.lock().label(at, at + len, shared, &Backing::File { name, offset });
    }
    if shared {
        return Ok(at);
    }
    if access(prot) != filling {
        // Freshly filled: no frame of it is shared, nothing is freed.
        let mut freed = vm::Freed::new();
        let r = c.mem().vm.lock().protect(at, len, access(prot), &mut freed);
        // Write access went: no core and no mirror mapping may keep it.
        retire(c, freed);
        r?;
    }
    Ok(at)
}

/// The struct stat of the file behind `fd`, by a delegated fstat into the
/// fresh mapping at `at`, zeroed again after.
fn stat_of(c: &Call, fd: u64, at: u64) -> Result<[u8; STAT_SIZE], Errno> {
    let answer = delegate::call(c.user, atoll_abi::CALL_SYSCALL, SYS_FSTAT, [fd, at, 0, 0, 0, 0])?;
    Errno::from_return(answer)?;
    let mut stat = [0u8; STAT_SIZE];
    uaccess::read_bytes(c.process, at, &mut stat)?;
    uaccess::write_bytes(c.process, at, &[0; STAT_SIZE])?;
    Ok(stat)
}

/// Maps the enclave's copy of the file's pages at [at, at + len) (mapped
/// already, 4 KiB pages, writable): the file is found by its device and
/// inode (its `stat`), and the pages the enclave does not have yet are
/// read from it.
fn share(
    c: &Call,
    fd: u64,
    at: u64,
    len: u64,
    offset: u64,
    access: Access,
    stat: &[u8; STAT_SIZE],
) -> Result<(), Errno> {
    // struct stat on x86-64: st_dev, st_ino at 0 and 8, st_mode at 24, st_size at 48.
    let word = |at: usize| u64::from_le_bytes(stat[at..at + 8].try_into().unwrap_or_default());
    let mode = u32::from_le_bytes(stat[24..28].try_into().unwrap_or_default());
    if mode & S_IFMT != S_IFREG {
        return Err(ENODEV);
    }
    fill(c, fd, at, len, offset)?;
    let write_back = if access.write { write_back::keep(c, fd, word(48))? } else { None };
    let from = vm::FilePages { key: (word(0), word(8)), first_page: offset / 4096, write_back };
    let mut freed = vm::Freed::new();
    let r = c.mem().vm.lock().share(at, len, from, access, &mut freed);
    if r.is_err() {
        write_back::forget(c, write_back);
    }
    // Pages replaced by the enclave's copies, or write access taken away,
    // must leave every core and the mirror.
    if access.write {
        settle(c, freed);
    } else {
        retire(c, freed);
    }
    r
}

/// Reads the file from `offset` into [at, at + len); what lies past the
/// end of the file stays zero.
fn fill(c: &Call, fd: u64, at: u64, len: u64, offset: u64) -> Result<(), Errno> {
    let mut done = 0;
    while done < len {
        let args = [fd, at + done, len - done, offset + done, 0, 0];
        let answer =
            delegate::call_interruptible(c.user, atoll_abi::CALL_SYSCALL, SYS_PREAD64, args)?;
        match Errno::from_return(answer.ret) {
            Ok(0) => break,
            Ok(n) => done += n,
            // A signal came while Linux read: read the rest.
            Err(e) if e == EINTR && answer.cancelled => {}
            // Not a file one can map (a pipe, a socket, a directory...).
            Err(e) if e == ESPIPE || e == EISDIR || e == EINVAL => return Err(ENODEV),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
