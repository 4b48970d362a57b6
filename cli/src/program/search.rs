//! Finding the program file the way execvp does: a name with a '/' is a path;
//! a bare name is looked up in $PATH.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// execvp's search path when PATH is not set.
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// The file `program` names: itself if it has a '/', else the first regular
/// file with an execute bit in the directories of `path_var` (an empty entry
/// is the current directory). None if the search finds nothing.
pub fn find(program: &OsStr, path_var: Option<OsString>) -> Option<PathBuf> {
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    if program.is_empty() {
        return None;
    }
    let path_var = path_var.unwrap_or_else(|| DEFAULT_PATH.into());
    path_var
        .as_bytes()
        .split(|&b| b == b':')
        .map(|dir| if dir.is_empty() { Path::new(".") } else { Path::new(OsStr::from_bytes(dir)) })
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable_file(candidate))
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn searches_like_execvp() {
        let dir = std::env::temp_dir().join(format!("atoll-search-{}", std::process::id()));
        let (a, b) = (dir.join("a"), dir.join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        fs::write(a.join("prog"), b"x").unwrap(); // not executable: skipped
        fs::write(b.join("prog"), b"x").unwrap();
        fs::set_permissions(b.join("prog"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::create_dir_all(a.join("dir")).unwrap(); // a directory: skipped
        let path = OsString::from(format!("{}:{}:/nonexistent", a.display(), b.display()));

        assert_eq!(find(OsStr::new("prog"), Some(path.clone())), Some(b.join("prog")));
        assert_eq!(find(OsStr::new("dir"), Some(path.clone())), None);
        assert_eq!(find(OsStr::new("missing"), Some(path.clone())), None);
        assert_eq!(find(OsStr::new(""), Some(path)), None);
        // With a '/', the name is used as it is, found or not.
        assert_eq!(find(OsStr::new("./missing"), None), Some(PathBuf::from("./missing")));
        assert_eq!(find(OsStr::new("a/prog"), None), Some(PathBuf::from("a/prog")));
        fs::remove_dir_all(&dir).unwrap();
    }
}
