//! How `atoll run` shares descriptor numbers with its program: the
//! program's from 0, those kept for writing its shared file mappings back
//! from KEPT_FD (kept_files.rs), this process's own from RESERVED_FD, out
//! of the way of the numbers a program uses.

use std::os::fd::RawFd;

pub const KEPT_FD: RawFd = 512;
pub const RESERVED_FD: RawFd = 1000;
