//! Linux error numbers, negated as system calls return them.

pub const EPERM: i64 = -1;
pub const ESRCH: i64 = -3;
pub const EINTR: i64 = -4;
pub const EAGAIN: i64 = -11;
pub const ENOMEM: i64 = -12;
pub const EFAULT: i64 = -14;
pub const EBUSY: i64 = -16;
pub const EEXIST: i64 = -17;
pub const EINVAL: i64 = -22;
pub const ENOSYS: i64 = -38;
pub const ETIMEDOUT: i64 = -110;
pub const ENODEV: i64 = -19;
