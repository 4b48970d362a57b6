//! brk, mmap (anonymous here, of files in file_map.rs), munmap, mprotect,
//! mremap, madvise, and the NUMA policy calls. Each acts on the memory the
//! caller runs on (`Call::mem`: a vfork child's lender's).

use lwk_logic::errno::*;

use super::call::Call;
use super::mapping::*;
use super::write_back;
use crate::mm::uaccess;
use crate::mm::vm;

const MREMAP_MAYMOVE: u64 = 1;
const MADV_DONTNEED: u64 = 4;
/// At most this many mappings, as Linux's vm.max_map_count: each is kept
/// for /proc/self/maps in the LWK's own memory.
const MAX_MAP_COUNT: usize = 65530;

/// ENOMEM once the program has MAX_MAP_COUNT mappings, for a call that
/// would add some (at most two each), as Linux refuses it: mmap and mremap,
/// and munmap and mprotect of `range` if it cuts a mapping in two.
fn room_for_mappings(c: &Call, range: Option<(u64, u64)>) -> Result<(), Errno> {
    let m = c.mem();
    let vm = m.vm.lock();
    let maps = vm.maps();
    if maps.len() >= MAX_MAP_COUNT && range.is_none_or(|(s, e)| maps.cuts(s, e)) {
        return Err(ENOMEM);
    }
    Ok(())
}

pub fn brk(c: &mut Call) -> SysResult {
    let mut freed = vm::Freed::new();
    let r = c.mem().vm.lock().brk(c.args[0], &mut freed);
    settle(c, freed);
    Ok(r)
}

pub fn mmap(c: &mut Call) -> SysResult {
    let [addr, len, prot, flags, fd, offset] = c.args;
    if flags & (MAP_SHARED | MAP_PRIVATE) == 0 || prot & !(PROT_READ | PROT_WRITE | PROT_EXEC) != 0
    {
        return Err(EINVAL);
    }
    room_for_mappings(c, None)?;
    // A MAP_FIXED mapping replaces what was there as munmap would.
    let fixed = flags & MAP_FIXED != 0 && addr.is_multiple_of(4096) && len > 0;
    let replaced =
        fixed.then(|| write_back::before_unmap(c, addr, addr.saturating_add(vm::page_up(len))));
    let r = if flags & MAP_ANONYMOUS == 0 {
        super::file_map::mmap_file(c, addr, len, prot, flags, fd, offset)
    } else {
        let mut freed = vm::Freed::new();
        let r = c.mem().vm.lock().mmap(addr, len, access(prot), how(flags), &mut freed);
        settle(c, freed);
        r
    };
    if let Some(kept) = replaced {
        write_back::close_unkept(c, kept);
    }
    r
}

pub fn munmap(c: &mut Call) -> SysResult {
    let [addr, len, ..] = c.args;
    if addr % 4096 != 0 || len == 0 {
        return Err(EINVAL);
    }
    room_for_mappings(c, Some((addr, addr.saturating_add(vm::page_up(len)))))?;
    let kept = write_back::before_unmap(c, addr, addr.saturating_add(vm::page_up(len)));
    let mut freed = vm::Freed::new();
    c.mem().vm.lock().unmap(addr, len, &mut freed);
    retire(c, freed);
    write_back::close_unkept(c, kept);
    Ok(0)
}

pub fn mprotect(c: &mut Call) -> SysResult {
    let [addr, len, prot, ..] = c.args;
    if len == 0 {
        return Ok(0);
    }
    room_for_mappings(c, Some((addr, addr.saturating_add(vm::page_up(len)))))?;
    let mut freed = vm::Freed::new();
    let r = c.mem().vm.lock().protect(addr, len, access(prot), &mut freed);
    // Taking access away must reach every core and the host's mirror;
    // giving it may have replaced a page table or a frame shared with
    // another process (settle frees them).
    if r.is_ok() && prot & PROT_WRITE == 0 {
        retire(c, freed);
    } else {
        settle(c, freed);
    }
    r.map(|()| 0)
}

pub fn mremap(c: &mut Call) -> SysResult {
    let [old, old_len, new_len, flags, ..] = c.args;
    if flags & !MREMAP_MAYMOVE != 0 {
        return Err(EINVAL);
    }
    room_for_mappings(c, None)?;
    // A shared file range that moves or shrinks is no longer written back
    // (README): descriptors it alone kept are closed.
    let kept = write_back::kept_in(c, old, old.saturating_add(vm::page_up(old_len)));
    let mut freed = vm::Freed::new();
    let r =
        c.mem().vm.lock().mremap(old, old_len, new_len, flags & MREMAP_MAYMOVE != 0, &mut freed);
    retire(c, freed);
    write_back::close_unkept(c, kept);
    r
}

pub fn madvise(c: &mut Call) -> SysResult {
    let [addr, len, advice, ..] = c.args;
    if addr % 4096 != 0 {
        return Err(EINVAL);
    }
    // DONTNEED'ed anonymous memory reads as zero afterwards (glibc's
    // malloc relies on it); other advice changes nothing here.
    if advice == MADV_DONTNEED {
        let mut freed = vm::Freed::new();
        let r = c.mem().vm.lock().zero(addr, len, &mut freed);
        // Dirty marks were cleared: no core and no mirror mapping may skip
        // setting them again.
        retire(c, freed);
        r?;
    }
    Ok(0)
}

/// mbind and set_mempolicy: an enclave's memory is one node, so every
/// policy places memory where it already goes.
pub fn set_mempolicy(_c: &mut Call) -> SysResult {
    Ok(0)
}

/// get_mempolicy: an enclave's memory is one node with the default policy
/// (libnuma and hwloc ask).
pub fn get_mempolicy(c: &mut Call) -> SysResult {
    const MPOL_DEFAULT: u32 = 0;
    let [mode, nodemask, max_node, ..] = c.args;
    if mode != 0 {
        uaccess::write_u32(c.process, mode, MPOL_DEFAULT)?;
    }
    if nodemask != 0 && max_node > 0 {
        // Node 0 only, in the first word of the mask.
        uaccess::write_u64(c.process, nodemask, 1)?;
    }
    Ok(0)
}
