//! Messages between programs (atoll_abi.h): msg_send and msg_recv, Atoll's
//! own system calls (1000, 1001), which abi/atoll_msg.h wraps.

use alloc::vec;
use atoll_abi::MSG_MAX;
use lwk_logic::errno::{SysResult, EINVAL};

use super::call::Call;
use crate::mm::uaccess;
use crate::process::deferred_server;
use crate::usermsg;
use hal::{cpu, tsc};

/// msg_send(kernel, port, from_port, buf, len)
pub fn msg_send(c: &mut Call) -> SysResult {
    let [kernel, port, src_port, buf, len, _] = c.args;
    if len > MSG_MAX as u64 || kernel > u32::MAX.into() || port > 0xffff || src_port > 0xffff {
        return Err(EINVAL);
    }
    let mut data = vec![0u8; len as usize];
    uaccess::read_bytes(c.process, buf, &mut data)?;
    // Linux tells the sender's user by its area's server: it needs one.
    deferred_server::serve_self(c.process)?;
    let area = c.process.area.index() as u32;
    usermsg::send(kernel as u32, port as u16, src_port as u16, area, &data)?;
    Ok(0)
}

/// msg_recv(port, buf, len, from, timeout_ms): the bytes copied.
pub fn msg_recv(c: &mut Call) -> SysResult {
    let [port, buf, len, from, timeout_ms, _] = c.args;
    let timeout_ms = timeout_ms as i32;
    let deadline =
        (timeout_ms >= 0).then(|| cpu::rdtsc() + tsc::ns_to_cycles(timeout_ms as u64 * 1_000_000));
    let p = c.process;
    let m = usermsg::recv(port as usize, deadline, || p.is_exiting())?;
    let n = m.data.len().min(len as usize);
    uaccess::write_bytes(p, buf, &m.data[..n])?;
    if from != 0 {
        uaccess::write_u32(p, from, m.from.kernel)?;
        uaccess::write_u32(p, from + 4, m.from.port)?;
    }
    Ok(n as u64)
}
