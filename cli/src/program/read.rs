//! Reading a program's file and, for a dynamically linked one, the loader
//! it names (PT_INTERP), as Linux's execve reads both.

use super::{interpreter, Files};
use crate::mapped_file::MappedFile;
use std::path::Path;

/// The bytes of a program and of its loader.
#[derive(Debug)]
pub struct ProgramFiles {
    pub program: MappedFile,
    pub interp: Option<MappedFile>,
    /// The loader's path, as the program names it.
    pub loader: Option<std::path::PathBuf>,
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
    let loader = interpreter(&program, &name).map_err(|message| ReadError { errno: libc::ENOEXEC, message })?;
    let interp = match &loader {
        Some(loader) => Some(read_file(loader).map_err(|e| ReadError {
            errno: e.errno,
            message: format!("{name} needs its loader, but {}", e.message),
        })?),
        None => None,
    };
    Ok(ProgramFiles { program, interp, loader })
}

fn read_file(path: &Path) -> Result<MappedFile, ReadError> {
    MappedFile::open(path).map_err(|e| ReadError {
        errno: e.raw_os_error().unwrap_or(libc::EIO),
        message: format!("cannot read {}: {}", path.display(), crate::error::os_error(&e)),
    })
}
