//! /proc/self/maps in an enclave. Linux's file would describe `atoll run`,
//! so the LWK makes it from the program's own list of mappings (vm.rs,
//! lwk_logic::maps) and `atoll run` opens a file holding it
//! (CALL_TEXT_FILE): open and openat of it come here before they would be
//! delegated. The names of mapped files come from `atoll run` too: a
//! descriptor's when it is mapped (CALL_FILE_NAME), the program's and its
//! loader's with the program (the area). Another program of the enclave's
//! maps file is Linux's to allow: it must let the caller's server open that
//! program's server's (`atoll run` asks, by pid: no path is read twice).

use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use atoll_abi::{CALL_FILE_NAME, CALL_TEXT_FILE, TEXT_MAY_READ, TEXT_OPEN};
use lwk_logic::errno::*;
use lwk_logic::maps::FileName;

use super::call::Call;
use super::scratch::with_scratch;
use crate::mm::uaccess;
use crate::process::{delegate, Process};

const SYS_OPEN: u64 = 2;
const SYS_OPENAT: u64 = 257;
const SYS_OPENAT2: u64 = 437;
const O_ACCMODE: u64 = 3;
const PAGE: u64 = 4096;
/// The longest path that can name a maps file
/// ("/proc/<pid>/task/<tid>/maps").
const LONGEST: usize = 48;
/// struct stat, as `atoll run` writes it before a name.
pub const STAT_SIZE: usize = atoll_abi::STAT_SIZE as usize;
/// Room for a file's stat and path (the path is cut to fit).
pub const NAME_ROOM: u64 = 4096;

/// The answer to call `nr` if it opens a maps file of a program of this
/// enclave; None for any other call or path.
pub fn open(c: &mut Call, nr: u64) -> Option<SysResult> {
    let (path_at, flags) = match nr {
        SYS_OPEN => (c.args[0], c.args[1]),
        // Only an absolute path: the directory descriptor does not count.
        SYS_OPENAT => (c.args[1], c.args[2]),
        // struct open_how begins with the flags.
        SYS_OPENAT2 => (c.args[1], uaccess::read_u64(c.process, c.args[2]).ok()?),
        _ => return None,
    };
    // Opened to write: Linux refuses it (or, for root, lets writes fail).
    if flags & O_ACCMODE != 0 {
        return None;
    }
    let path = path_head(c, path_at)?;
    let who = path.strip_prefix(b"/proc/").and_then(|p| p.strip_suffix(b"/maps"))?;
    // A thread's file is its process's.
    let who = match who.iter().position(|&b| b == b'/') {
        Some(slash) if is_number(who[slash..].strip_prefix(b"/task/")?) => &who[..slash],
        Some(_) => return None,
        None => who,
    };
    if who == b"self" || who == b"thread-self" {
        return Some(maps_file(c, c.process, 0, flags));
    }
    if !is_number(who) {
        return None;
    }
    let pid: u32 = core::str::from_utf8(who).ok()?.parse().ok()?;
    if pid == c.process.pid {
        return Some(maps_file(c, c.process, 0, flags));
    }
    let other = crate::process::programs::find(pid)?;
    // A child with no server of its own yet has its parent's identity;
    // else `atoll run` asks Linux whether the caller's server may open the
    // other's maps.
    let unserved_child = other.family.ppid() == c.process.pid && other.area.host_pid() == 0;
    Some(maps_file(c, &other, if unserved_child { 0 } else { pid }, flags))
}

fn is_number(s: &[u8]) -> bool {
    !s.is_empty() && s.iter().all(u8::is_ascii_digit)
}

/// The path at `at` if it is short enough to name the maps file (None if
/// longer, or unreadable: the delegated call then answers).
pub fn path_head(c: &Call, at: u64) -> Option<Vec<u8>> {
    let mut path = Vec::new();
    let mut va = at;
    while path.len() <= LONGEST {
        let room = (PAGE - va % PAGE).min((LONGEST + 1 - path.len()) as u64);
        let mut chunk = vec![0u8; room as usize];
        uaccess::read_bytes(c.process, va, &mut chunk).ok()?;
        if let Some(end) = chunk.iter().position(|&b| b == 0) {
            path.extend_from_slice(&chunk[..end]);
            return Some(path);
        }
        path.extend_from_slice(&chunk);
        va += room;
    }
    None
}

/// A descriptor of a file holding `whose` maps as they are now; `check`:
/// that program's pid if `atoll run` must first ask Linux whether the
/// caller may read them (before any of the text is in the caller's
/// memory), else 0.
fn maps_file(c: &Call, whose: &Process, check: u32, flags: u64) -> SysResult {
    if check != 0 {
        let args = [check.into(), 0, 0, 0, 0, 0];
        Errno::from_return(delegate::call(c.user, CALL_TEXT_FILE, TEXT_MAY_READ, args)?)?;
    }
    let text = whose.mem().vm.lock().maps().text(atoll_abi::MAX_TEXT_FILE as usize);
    let len = text.len() as u64;
    with_scratch(c, len.max(1), |c, at| {
        uaccess::write_bytes(c.process, at, text.as_bytes())?;
        let args = [at, len, flags, 0, 0, 0];
        Errno::from_return(delegate::call(c.user, CALL_TEXT_FILE, TEXT_OPEN, args)?)
    })
}

/// The file behind the program's descriptor `fd` as /proc/self/maps names
/// it, and its struct stat: `atoll run` writes both at `at` (NAME_ROOM
/// bytes of fresh, writable memory), zeroed again after.
pub fn file_name(c: &Call, fd: u64, at: u64) -> Result<(Arc<FileName>, [u8; STAT_SIZE]), Errno> {
    let answer = delegate::call(c.user, CALL_FILE_NAME, 0, [fd, at, NAME_ROOM, 0, 0, 0])?;
    let path_len = match Errno::from_return(answer) {
        Ok(n) => n as usize,
        Err(e) => {
            // It may have written the stat before it failed: the mapping
            // must read as the file (or zero), not as that.
            uaccess::write_bytes(c.process, at, &[0u8; NAME_ROOM as usize])?;
            return Err(e);
        }
    };
    let mut raw = vec![0u8; (NAME_ROOM as usize).min(STAT_SIZE + path_len + 1)];
    uaccess::read_bytes(c.process, at, &mut raw)?;
    uaccess::write_bytes(c.process, at, &vec![0u8; raw.len()])?;
    let mut stat = [0u8; STAT_SIZE];
    stat.copy_from_slice(&raw[..STAT_SIZE]);
    let word = |at: usize| u64::from_le_bytes(stat[at..at + 8].try_into().unwrap_or_default());
    let path = raw[STAT_SIZE..].split(|&b| b == 0).next().unwrap_or_default().to_vec();
    Ok((Arc::new(FileName { dev: word(0), ino: word(8), path }), stat))
}
