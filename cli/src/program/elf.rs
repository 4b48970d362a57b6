//! A program file as the enclave can run it: an x86-64 ELF executable,
//! position dependent (ET_EXEC) or a PIE (ET_DYN, loaded at PIE_BASE),
//! static or dynamically linked (PT_INTERP names its loader, which is
//! itself parsed here as an ET_DYN loaded at INTERP_BASE). Every header is
//! checked here, so that later steps can trust the numbers.

use atoll_abi::{PIE_BASE, PROT_EXEC, PROT_READ, PROT_WRITE};
use object::elf::{
    FileHeader64, ELFCLASS32, ELFCLASS64, ELFDATA2LSB, ELFMAG, EM_X86_64, ET_CORE, ET_DYN, ET_EXEC, ET_REL, PF_R, PF_W,
    PF_X, PT_INTERP, PT_LOAD, PT_PHDR,
};
use object::read::elf::{FileHeader, ProgramHeader};
use object::LittleEndian;

/// Size of one ELF64 program header (AT_PHENT).
pub const PHENT_SIZE: u16 = 56;

/// Where a dynamic program's loader (ld-linux-x86-64.so.2) goes: high in
/// the program area, far above the program and its brk heap, below the
/// mmap area where it maps the libraries.
pub const INTERP_BASE: u64 = 0x0f00_0000_0000;

/// Longest PT_INTERP path taken (Linux's PATH_MAX).
const INTERP_MAX: usize = 4096;

/// One PT_LOAD segment, with the load bias already added to its address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Its place among the program headers, for messages.
    pub index: usize,
    /// File bytes [offset, offset + filesz) go to [addr, addr + filesz).
    pub offset: u64,
    pub filesz: u64,
    pub addr: u64,
    /// Bytes in memory; those past filesz are zero.
    pub memsz: u64,
    /// atoll_abi::PROT_* bits.
    pub prot: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// Added to every address in the file: PIE_BASE for a static PIE, else 0.
    pub bias: u64,
    /// Where the program starts (bias included).
    pub entry: u64,
    /// AT_PHDR: where the program headers are in memory (bias included).
    pub phdr: u64,
    pub phnum: u16,
    /// PT_LOAD segments with a nonzero size in memory, in file order.
    pub segments: Vec<Segment>,
    /// PT_INTERP: the path of the loader a dynamic program needs.
    pub interp: Option<Vec<u8>>,
}

/// What a file is loaded as: the program, or the loader it names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Program,
    Interpreter,
}

/// Checks `data` as a program to run in an enclave (or as the loader of
/// one); the error completes a sentence that starts with the file's name
/// ("<path> is not ...").
pub fn parse(data: &[u8], role: Role) -> Result<Program, String> {
    if data.starts_with(b"#!") {
        return Err("is a script: only x86-64 ELF programs run in an enclave".into());
    }
    if !data.starts_with(&ELFMAG) {
        return Err("is not an ELF file: only x86-64 ELF programs run in an enclave".into());
    }
    if data.len() < std::mem::size_of::<FileHeader64<LittleEndian>>() {
        return Err("ends inside its ELF header (truncated?)".into());
    }
    match data[4] {
        c if c == ELFCLASS64.0 => {}
        c if c == ELFCLASS32.0 => {
            return Err("is a 32-bit program: only 64-bit x86-64 programs run in an enclave".into())
        }
        c => return Err(format!("is not a valid ELF file (class {c})")),
    }
    if data[5] != ELFDATA2LSB.0 {
        return Err("is a big-endian ELF file: only x86-64 programs run in an enclave".into());
    }
    let endian = LittleEndian;
    let header = FileHeader64::<LittleEndian>::parse(data).map_err(|e| format!("has a bad ELF header: {e}"))?;
    let machine = header.e_machine(endian);
    if machine != EM_X86_64 {
        return Err(format!("is built for {}, not x86-64", machine_name(machine.0)));
    }
    match header.e_type(endian) {
        ET_EXEC | ET_DYN => {}
        ET_REL => return Err("is an object file (.o), not a program: link it first".into()),
        ET_CORE => return Err("is a core dump, not a program".into()),
        other => return Err(format!("is not a program (ELF type {other})")),
    }
    let bias = match (header.e_type(endian), role) {
        (ET_DYN, Role::Program) => PIE_BASE,
        (ET_DYN, Role::Interpreter) => INTERP_BASE,
        (_, Role::Program) => 0,
        (_, Role::Interpreter) => return Err("is not a shared object, so it cannot be a program's loader".into()),
    };
    let phentsize = header.e_phentsize(endian);
    if phentsize != PHENT_SIZE {
        return Err(format!("has program headers of {phentsize} bytes instead of {PHENT_SIZE} (damaged?)"));
    }
    let headers =
        header.program_headers(endian, data).map_err(|_| "has program headers outside the file (truncated?)")?;
    if headers.is_empty() {
        return Err("has no program headers: it is not a program".into());
    }

    let interp = match headers.iter().find(|ph| ph.p_type(endian) == PT_INTERP) {
        None => None,
        Some(_) if role == Role::Interpreter => return Err("names a loader of its own (PT_INTERP)".into()),
        Some(ph) => {
            let bytes = ph.data(endian, data).map_err(|_| "has its loader's name outside the file (truncated?)")?;
            let path = bytes.split(|&b| b == 0).next().unwrap_or_default();
            if path.is_empty() || path.len() > INTERP_MAX || bytes.len() == path.len() {
                return Err("has a damaged loader name (PT_INTERP)".into());
            }
            Some(path.to_vec())
        }
    };

    let mut segments = Vec::new();
    for (index, ph) in headers.iter().enumerate() {
        if ph.p_type(endian) != PT_LOAD {
            continue;
        }
        let (offset, filesz, memsz) = (ph.p_offset(endian), ph.p_filesz(endian), ph.p_memsz(endian));
        if filesz > memsz {
            return Err(format!("has a segment ({index}) with more bytes in the file than in memory (damaged?)"));
        }
        if offset.checked_add(filesz).is_none_or(|end| end > data.len() as u64) {
            return Err(format!("has a segment ({index}) that lies outside the file (truncated?)"));
        }
        let addr = ph.p_vaddr(endian).checked_add(bias);
        let Some(addr) = addr.filter(|a| a.checked_add(memsz).is_some()) else {
            return Err(format!("has a segment ({index}) that runs past the end of the address space"));
        };
        if memsz > 0 {
            segments.push(Segment { index, offset, filesz, addr, memsz, prot: prot(ph.p_flags(endian).0) });
        }
    }
    if segments.is_empty() {
        return Err("has no loadable segments: it is not a program".into());
    }

    let entry = header.e_entry(endian).wrapping_add(bias);
    if !segments.iter().any(|s| (s.addr..s.addr + s.memsz).contains(&entry)) {
        return Err(format!("has its entry point ({entry:#x}) outside its segments (damaged?)"));
    }

    // AT_PHDR as Linux computes it: PT_PHDR if there is one, else where the
    // segment that holds file offset e_phoff puts it, else just the bias.
    let phoff = header.e_phoff(endian);
    let phdr = match headers.iter().find(|ph| ph.p_type(endian) == PT_PHDR) {
        Some(ph) => ph.p_vaddr(endian).wrapping_add(bias),
        None => segments
            .iter()
            .find(|s| (s.offset..s.offset + s.filesz).contains(&phoff))
            .map_or(bias, |s| s.addr + (phoff - s.offset)),
    };

    Ok(Program { bias, entry, phdr, phnum: headers.len() as u16, segments, interp })
}

/// ELF p_flags -> atoll_abi::PROT_*.
fn prot(flags: u32) -> u32 {
    let mut prot = 0;
    if flags & PF_R.0 != 0 {
        prot |= PROT_READ;
    }
    if flags & PF_W.0 != 0 {
        prot |= PROT_WRITE;
    }
    if flags & PF_X.0 != 0 {
        prot |= PROT_EXEC;
    }
    prot
}

/// A person's name for the machines programs are most often built for.
fn machine_name(machine: u16) -> String {
    match machine {
        3 => "32-bit x86 (i386)".into(),
        40 => "32-bit ARM".into(),
        183 => "ARM64 (aarch64)".into(),
        243 => "RISC-V".into(),
        21 => "64-bit PowerPC".into(),
        22 => "s390".into(),
        other => format!("ELF machine {other}"),
    }
}

#[cfg(test)]
mod tests;
