//! A program to run in an enclave, from its file to what goes into its
//! address space: the regions to ask for, the file bytes to copy where, the
//! initial stack, and the entry point. Pure: the caller writes the result
//! through the mirror (or, in the tests, into this process's own memory).

pub mod elf;
pub mod file_name;
pub mod read;
pub mod regions;
pub mod search;
pub mod stack;

use crate::sys::Ids;
pub use elf::Role;
use regions::Layout;
use stack::{Contents, Stack};
use std::ops::Range;

/// What the process starting the program contributes to its auxv.
#[derive(Clone, Copy, Debug)]
pub struct Facts {
    pub ids: Ids,
    pub hwcap: u64,
    pub random: [u8; 16],
    /// AT_SYSINFO_EHDR: the vDSO's image (`VDSO_IMAGE` in an enclave).
    pub vdso: Option<u64>,
}

/// Where the LWK maps the vDSO's image in every program: after its data page.
pub const VDSO_IMAGE: u64 = atoll_abi::VDSO_BASE + regions::PAGE;

/// Everything needed to set up the program's memory and start it.
#[derive(Debug)]
pub struct Plan {
    pub layout: Layout,
    /// Where the segments' file bytes go.
    pub placements: Vec<Placement>,
    pub stack: Stack,
    pub entry: u64,
}

/// Bytes `range` of the program's file, or of its loader's (`role`),
/// belong at `addr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub addr: u64,
    pub role: Role,
    pub range: Range<usize>,
}

/// The files a plan places bytes from.
pub struct Files<'a> {
    pub program: &'a [u8],
    /// The loader a dynamic program names (PT_INTERP), read by the caller.
    pub interp: Option<&'a [u8]>,
}

impl Files<'_> {
    /// The bytes `p` places.
    pub fn bytes(&self, p: &Placement) -> &[u8] {
        let file = match p.role {
            Role::Program => self.program,
            Role::Interpreter => self.interp.unwrap_or_default(),
        };
        &file[p.range.clone()]
    }
}

/// The loader `data` names if it is a dynamically linked program: its path.
/// Errors as `plan`'s.
pub fn interpreter(data: &[u8], name: &str) -> Result<Option<std::path::PathBuf>, String> {
    use std::os::unix::ffi::OsStrExt;
    let program = elf::parse(data, Role::Program).map_err(|why| format!("{name} {why}"))?;
    Ok(program.interp.map(|path| std::ffi::OsStr::from_bytes(&path).into()))
}

/// How to start a program.
pub struct Invocation<'a> {
    /// The program file's name in messages.
    pub name: &'a str,
    /// The program file's path, for AT_EXECFN.
    pub execfn: &'a [u8],
    /// Strings without their NUL.
    pub argv: &'a [Vec<u8>],
    pub envp: &'a [Vec<u8>],
}

/// The plan for the program in `files`; errors are whole sentences. A
/// dynamic program starts in its loader, which `files.interp` must hold
/// (see `interpreter`).
pub fn plan(files: &Files, how: &Invocation, facts: &Facts) -> Result<Plan, String> {
    let program = elf::parse(files.program, Role::Program).map_err(|why| format!("{} {why}", how.name))?;
    let interp = match (&program.interp, files.interp) {
        (None, _) => None,
        (Some(path), Some(data)) => Some(
            elf::parse(data, Role::Interpreter)
                .map_err(|why| format!("{}'s loader {} {why}", how.name, String::from_utf8_lossy(path)))?,
        ),
        (Some(path), None) => {
            return Err(format!("{} needs its loader {}", how.name, String::from_utf8_lossy(path)));
        }
    };
    let interp_segments = interp.as_ref().map_or(&[][..], |i| &i.segments[..]);
    let layout = regions::layout(&program.segments, interp_segments).map_err(|why| format!("{} {why}", how.name))?;
    let placements = program
        .segments
        .iter()
        .map(|s| (Role::Program, s))
        .chain(interp_segments.iter().map(|s| (Role::Interpreter, s)))
        .filter(|(_, s)| s.filesz > 0)
        .map(|(role, s)| Placement { addr: s.addr, role, range: s.offset as usize..(s.offset + s.filesz) as usize })
        .collect();
    let aux = auxv(&program, interp.as_ref(), facts);
    let contents = Contents { argv: how.argv, envp: how.envp, execfn: how.execfn, random: facts.random, aux: &aux };
    let stack = stack::build(atoll_abi::STACK_TOP, &contents)?;
    let layout = layout.with_stack_in_use(stack.sp);
    let entry = interp.as_ref().map_or(program.entry, |i| i.entry);
    Ok(Plan { layout, placements, stack, entry })
}

/// The auxiliary vector Linux gives a program, in Linux's order, less the
/// entries that point into the stack, which the stack builder adds.
/// AT_SYSINFO_EHDR is the vDSO, if any; AT_BASE is where the loader of a
/// dynamic program is.
fn auxv(program: &elf::Program, interp: Option<&elf::Program>, facts: &Facts) -> Vec<(u64, u64)> {
    let vdso = facts.vdso.map(|at| (libc::AT_SYSINFO_EHDR, at));
    let rest = [
        (libc::AT_HWCAP, facts.hwcap),
        (libc::AT_PAGESZ, regions::PAGE),
        (libc::AT_CLKTCK, 100),
        (libc::AT_PHDR, program.phdr),
        (libc::AT_PHENT, elf::PHENT_SIZE as u64),
        (libc::AT_PHNUM, program.phnum as u64),
        (libc::AT_BASE, interp.map_or(0, |i| i.bias)),
        (libc::AT_FLAGS, 0),
        (libc::AT_ENTRY, program.entry),
        (libc::AT_UID, facts.ids.uid as u64),
        (libc::AT_EUID, facts.ids.euid as u64),
        (libc::AT_GID, facts.ids.gid as u64),
        (libc::AT_EGID, facts.ids.egid as u64),
        (libc::AT_SECURE, 0),
        (libc::AT_HWCAP2, 0),
    ];
    vdso.into_iter().chain(rest).collect()
}

#[cfg(test)]
mod native_tests;
#[cfg(test)]
mod test_programs;
