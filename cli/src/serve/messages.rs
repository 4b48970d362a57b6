//! Lines `atoll run` prints while the program runs. They go to a copy of
//! stderr on a high descriptor, because the program may close or reuse
//! descriptor 2 through delegated calls.

use crate::sys;
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::Mutex;

pub struct Messages {
    out: Mutex<Box<dyn Write + Send>>,
    fd: Option<RawFd>,
}

impl Messages {
    /// A copy of stderr on a descriptor >= `min_fd`, or stderr itself when
    /// that cannot be had.
    pub fn stderr_copy(min_fd: RawFd) -> Messages {
        match sys::dup_above(io::stderr().as_fd(), min_fd) {
            Ok(fd) => Messages { fd: Some(fd.as_raw_fd()), out: Mutex::new(Box::new(std::fs::File::from(fd))) },
            Err(_) => Messages { fd: None, out: Mutex::new(Box::new(io::stderr())) },
        }
    }

    /// Lines go to descriptor `fd`, which this takes over (a forked
    /// `atoll run` reuses its parent's copy of stderr).
    pub fn on_fd(fd: std::os::fd::OwnedFd) -> Messages {
        Messages { fd: Some(fd.as_raw_fd()), out: Mutex::new(Box::new(std::fs::File::from(fd))) }
    }

    /// Lines go to `out` (for the tests).
    #[cfg(test)]
    pub fn to(out: impl Write + Send + 'static) -> Messages {
        Messages { out: Mutex::new(Box::new(out)), fd: None }
    }

    /// The descriptor of the copy, which the program must not touch.
    pub fn fd(&self) -> Option<RawFd> {
        self.fd
    }

    /// Writes `text` and a newline, in one piece.
    pub fn line(&self, text: &str) {
        let mut out = self.out.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // Nothing to do if stderr is gone.
        let _ = out.write_all(format!("{text}\n").as_bytes());
        let _ = out.flush();
    }
}
