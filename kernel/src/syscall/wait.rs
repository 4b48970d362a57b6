//! Waiting for children: wait4 and waitid, over `process::family`.

use lwk_logic::errno::*;

use super::call::Call;
use super::usage::write_rusage;
use crate::mm::uaccess;
use crate::process::family::{self, Which};

const WNOHANG: u64 = 1;
const WEXITED: u64 = 4;
const WNOWAIT: u64 = 0x0100_0000;
const P_ALL: u64 = 0;
const P_PID: u64 = 1;
const P_PGID: u64 = 2;

/// wait4's pid: a child, any (-1), the caller's group (0) or group -pid.
fn which_for_wait4(c: &Call, pid: i64) -> Which {
    match pid {
        -1 => Which::Any,
        0 => Which::Group(c.process.family.pgid()),
        p if p < 0 => Which::Group(p.unsigned_abs() as u32),
        p => Which::Pid(p as u32),
    }
}

/// wait4(pid, wstatus, options, rusage).
pub fn wait4(c: &mut Call) -> SysResult {
    let [pid, wstatus, options, rusage, ..] = c.args;
    if options & !(WNOHANG | 0x0200_0000 | 0x4000_0000 | 0x8000_0000) != 0 {
        return Err(EINVAL);
    }
    // pid_t is 32 bits: callers may leave the register's upper half zero.
    let which = which_for_wait4(c, pid as i32 as i64);
    let Some(r) = family::wait(c.process, c.user, which, options & WNOHANG != 0, false)? else {
        return Ok(0);
    };
    if wstatus != 0 {
        uaccess::write_u32(c.process, wstatus, r.status)?;
    }
    if rusage != 0 {
        write_rusage(c, rusage, r.times, 0)?;
    }
    Ok(r.pid.into())
}

/// waitid(idtype, id, infop, options, rusage): exited children only.
pub fn waitid(c: &mut Call) -> SysResult {
    let [idtype, id, infop, options, rusage, _] = c.args;
    if options & WEXITED == 0 || options & !(WNOHANG | WEXITED | WNOWAIT) != 0 {
        return Err(EINVAL);
    }
    let which = match idtype {
        P_ALL => Which::Any,
        P_PGID if id == 0 => Which::Group(c.process.family.pgid()),
        P_PGID => Which::Group(id as u32),
        P_PID => Which::Pid(id as u32),
        _ => return Err(EINVAL),
    };
    let got =
        family::wait(c.process, c.user, which, options & WNOHANG != 0, options & WNOWAIT != 0)?;
    if infop != 0 {
        let mut info = [0u8; 128];
        if let Some(r) = &got {
            const SIGCHLD: u32 = 17;
            let (code, status) =
                if r.status & 0x7f == 0 { (1i32, r.status >> 8) } else { (2, r.status & 0x7f) };
            info[0..4].copy_from_slice(&SIGCHLD.to_le_bytes());
            info[8..12].copy_from_slice(&code.to_le_bytes());
            info[16..20].copy_from_slice(&r.pid.to_le_bytes());
            info[24..28].copy_from_slice(&status.to_le_bytes());
        }
        uaccess::write_bytes(c.process, infop, &info)?;
    }
    if let (Some(r), true) = (&got, rusage != 0) {
        write_rusage(c, rusage, r.times, 0)?;
    }
    Ok(0)
}
