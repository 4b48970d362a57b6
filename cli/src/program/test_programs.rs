//! Real programs for the tests, compiled by gcc (or musl-gcc) when it is
//! installed.

use std::path::PathBuf;
use std::process::Command;

/// A compiled program in its own directory, removed when dropped.
pub struct Compiled {
    dir: PathBuf,
    path: PathBuf,
}

impl Compiled {
    /// The program's file name, for messages.
    pub fn name(&self) -> String {
        self.path.file_name().unwrap_or_default().to_string_lossy().into_owned()
    }

    pub fn bytes(&self) -> Vec<u8> {
        std::fs::read(&self.path).unwrap()
    }
}

impl Drop for Compiled {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Compiles the C `source` with gcc and `flags`; None (with a note) when gcc
/// or the static C library is missing.
pub fn compile(name: &str, source: &str, flags: &[&str]) -> Option<Compiled> {
    compile_with("gcc", name, source, flags)
}

/// The same with another compiler driver, e.g. musl-gcc.
pub fn compile_with(compiler: &str, name: &str, source: &str, flags: &[&str]) -> Option<Compiled> {
    let dir = std::env::temp_dir().join(format!("atoll-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let (c, path) = (dir.join(format!("{name}.c")), dir.join(name));
    let compiled = Compiled { dir, path };
    std::fs::write(&c, source).ok()?;
    match Command::new(compiler).args(flags).arg("-o").arg(&compiled.path).arg(&c).output() {
        Ok(o) if o.status.success() => Some(compiled),
        Ok(o) => {
            println!("note: {compiler} {flags:?} failed, skipping: {}", String::from_utf8_lossy(&o.stderr));
            None
        }
        Err(_) => {
            println!("note: no {compiler}, skipping");
            None
        }
    }
}
