//! A program thread's delegated system calls: the servers on Linux they
//! need are made first (its process's, and its children's not made yet:
//! deferred_server.rs), then the call is posted in the thread's slot and
//! waited for (call_slots.rs).

use super::call_slots::{self, Answer};
use super::deferred_server;
use super::types::UserThread;
use lwk_logic::errno::Errno;

/// Has the host performed `nr(args)` (kind `kind`); returns its raw
/// result, or EINTR if the program ends first.
pub fn call(u: &UserThread, kind: u32, nr: u64, args: [u64; 6]) -> Result<i64, Errno> {
    call_interruptible(u, kind, nr, args).map(|a| a.ret)
}

/// As `call`; a signal for the thread while it waits has the host
/// interrupt the call (Linux's blocking calls end early the same way).
/// Servers not made yet are made first (a fork's own CALL_FORK excepted).
pub fn call_interruptible(
    u: &UserThread,
    kind: u32,
    nr: u64,
    args: [u64; 6],
) -> Result<Answer, Errno> {
    if kind != atoll_abi::CALL_FORK {
        deferred_server::before_delegating(u);
    }
    call_slots::post(u, kind, nr, args).wait()
}
