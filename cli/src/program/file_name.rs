//! Files as /proc/<pid>/maps names them: the program's and its loader's,
//! which `atoll run` names for the LWK when it starts the program (a
//! file's full path, device and inode).

use atoll_abi::FileName;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The file at `path`, named (all zero if it cannot be).
pub fn file_name(path: &Path) -> FileName {
    let mut name = FileName::default();
    let (Ok(full), Ok(meta)) = (std::fs::canonicalize(path), std::fs::metadata(path)) else {
        return name;
    };
    let bytes = full.as_os_str().as_bytes();
    let n = bytes.len().min(name.path.len() - 1);
    name.path[..n].copy_from_slice(&bytes[..n]);
    (name.dev, name.ino) = (meta.dev(), meta.ino());
    name
}

/// The program's and its loader's names, as requests carry them.
pub fn names(program: &Path, loader: Option<&Path>) -> [FileName; 2] {
    [file_name(program), loader.map(file_name).unwrap_or_default()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_a_file_by_its_full_path() {
        let dir = std::env::temp_dir().join(format!("atoll-file-name-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("f");
        std::fs::write(&file, b"x").unwrap();
        let meta = std::fs::metadata(&file).unwrap();
        let name = file_name(&dir.join("..").join(dir.file_name().unwrap()).join("f"));
        assert_eq!((name.dev, name.ino), (meta.dev(), meta.ino()));
        assert_eq!(atoll_abi::c_str(&name.path), std::fs::canonicalize(&file).unwrap().to_str().unwrap());
        assert_eq!(file_name(&dir.join("missing")), FileName::default());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
