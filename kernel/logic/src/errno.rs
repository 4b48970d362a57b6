//! Linux error numbers. Kernel code returns `Result<_, Errno>`; only the
//! system-call dispatcher turns an error into the negated number Linux
//! programs expect in rax.

/// A Linux error number (`errno`), always in 1..=4095.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno(u16);

/// The result of a system call: its return value, or an error.
pub type SysResult = Result<u64, Errno>;

macro_rules! errnos {
    ($($name:ident = $n:expr, $what:literal;)*) => {
        $(#[doc = $what] pub const $name: Errno = Errno($n);)*
    };
}

errnos! {
    EPERM = 1, "Operation not permitted";
    ENOENT = 2, "No such file or directory";
    ESRCH = 3, "No such process";
    EINTR = 4, "Interrupted system call";
    EIO = 5, "Input/output error";
    ENOEXEC = 8, "Exec format error";
    EBADF = 9, "Bad file descriptor";
    ECHILD = 10, "No child processes";
    EAGAIN = 11, "Resource temporarily unavailable";
    ENOMEM = 12, "Cannot allocate memory";
    EACCES = 13, "Permission denied";
    EFAULT = 14, "Bad address";
    EBUSY = 16, "Device or resource busy";
    EEXIST = 17, "File exists";
    ENODEV = 19, "No such device";
    EISDIR = 21, "Is a directory";
    EINVAL = 22, "Invalid argument";
    ENOTTY = 25, "Inappropriate ioctl for device";
    ESPIPE = 29, "Illegal seek";
    EPIPE = 32, "Broken pipe";
    ENOSYS = 38, "Function not implemented";
    EIDRM = 43, "Identifier removed";
    EPROTO = 71, "Protocol error";
    ETIMEDOUT = 110, "Connection timed out";
    ERESTARTSYS = 512, "A signal came: restart if its handler has SA_RESTART, else EINTR (never reaches a program)";
    ERESTARTNOHAND = 514, "A signal came: restart unless a handler runs, then EINTR (never reaches a program)";
}

impl Errno {
    /// The error number itself (positive).
    pub const fn number(self) -> u16 {
        self.0
    }

    /// The value a system call returns in rax for this error (-errno).
    pub const fn to_return(self) -> u64 {
        (-(self.0 as i64)) as u64
    }

    /// Reads a raw system-call return value (from Linux, for a delegated
    /// call): -4095..=-1 is an error, anything else a result.
    pub fn from_return(value: i64) -> SysResult {
        if (-4095..0).contains(&value) {
            Err(Errno(-value as u16))
        } else {
            Ok(value as u64)
        }
    }
}

/// The rax value for a system call's result.
pub fn to_return(result: SysResult) -> u64 {
    match result {
        Ok(value) => value,
        Err(e) => e.to_return(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_negated_in_rax() {
        assert_eq!(to_return(Err(EINVAL)) as i64, -22);
        assert_eq!(to_return(Ok(7)), 7);
        assert_eq!(ENOSYS.number(), 38);
    }

    #[test]
    fn raw_returns_round_trip() {
        assert_eq!(Errno::from_return(-14), Err(EFAULT));
        assert_eq!(Errno::from_return(-4095), Err(Errno(4095)));
        assert_eq!(Errno::from_return(-4096), Ok((-4096i64) as u64));
        assert_eq!(Errno::from_return(0), Ok(0));
        assert_eq!(Errno::from_return(123), Ok(123));
    }
}
