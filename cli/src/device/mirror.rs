//! The mirror: the program's whole address space mapped from /dev/atoll at
//! the same addresses in this process, [USER_START, USER_END). Through it
//! `atoll run` writes the program's segments and stack before it starts,
//! and the kernel reads and writes the program's buffers during delegated
//! calls. The thin layer over mmap; each `unsafe` says why it is sound.

use crate::error::{os_error, Error, Result};
use atoll_abi::{USER_END, USER_START};
use rustix::io::Errno;
use rustix::mm::{mmap, munmap, MapFlags, ProtFlags};
use std::ffi::c_void;
use std::os::fd::BorrowedFd;

const LEN: usize = (USER_END - USER_START) as usize;

/// Owns the mapping of the program area; unmaps it when dropped.
pub struct Mirror(());

impl Mirror {
    /// Maps the program area of the program bound to `device`. Fails if
    /// this process already has anything mapped there.
    pub fn map(device: BorrowedFd<'_>) -> Result<Mirror> {
        if let Some(mapping) = std::fs::read_to_string("/proc/self/maps").ok().and_then(|maps| conflict(&maps)) {
            return Err(taken(&mapping));
        }
        let flags = MapFlags::SHARED | MapFlags::FIXED_NOREPLACE;
        let prot = ProtFlags::READ | ProtFlags::WRITE;
        // SAFETY: a new shared mapping of the device at a fixed address;
        // MAP_FIXED_NOREPLACE makes the kernel refuse (EEXIST) rather than
        // replace anything this process has mapped, so no memory of ours
        // changes under us.
        let at = match unsafe { mmap(USER_START as *mut c_void, LEN, prot, flags, device, 0) } {
            Ok(at) => at,
            Err(Errno::EXIST) => return Err(taken("a mapping")),
            Err(e) => return Err(Error::new(format!("cannot map the program's memory: {}", os_error(&e.into())))),
        };
        if at as u64 != USER_START {
            // Kernels before 4.17 take MAP_FIXED_NOREPLACE as a mere hint.
            // SAFETY: unmaps exactly the mapping just made, which nothing uses.
            let _ = unsafe { munmap(at, LEN) };
            return Err(Error::new(
                "cannot map the program's memory at its own addresses: Linux 4.17 or later is needed",
            ));
        }
        Ok(Mirror(()))
    }

    /// Writes `bytes` at program address `addr`. Only before IOC_START:
    /// until then the program does not run, so nothing else writes there.
    pub fn write(&mut self, addr: u64, bytes: &[u8]) -> Result<()> {
        let inside = addr >= USER_START && addr.checked_add(bytes.len() as u64).is_some_and(|end| end <= USER_END);
        if !inside {
            return Err(Error::new(format!("{addr:#x} (+{}) lies outside the program's memory", bytes.len())));
        }
        // SAFETY: [addr, addr + len) lies inside the mirror mapping, which
        // this process made and holds no Rust object; `&mut self` and the
        // program not having started make this the only writer. A page the
        // LWK did not populate would fault here, a module bug.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), addr as *mut u8, bytes.len()) };
        Ok(())
    }
}

/// Writes `bytes` at program address `addr` while an execve loads a new
/// image: the program's one thread waits in that execve, so nothing else
/// writes there, and the module lets the loader write read-only pages.
pub fn write_loading(addr: u64, bytes: &[u8]) -> Result<()> {
    Mirror(()).write_kept(addr, bytes)
}

impl Mirror {
    /// `write` for a mirror this value does not own (it is not unmapped).
    fn write_kept(self, addr: u64, bytes: &[u8]) -> Result<()> {
        let mut me = std::mem::ManuallyDrop::new(self);
        me.write(addr, bytes)
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mirror, made in `map`; nothing of this
        // process lives there.
        let _ = unsafe { munmap(USER_START as *mut c_void, LEN) };
    }
}

fn taken(what: &str) -> Error {
    Error::new(format!(
        "cannot mirror the program's memory: this process already has {what} in the program area \
         {USER_START:#x}-{USER_END:#x}; atoll must be a static PIE that Linux loads above it (build it with `make cli`)"
    ))
}

/// The first line of /proc/self/maps that overlaps the program area.
fn conflict(maps: &str) -> Option<String> {
    maps.lines().find_map(|line| {
        let (range, _) = line.split_once(' ')?;
        let (start, end) = range.split_once('-')?;
        let (start, end) = (u64::from_str_radix(start, 16).ok()?, u64::from_str_radix(end, 16).ok()?);
        (start < USER_END && end > USER_START).then(|| {
            let name = line.split_whitespace().nth(5).unwrap_or("anonymous memory");
            format!("{name} at {start:#x}-{end:#x}")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_conflicts() {
        let maps = "00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/atoll\n\
                    7f0000000000-7f0000001000 rw-p 00000000 00:00 0\n";
        assert_eq!(conflict(maps).unwrap(), "/usr/bin/atoll at 0x400000-0x452000");
        let anon = "3ffffffff000-400000001000 rw-p 00000000 00:00 0\n";
        assert_eq!(conflict(anon).unwrap(), "anonymous memory at 0x3ffffffff000-0x400000001000");
        let fine = "00000000-00100000 r--p 00000000 00:00 0\n\
                    400000000000-400000001000 r--p 00000000 00:00 0\n\
                    555555554000-555555556000 r-xp 00000000 08:02 1 /usr/bin/atoll\n";
        assert_eq!(conflict(fine), None);
        assert_eq!(conflict("garbage\n\n"), None);
    }

    /// Runs `f` in a forked child (the mirror covers 64 TiB of this
    /// process, where other tests map memory) and returns its exit status.
    fn in_child(f: impl FnOnce() -> i32) -> i32 {
        use crate::sys::{self, Forked};
        use rustix::process::{waitpid, Pid, WaitOptions};
        // glibc's fork leaves the child's allocator usable; the child runs
        // `f` and exits without returning into the test harness.
        let pid = match sys::fork().unwrap() {
            Forked::Child => sys::exit_now(f()),
            Forked::Parent(pid) => Pid::from_raw(pid).unwrap(),
        };
        let (_, status) = waitpid(Some(pid), WaitOptions::empty()).unwrap().unwrap();
        status.exit_status().unwrap_or_else(|| panic!("child status {status:?}"))
    }

    #[test]
    fn maps_writes_and_unmaps() {
        // A shared file mapping stands in for /dev/atoll: writes through the
        // mirror land in the file.
        let path = std::env::temp_dir().join(format!("atoll-mirror-{}", std::process::id()));
        let file = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        file.set_len(0x3000).unwrap();
        let code = in_child(|| {
            use std::os::fd::AsFd;
            let Ok(mut mirror) = Mirror::map(file.as_fd()) else { return 1 };
            if mirror.write(USER_START + 0x1ff0, b"0123456789abcdefXY").is_err() {
                return 2;
            }
            if mirror.write(USER_START - 1, b"x").is_ok() || mirror.write(USER_END - 1, b"xy").is_ok() {
                return 3;
            }
            // A second mirror cannot be mapped over the first.
            if !Mirror::map(file.as_fd()).is_err_and(|e| e.to_string().contains("already has")) {
                return 4;
            }
            drop(mirror);
            let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
            if conflict(&maps).is_some() {
                return 5;
            }
            0
        });
        assert_eq!(code, 0);
        let data = std::fs::read(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(&data[0x1ff0..0x2002], b"0123456789abcdefXY");
    }

    #[test]
    fn refuses_a_taken_area() {
        let code = in_child(|| {
            let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE;
            // SAFETY: a new private page in the child, which nothing uses.
            let at = unsafe { libc::mmap((USER_START + 0x10_0000) as *mut _, 4096, libc::PROT_READ, flags, -1, 0) };
            if at == libc::MAP_FAILED {
                return 1;
            }
            let null = std::fs::File::open("/dev/null").unwrap();
            use std::os::fd::AsFd;
            match Mirror::map(null.as_fd()) {
                Err(e) if e.to_string().contains("already has anonymous memory at 0x200000-0x201000") => 0,
                _ => 2,
            }
        });
        assert_eq!(code, 0);
    }

    #[test]
    fn this_process_leaves_the_program_area_free() {
        // The tests are built like atoll itself (a static PIE), so Linux
        // put them, their heap and stacks far above the program area too.
        // (Anonymous mappings are left out: other tests map test memory
        // there.)
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let named: String =
            maps.lines().filter(|l| l.split_whitespace().nth(5).is_some()).map(|l| l.to_string() + "\n").collect();
        assert!(named.contains("[heap]") || named.contains("[stack]"));
        assert_eq!(conflict(&named), None, "{maps}");
    }
}
