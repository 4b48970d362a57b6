//! The hybrid-runtime API's calls into the LWK (SYS_HRT; libatoll-hrt,
//! docs/hrt.md): threads bound to a CPU, waiting on a word and waking with
//! an IPI kick, holding a core. The same code serves a ring-3 program (by
//! SYSCALL) and a kernel-mode one (a plain CALL to the direct entry).

use atoll_abi::{
    HRT_ANY_CPU, HRT_OP_CPUS, HRT_OP_ENTRY, HRT_OP_EXIT, HRT_OP_HOLD, HRT_OP_NULL, HRT_OP_THIS_CPU,
    HRT_OP_THREAD, HRT_OP_WAIT, HRT_OP_WAKE, HRT_WAKE_FIRST,
};
use core::sync::atomic::Ordering;
use lwk_logic::errno::{SysResult, EINVAL, EPERM};

use super::thread::{exit_current_thread, spawn, Start};
use super::types::{new_tid, UserThread};
use crate::sched;
use hal::paging::is_user_address;

/// Call `op` of the API for the calling thread `user`.
pub fn call(user: &UserThread, op: u64, a: [u64; 5]) -> SysResult {
    let p = &user.process;
    match op {
        HRT_OP_NULL => Ok(0),
        HRT_OP_ENTRY if p.kernel_mode => Ok(hal::user::hrt_call_entry()),
        HRT_OP_ENTRY => Err(EPERM),
        HRT_OP_CPUS => Ok(p.cpus.mask().count_ones().into()),
        HRT_OP_THIS_CPU => {
            let below = p.cpus.mask() & ((1u64 << hal::cpu_index()) - 1);
            Ok(below.count_ones().into())
        }
        HRT_OP_THREAD => new_thread(user, a),
        HRT_OP_EXIT => exit_current_thread(),
        HRT_OP_WAIT => p.mem().futexes.wait(p, a[0], a[1] as u32, None, u32::MAX),
        HRT_OP_WAKE if a[2] & HRT_WAKE_FIRST != 0 => {
            Ok(p.mem().futexes.wake_first(a[0], a[1] as u32).into())
        }
        HRT_OP_WAKE => p.mem().futexes.wake(p, a[0], a[1] as u32, u32::MAX),
        HRT_OP_HOLD => Ok(sched::hold(a[0] != 0).into()),
        _ => Err(EINVAL),
    }
}

/// HRT_OP_THREAD (cpu, rip, rsp, fs base, done word): a thread of the
/// caller's program bound to the program's CPU number `cpu`, entered at
/// rip with rdi = rsp, in the program's mode.
fn new_thread(user: &UserThread, a: [u64; 5]) -> SysResult {
    let [cpu, rip, rsp, fs_base, done] = a;
    let p = &user.process;
    let bound = if cpu == HRT_ANY_CPU { None } else { Some(p.cpus.nth(cpu).ok_or(EINVAL)?) };
    // SYSRET and IRETQ to a non-canonical or kernel address would fault
    // in the kernel, not the program.
    if !is_user_address(rip) || !is_user_address(rsp) || !is_user_address(fs_base) {
        return Err(EINVAL);
    }
    let mut frame = hal::user::initial_frame(rip, rsp);
    frame.rdi = rsp;
    let tid = new_tid();
    let start = Start {
        fs_base,
        clear_child_tid: done,
        tid,
        signal_mask: user.signal_mask.load(Ordering::Acquire),
        altstack: [0; 3],
    };
    spawn(p, bound, frame, start)?;
    Ok(tid.into())
}
