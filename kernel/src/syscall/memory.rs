//! brk, mmap (anonymous here, of files in file_map.rs), munmap, mprotect,
//! mremap, madvise, and the NUMA policy calls. Each acts on the memory the
//! caller runs on (`Call::mem`: a vfork child's lender's).

use lwk_logic::user_pages::Access;

use lwk_logic::errno::*;

use super::{write_back, Call};
use crate::process::{uaccess, vm};

const PROT_READ: u64 = 1;
pub const PROT_WRITE: u64 = 2;
pub const PROT_EXEC: u64 = 4;
pub const MAP_SHARED: u64 = 0x01;
const MAP_PRIVATE: u64 = 0x02;
const MAP_FIXED: u64 = 0x10;
const MAP_ANONYMOUS: u64 = 0x20;
const MAP_FIXED_NOREPLACE: u64 = 0x100000;
const MAP_STACK: u64 = 0x20000;
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

pub fn access(prot: u64) -> Access {
    Access {
        read: prot & PROT_READ != 0,
        write: prot & PROT_WRITE != 0,
        exec: prot & PROT_EXEC != 0,
    }
}

/// After mappings shrank: no core may still see them (TLB), the host's
/// mirror drops them, then the frames are free (once no delegated call
/// that began before may still write them through the mirror).
pub fn retire(c: &Call, mut freed: vm::Freed) {
    let m = c.mem();
    freed.append(&mut m.vm.lock().take_unlinked());
    m.shoot_down();
    m.calls.free_after_calls(freed);
    crate::status::report_memory();
    m.report_usage();
}

/// After a mapping was made: if it replaced pages (or page tables), they go as `retire`
/// lets them. It may reuse addresses another thread unmapped a moment ago
/// whose shootdown has not finished: a core could still translate them to
/// the old frames, so that shootdown is done here before the program sees
/// the new mapping.
pub fn settle(c: &Call, mut freed: vm::Freed) {
    let m = c.mem();
    let behind = {
        let mut vm = m.vm.lock();
        freed.append(&mut vm.take_unlinked());
        m.shootdown_pending(&vm)
    };
    if !freed.is_empty() {
        return retire(c, freed);
    }
    if behind {
        m.shoot_down();
    }
    crate::status::report_memory();
    m.report_usage();
}

pub fn brk(c: &mut Call) -> SysResult {
    let mut freed = vm::Freed::new();
    let r = c.mem().vm.lock().brk(c.args[0], &mut freed);
    settle(c, freed);
    Ok(r)
}

/// mmap's placement flags.
pub fn how(flags: u64) -> vm::MapHow {
    vm::MapHow {
        fixed: flags & MAP_FIXED != 0,
        noreplace: flags & MAP_FIXED_NOREPLACE != 0,
        small_pages: flags & MAP_STACK != 0,
    }
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
