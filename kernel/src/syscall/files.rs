//! File and terminal I/O: performed by `atoll run` on Linux in its own
//! context (its files, current directory and permissions). Buffers are
//! passed as they are: Linux sees the program's memory at the same
//! addresses.

use lwk_logic::errno::{Errno, SysResult, EINTR, ERESTARTNOHAND, ERESTARTSYS};

use crate::process::{delegate, UserThread};

/// Calls Linux never restarts after a handler (they wait with timeouts the
/// program gave): poll, select, pselect6, ppoll, epoll_wait, epoll_pwait.
const NEVER_RESTARTED: [u64; 6] = [7, 23, 270, 271, 232, 281];

pub fn delegate(user: &UserThread, nr: u64, args: [u64; 6]) -> SysResult {
    let answer = delegate::call_interruptible(user, atoll_abi::CALL_SYSCALL, nr, args)?;
    let result = Errno::from_return(answer.ret);
    // Interrupted for a signal: restarted or EINTR, as the handler says.
    match result {
        Err(e) if e == EINTR && answer.cancelled => {
            Err(if NEVER_RESTARTED.contains(&nr) { ERESTARTNOHAND } else { ERESTARTSYS })
        }
        r => r,
    }
}
