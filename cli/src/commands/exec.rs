//! execve for a program in an enclave, performed by its `atoll run`
//! (CALL_EXEC): read the path, argv and envp from the program's memory,
//! read and plan the new program as `atoll run` plans the first one, have
//! the LWK build its image in place of the old (ATOLL_IOC_EXEC), load it
//! through the mirror, start it (ATOLL_IOC_START), and close the
//! descriptors marked close-on-exec, as Linux's execve does.

use crate::device::{mirror, Device};
use crate::program::{self, file_name, Facts, Invocation};
use crate::serve::descriptors::RESERVED_FD;
use crate::serve::passthrough::{self, usercopy::UserCopy};
use crate::serve::perform::EXEC;
use crate::serve::{policy, proc_paths};
use crate::sys;
use atoll_abi::Run;
use std::os::unix::ffi::OsStrExt;

/// Longest string and most strings read (Linux's MAX_ARG_STRLEN and a
/// bound of the same order).
const MAX_STRING: usize = 128 * 1024;
const MAX_STRINGS: usize = 64 * 1024;

/// Lets programs exec from now on.
pub fn prepare() {
    let _ = EXEC.set(exec);
}

/// CALL_EXEC of the program bound to `device`: 0 once the new program is
/// in place, or -errno.
fn exec(device: &Device, args: [u64; 6]) -> i64 {
    match exec_program(device, args) {
        Ok(()) => 0,
        Err(errno) => -(errno as i64),
    }
}

fn exec_program(device: &Device, args: [u64; 6]) -> Result<(), i32> {
    let copier = UserCopy::new(RESERVED_FD).map_err(|e| e.raw_os_error().unwrap_or(libc::EAGAIN))?;
    let mut path = copier.read_c_string(args[0], MAX_STRING)?;
    // /proc/self/exe is the program, not this process (busybox runs its
    // applets so); other programs' /proc/<pid>/exe are left to the open.
    if proc_paths::meaning(&path, &proc_paths::Unknown) == Some(proc_paths::Meaning::Exe) {
        path = proc_paths::program();
    }
    let argv = read_strings(&copier, args[1])?;
    let envp = read_strings(&copier, args[2])?;
    let path = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(&path));
    let files = program::read::read(&path).map_err(|e| e.errno)?;
    if !sys::may_execute(&path) {
        return Err(libc::EACCES);
    }
    let random = sys::random16().map_err(|_| libc::EAGAIN)?;
    let facts = Facts { ids: sys::ids(), hwcap: sys::hwcap(), random, vdso: Some(program::VDSO_IMAGE) };
    let name = path.display().to_string();
    let how = Invocation { name: &name, execfn: path.as_os_str().as_bytes(), argv: &argv, envp: &envp };
    let plan = program::plan(&files.files(), &how, &facts).map_err(|_| libc::ENOEXEC)?;

    let mut req = Run::new();
    req.region_count = plan.layout.regions.len() as u32;
    req.region[..plan.layout.regions.len()].copy_from_slice(&plan.layout.regions);
    req.brk_start = plan.layout.brk_start;
    req.file = file_name::names(&path, files.loader.as_deref());
    let file_name = path.file_name().map(|n| n.as_bytes()).unwrap_or_default();
    let n = file_name.len().min(req.comm.len() - 1);
    req.comm[..n].copy_from_slice(&file_name[..n]);
    device.exec(&mut req).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    // From here the old image is gone: any failure ends the program.
    for p in &plan.placements {
        mirror::write_loading(p.addr, files.files().bytes(p)).map_err(|_| libc::EIO)?;
    }
    mirror::write_loading(plan.stack.sp, &plan.stack.bytes).map_err(|_| libc::EIO)?;
    device.start(plan.entry, plan.stack.sp).map_err(|e| e.raw_os_error().unwrap_or(libc::EIO))?;
    proc_paths::set_program(path.as_os_str().as_bytes());
    passthrough::close_on_exec_below(RESERVED_FD);
    Ok(())
}

/// The strings of the NULL-terminated pointer array at `addr` (none if 0).
fn read_strings(copier: &UserCopy, addr: u64) -> Result<Vec<Vec<u8>>, i32> {
    let mut out = Vec::new();
    if addr == 0 {
        return Ok(out);
    }
    for i in 0..MAX_STRINGS as u64 {
        let at = addr + i * 8;
        if !policy::inside(at, 8) {
            return Err(libc::EFAULT);
        }
        let mut word = [0u8; 8];
        copier.read(at, &mut word)?;
        match u64::from_le_bytes(word) {
            0 => return Ok(out),
            p => out.push(copier.read_c_string(p, MAX_STRING)?),
        }
    }
    Err(libc::E2BIG)
}
