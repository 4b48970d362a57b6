//! Kernel-mode programs' own calls (`atoll run --hrt`, docs/hrt.md).

use atoll_abi::HRT_OP_NULL;
use lwk_logic::errno::{self, SysResult, EPERM};

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
/// `hrt_call_entry`): no frame, no signal delivery on the way back (the
/// program's next system call or interrupt delivers them), but a thread
/// whose program is ending leaves here. The thread is borrowed, not
/// counted, as by the SYSCALL path: a thread that ends here never comes
/// back to drop a count.
pub fn direct(op: u64, args: [u64; 5]) -> i64 {
    if op == HRT_OP_NULL {
        return 0;
    }
    crate::sched::with_current(|t| {
        let Some(user) = UserThread::of(t) else {
            return errno::to_return(Err(EPERM)) as i64;
        };
        let r = crate::process::hrt::call(user, op, args);
        if user.must_leave() {
            crate::process::exit_current_thread();
        }
        errno::to_return(r) as i64
    })
}
