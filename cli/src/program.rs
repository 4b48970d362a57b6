//! A program to run in an enclave, from its file to what goes into its
//! address space: the regions to ask for, the file bytes to copy where, the
//! initial stack, and the entry point. Pure: the caller writes the result
//! through the mirror (or, in the tests, into this process's own memory).

pub mod elf;
pub mod regions;
pub mod search;
pub mod stack;

use crate::sys::Ids;
use regions::Layout;
use stack::{Contents, Stack};
use std::ops::Range;

/// What the process starting the program contributes to its auxv.
#[derive(Clone, Copy, Debug)]
pub struct Facts {
    pub ids: Ids,
    pub hwcap: u64,
    pub random: [u8; 16],
}

/// Everything needed to set up the program's memory and start it.
#[derive(Debug)]
pub struct Plan {
    pub layout: Layout,
    /// Where the segments' file bytes go.
    pub placements: Vec<Placement>,
    pub stack: Stack,
    pub entry: u64,
}

/// File bytes `data[range]` belong at `addr`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub addr: u64,
    pub range: Range<usize>,
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

/// The plan for the program file `data`; errors are whole sentences.
pub fn plan(data: &[u8], how: &Invocation, facts: &Facts) -> Result<Plan, String> {
    let program = elf::parse(data).map_err(|why| format!("{} {why}", how.name))?;
    let layout = regions::layout(&program.segments).map_err(|why| format!("{} {why}", how.name))?;
    let placements = program
        .segments
        .iter()
        .filter(|s| s.filesz > 0)
        .map(|s| Placement { addr: s.addr, range: s.offset as usize..(s.offset + s.filesz) as usize })
        .collect();
    let aux = auxv(&program, facts);
    let contents = Contents { argv: how.argv, envp: how.envp, execfn: how.execfn, random: facts.random, aux: &aux };
    let stack = stack::build(atoll_abi::STACK_TOP, &contents)?;
    Ok(Plan { layout, placements, stack, entry: program.entry })
}

/// The auxiliary vector Linux gives a static program, in Linux's order, less
/// AT_SYSINFO_EHDR (an enclave has no vDSO) and the entries that point into
/// the stack, which the stack builder adds.
fn auxv(program: &elf::Program, facts: &Facts) -> Vec<(u64, u64)> {
    vec![
        (libc::AT_HWCAP, facts.hwcap),
        (libc::AT_PAGESZ, regions::PAGE),
        (libc::AT_CLKTCK, 100),
        (libc::AT_PHDR, program.phdr),
        (libc::AT_PHENT, elf::PHENT_SIZE as u64),
        (libc::AT_PHNUM, program.phnum as u64),
        (libc::AT_BASE, 0),
        (libc::AT_FLAGS, 0),
        (libc::AT_ENTRY, program.entry),
        (libc::AT_UID, facts.ids.uid as u64),
        (libc::AT_EUID, facts.ids.euid as u64),
        (libc::AT_GID, facts.ids.gid as u64),
        (libc::AT_EGID, facts.ids.egid as u64),
        (libc::AT_SECURE, 0),
        (libc::AT_HWCAP2, 0),
    ]
}

#[cfg(test)]
mod native_tests;
#[cfg(test)]
mod test_programs;
