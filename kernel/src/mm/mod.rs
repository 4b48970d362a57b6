//! Programs' memory, below processes and scheduling: address spaces and
//! their mappings (vm), the frames they hold and pin, files mapped shared,
//! and System V shared memory.

pub mod pins;
pub mod shared_file;
pub mod sysv_shm;
pub mod vm;
