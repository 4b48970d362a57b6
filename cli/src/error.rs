//! The one error type: a sentence that `main` prints as `atoll: <sentence>`,
//! and the exit status that goes with it (1 unless said otherwise).

use std::fmt;
use std::io;

#[derive(Debug)]
pub struct Error {
    message: String,
    status: u8,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error { message: message.into(), status: 1 }
    }

    /// The same error, ending `atoll` with exit status `status`.
    pub fn with_status(self, status: u8) -> Self {
        Error { status, ..self }
    }

    pub fn status(&self) -> u8 {
        self.status
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// The OS's words for an I/O error, without Rust's " (os error N)" suffix,
/// so that it reads well inside our own parentheses.
pub fn os_error(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

/// "<what> failed: <the module's reason> (<errno text>)", or without the
/// reason when the module left none in the request's `error` field.
pub fn module_error(what: &str, reason: &[u8], e: &io::Error) -> Error {
    let reason = atoll_abi::c_str(reason);
    Error::new(if reason.is_empty() {
        format!("{what} failed: {}", os_error(e))
    } else {
        format!("{what} failed: {reason} ({})", os_error(e))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_error_drops_the_code() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(os_error(&e), "No such file or directory");
        let e = io::Error::other("plain");
        assert_eq!(os_error(&e), "plain");
    }

    #[test]
    fn module_errors() {
        let e = io::Error::from_raw_os_error(libc::EBUSY);
        let mut reason = [0u8; 16];
        assert_eq!(module_error("run", &reason, &e).to_string(), "run failed: Device or resource busy");
        reason[..4].copy_from_slice(b"busy");
        assert_eq!(module_error("run", &reason, &e).to_string(), "run failed: busy (Device or resource busy)");
        assert_eq!(module_error("run", &reason, &e).status(), 1);
        assert_eq!(Error::new("x").with_status(125).status(), 125);
    }
}
