//! File and terminal I/O: performed by `atoll run` on Linux in its own
//! context (its files, current directory and permissions). Buffers are
//! passed as they are: Linux sees the program's memory at the same
//! addresses.

use lwk_logic::errno::{Errno, SysResult};

use crate::process::{delegate, UserThread};

pub fn delegate(user: &UserThread, nr: u64, args: [u64; 6]) -> SysResult {
    Errno::from_return(delegate::call(user, atoll_abi::CALL_SYSCALL, nr, args)?)
}
