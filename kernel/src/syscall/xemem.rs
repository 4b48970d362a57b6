//! XEMEM's one system call (ATOLL_SYS_XEMEM, 1002): a struct atoll_xemem_io
//! in, the answer written back into it; xemem/xpmem.h wraps it (and falls
//! back to /dev/atoll's ioctl on Linux, where the call does not exist).

use atoll_abi::xemem_bytes::XEMEM_IO_BYTES;
use atoll_abi::*;
use lwk_logic::errno::*;

use super::call::Call;
use super::mapping::{retire, settle};
use crate::mm::uaccess;
use crate::mm::vm;
use crate::process::{deferred_server, xemem};
use hal::{cpu, tsc};

/// xemem(struct atoll_xemem_io *io): 0, or -errno.
pub fn xemem(c: &mut Call) -> SysResult {
    // A vfork child runs on its parent's memory, whose segments and
    // attachments are the parent's: it may exec or _exit, not export it.
    if c.mem().is_lent() {
        return Err(EINVAL);
    }
    // Linux tells who holds a segment by its area's server: it needs one.
    deferred_server::serve_self(c.process)?;
    let at = c.args[0];
    let mut bytes = [0u8; XEMEM_IO_BYTES];
    uaccess::read_bytes(c.process, at, &mut bytes)?;
    let mut io = XememIo::from_bytes(&bytes);
    if io.hdr.magic != MAGIC_XEMEM || io.hdr.size as usize != XEMEM_IO_BYTES {
        return Err(EINVAL);
    }
    if io.hdr.version != ABI_VERSION {
        return Err(EPROTO);
    }
    if !io.name.contains(&0) {
        return Err(EINVAL);
    }
    let p = c.process;
    match io.op {
        XEMEM_MAKE => {
            let mut freed = vm::Freed::new();
            let prepared = xemem::prepare(p, &io, &mut freed);
            settle(c, freed);
            prepared?;
            io.segid = xemem::make(p, &io)?;
        }
        XEMEM_GET => io.apid = xemem::ask(p, &io)?,
        XEMEM_LOOKUP => io.segid = xemem::ask(p, &io)?,
        XEMEM_REMOVE | XEMEM_RELEASE | XEMEM_KEEP => _ = xemem::ask(p, &io)?,
        XEMEM_SIGNAL => _ = xemem::signal(p, &io)?,
        XEMEM_WAIT => {
            let ms = io.timeout_ms;
            let deadline =
                (ms >= 0).then(|| cpu::rdtsc() + tsc::ns_to_cycles(ms as u64 * 1_000_000));
            xemem::wait(p, &io, deadline)?;
            return Ok(0); // nothing to write back
        }
        XEMEM_ATTACH => {
            io.vaddr = xemem::attach(p, &io)?;
            settle(c, vm::Freed::new());
        }
        XEMEM_DETACH => {
            let id = p.vm.lock().detach(io.vaddr).ok_or(EINVAL)?;
            // No CPU may reach the frames before the host lets them go.
            retire(c, vm::Freed::new());
            xemem::detached(p, id)?;
        }
        _ => return Err(EINVAL),
    }
    uaccess::write_bytes(p, at, &io.to_bytes())?;
    Ok(0)
}
