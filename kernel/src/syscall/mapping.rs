//! What the calls that map memory share: the protection and placement
//! flags, and what follows a change of mappings (TLB shootdown, the host's
//! mirror, freeing frames).

use lwk_logic::user_pages::Access;

use super::call::Call;
use crate::mm::vm;

pub const PROT_READ: u64 = 1;
pub const PROT_WRITE: u64 = 2;
pub const PROT_EXEC: u64 = 4;
pub const MAP_SHARED: u64 = 0x01;
pub const MAP_PRIVATE: u64 = 0x02;
pub const MAP_FIXED: u64 = 0x10;
pub const MAP_ANONYMOUS: u64 = 0x20;
pub const MAP_FIXED_NOREPLACE: u64 = 0x100000;
pub const MAP_STACK: u64 = 0x20000;

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

/// mmap's placement flags.
pub fn how(flags: u64) -> vm::MapHow {
    vm::MapHow {
        fixed: flags & MAP_FIXED != 0,
        noreplace: flags & MAP_FIXED_NOREPLACE != 0,
        small_pages: flags & MAP_STACK != 0,
    }
}
