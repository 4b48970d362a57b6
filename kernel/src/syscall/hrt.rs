//! Kernel-mode programs' own calls (`atoll run --hrt`, docs/hrt.md).

use atoll_abi::HRT_OP_NULL;
use lwk_logic::errno::{self, SysResult, EPERM};

use hal::user::HrtReturn;

use super::call::Call;
use crate::process::UserThread;

/// SYS_HRT_DIRECT_CALL: where a kernel-mode program may CALL for its system
/// calls instead of SYSCALL; EPERM in ring 3, which could not run it.
pub fn direct_call(c: &mut Call) -> SysResult {
    if !c.process.kernel_mode {
        return Err(EPERM);
    }
    Ok(hal::user::direct_call_entry())
}

/// SYS_HRT (op, a0..a4): the hybrid-runtime API's calls from a program by
/// SYSCALL (a kernel-mode program may also CALL `direct`).
pub fn hrt(c: &mut Call) -> SysResult {
    let [op, a0, a1, a2, a3, a4] = c.args;
    crate::process::hrt::call(c.user, op, [a0, a1, a2, a3, a4])
}

/// The same calls by CALL from a kernel-mode program (hal's
/// `hrt_call_entry`): no frame. A thread whose program is ending leaves
/// here; one with a signal to take goes back as after an interrupt
/// (`process::return_current_to_user`, registered in `init`): else a
/// program looping on calls would never get it, as a CPU with one thread
/// has no timer ticks. The thread is borrowed, not
/// counted, as by the SYSCALL path: a thread that ends here never comes
/// back to drop a count. The null call does nothing at all.
pub fn direct(op: u64, args: [u64; 5]) -> HrtReturn {
    if op == HRT_OP_NULL {
        return HrtReturn { value: 0, deliver: 0 };
    }
    crate::sched::with_current(|t| {
        let Some(user) = UserThread::of(t) else {
            return HrtReturn { value: errno::to_return(Err(EPERM)) as i64, deliver: 0 };
        };
        let r = crate::process::hrt::call(user, op, args);
        if user.must_leave() {
            crate::process::exit_current_thread();
        }
        let deliver = crate::process::signal::has_deliverable(user);
        HrtReturn { value: errno::to_return(r) as i64, deliver: deliver.into() }
    })
}
