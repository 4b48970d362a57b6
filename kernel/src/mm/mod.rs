//! Programs' memory, below processes and scheduling: address spaces and
//! their mappings (vm), reading and writing them from system calls
//! (uaccess), the frames they pin, files mapped shared, and System V
//! shared memory.

pub mod pins;
pub mod shared_file;
pub mod sysv_shm;
pub mod uaccess;
pub mod vm;
