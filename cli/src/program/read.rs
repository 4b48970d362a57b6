//! Reading a program's file and, for a dynamically linked one, the loader
//! it names (PT_INTERP), as Linux's execve reads both.

use super::{interpreter, Files};
use std::path::Path;

/// The bytes of a program and of its loader.
#[derive(Debug)]
pub struct ProgramFiles {
    pub program: Vec<u8>,
    pub interp: Option<Vec<u8>>,
}

/// Why the files could not be read: the errno execve would give, and a
/// sentence for people.
#[derive(Debug)]
pub struct ReadError {
    pub errno: i32,
    pub message: String,
}

impl ProgramFiles {
    pub fn files(&self) -> Files<'_> {
        Files { program: &self.program, interp: self.interp.as_deref() }
    }
}

/// Reads the program at `path` and its loader.
pub fn read(path: &Path) -> Result<ProgramFiles, ReadError> {
    let program = read_file(path)?;
    let name = path.display().to_string();
    let interp = match interpreter(&program, &name) {
        Ok(Some(loader)) => Some(read_file(&loader).map_err(|e| ReadError {
            errno: e.errno,
            message: format!("{name} needs its loader, but {}", e.message),
        })?),
        Ok(None) => None,
        Err(message) => return Err(ReadError { errno: libc::ENOEXEC, message }),
    };
    Ok(ProgramFiles { program, interp })
}

fn read_file(path: &Path) -> Result<Vec<u8>, ReadError> {
    std::fs::read(path).map_err(|e| ReadError {
        errno: e.raw_os_error().unwrap_or(libc::EIO),
        message: format!("cannot read {}: {}", path.display(), crate::error::os_error(&e)),
    })
}
