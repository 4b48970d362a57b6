//! The one error type: a sentence that `main` prints as `atoll: <sentence>`.

use std::fmt;
use std::io;

#[derive(Debug)]
pub struct Error(String);

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error(message.into())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
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
}
