//! Pipes inside the enclave (crate::pipe): which calls a local pipe's end
//! takes in the LWK (pipe_io.rs), which descriptor changes its table
//! follows (pipe_fds.rs), and which calls first move its pipe to Linux
//! (pipe_move.rs). Every call on other descriptors is delegated as before,
//! after one look at a flag.

use atoll_abi::syscalls::number;
use lwk_logic::errno::SysResult;

use super::call::Call;
use super::{pipe_fds, pipe_io, pipe_move};
use crate::pipe::LocalPipe;

const SYS_READ: u64 = number("read");
const SYS_WRITE: u64 = number("write");
const SYS_CLOSE: u64 = number("close");
const SYS_READV: u64 = number("readv");
const SYS_WRITEV: u64 = number("writev");
const SYS_PIPE: u64 = number("pipe");
const SYS_DUP: u64 = number("dup");
const SYS_DUP2: u64 = number("dup2");
const SYS_FCNTL: u64 = number("fcntl");
const SYS_DUP3: u64 = number("dup3");
const SYS_PIPE2: u64 = number("pipe2");

/// The answer to delegated call `nr` if a local pipe is involved; None to
/// delegate it.
pub fn call(c: &mut Call, nr: u64) -> Option<SysResult> {
    if nr == SYS_PIPE || nr == SYS_PIPE2 {
        return Some(pipe_fds::create(c, nr));
    }
    // Any program may open another's local pipe by a /proc path.
    if LocalPipe::any_local() {
        if let Some(answer) = pipe_move::before_open(c, nr) {
            return Some(answer);
        }
    }
    if !c.process.local_fds.any() {
        return None;
    }
    match nr {
        SYS_READ | SYS_WRITE | SYS_READV | SYS_WRITEV => pipe_io::call(c, nr),
        SYS_CLOSE => Some(pipe_fds::close(c)),
        SYS_DUP | SYS_DUP2 | SYS_DUP3 => Some(pipe_fds::dup(c, nr)),
        SYS_FCNTL => pipe_fds::fcntl(c),
        _ => pipe_move::before_delegating(c, nr),
    }
}
