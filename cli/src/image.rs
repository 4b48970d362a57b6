//! The LWK image: an ELF64 x86-64 static PIE whose PT_LOAD segments carry the
//! physical link address in p_paddr. `parse` turns it into the flat image the
//! module copies into the enclave, plus the offsets it needs to start it.

use crate::error::{os_error, Error, Result};
use object::elf::{FileHeader64, ELFCLASS64, ELFDATA2LSB, ELFMAG, EM_X86_64, PT_LOAD, SHT_SYMTAB};
use object::read::elf::{FileHeader, ProgramHeader, Sym};
use object::LittleEndian;
use std::path::Path;

pub const ENTRY_SYMBOL: &str = "kernel_entry64";
pub const TRAMPOLINE_START_SYMBOL: &str = "trampoline_start";
pub const TRAMPOLINE_END_SYMBOL: &str = "trampoline_end";

/// The SMP trampoline must hold its jump and slots (more than 48 bytes) and
/// fit the one page below 1 MiB it is copied to.
const TRAMPOLINE_MIN: u64 = 48;
const TRAMPOLINE_MAX: u64 = 4096;

/// Far more than any LWK needs; stops a damaged header from asking for a
/// huge allocation.
const MAX_SPAN: u64 = 1 << 30;

#[derive(Debug)]
pub struct Image {
    /// The segments' file bytes, each at p_paddr - (lowest p_paddr), gaps zeroed.
    pub bytes: Vec<u8>,
    /// Bytes the image occupies in memory, bss included (>= bytes.len()).
    pub mem_size: u64,
    pub entry_offset: u64,
    pub trampoline_offset: u64,
    pub trampoline_size: u64,
}

/// Reads and checks the image at `path`.
pub fn load(path: &Path) -> Result<Image> {
    let data =
        std::fs::read(path).map_err(|e| Error::new(format!("cannot read {}: {}", path.display(), os_error(&e))))?;
    parse(&data).map_err(|why| Error::new(format!("{} is not an Atoll LWK image: {why}", path.display())))
}

struct Segment {
    index: usize,
    offset: u64,
    filesz: u64,
    memsz: u64,
    paddr: u64,
    vaddr: u64,
}

/// Checks `data` and builds the flat image; the error says what is wrong.
pub fn parse(data: &[u8]) -> std::result::Result<Image, String> {
    if data.len() < ELFMAG.len() || data[..ELFMAG.len()] != ELFMAG {
        return Err("not an ELF file".into());
    }
    if data.len() < std::mem::size_of::<FileHeader64<LittleEndian>>() {
        return Err("the file ends inside the ELF header (truncated?)".into());
    }
    if data[4] != ELFCLASS64.0 {
        return Err("not a 64-bit ELF file".into());
    }
    if data[5] != ELFDATA2LSB.0 {
        return Err("not a little-endian ELF file".into());
    }
    let endian = LittleEndian;
    let header = FileHeader64::<LittleEndian>::parse(data).map_err(|e| format!("bad ELF header: {e}"))?;
    let machine = header.e_machine(endian);
    if machine != EM_X86_64 {
        return Err(format!("built for ELF machine {}, not x86-64 ({})", machine.0, EM_X86_64.0));
    }

    let segments = load_segments(header, data)?;
    let phys_base = segments.iter().map(|s| s.paddr).min().ok_or("it has no PT_LOAD segment")?;
    let virt_base = segments.iter().map(|s| s.vaddr).min().unwrap_or(0);
    for s in &segments {
        if s.vaddr - virt_base != s.paddr - phys_base {
            return Err(format!("PT_LOAD segment {} is laid out differently in virtual and physical memory", s.index));
        }
    }
    let mem_size = segments.iter().map(|s| s.paddr + s.memsz).max().unwrap_or(0) - phys_base;
    if mem_size > MAX_SPAN {
        return Err(format!("its segments span {} MiB; at most {} MiB is plausible", mem_size >> 20, MAX_SPAN >> 20));
    }
    let file_size = segments.iter().filter(|s| s.filesz > 0).map(|s| s.paddr - phys_base + s.filesz).max().unwrap_or(0);
    if file_size == 0 {
        return Err("its PT_LOAD segments hold no bytes".into());
    }
    let mut bytes = vec![0u8; file_size as usize];
    for s in &segments {
        let at = (s.paddr - phys_base) as usize;
        let from = s.offset as usize;
        bytes[at..at + s.filesz as usize].copy_from_slice(&data[from..from + s.filesz as usize]);
    }

    let symbols = Symbols::read(header, data)?;
    let offset_of = |name: &str| -> std::result::Result<u64, String> {
        let value = symbols.value(name)?;
        match value.checked_sub(virt_base) {
            Some(offset) if offset < file_size => Ok(offset),
            _ => Err(format!("symbol {name} ({value:#x}) is not inside the loaded file bytes")),
        }
    };
    let entry_offset = offset_of(ENTRY_SYMBOL)?;
    let trampoline_offset = offset_of(TRAMPOLINE_START_SYMBOL)?;
    let trampoline_end = symbols.value(TRAMPOLINE_END_SYMBOL)?.wrapping_sub(virt_base);
    let trampoline_size = trampoline_end
        .checked_sub(trampoline_offset)
        .ok_or_else(|| format!("{TRAMPOLINE_END_SYMBOL} comes before {TRAMPOLINE_START_SYMBOL}"))?;
    if trampoline_size <= TRAMPOLINE_MIN || trampoline_size > TRAMPOLINE_MAX {
        return Err(format!(
            "its SMP trampoline is {trampoline_size} bytes; it must be more than {TRAMPOLINE_MIN} and at most {TRAMPOLINE_MAX}"
        ));
    }
    if trampoline_end > file_size {
        return Err("its SMP trampoline runs past the loaded file bytes".into());
    }

    Ok(Image { bytes, mem_size, entry_offset, trampoline_offset, trampoline_size })
}

/// The PT_LOAD segments, each checked to lie inside the file.
fn load_segments(header: &FileHeader64<LittleEndian>, data: &[u8]) -> std::result::Result<Vec<Segment>, String> {
    let endian = LittleEndian;
    let headers = header
        .program_headers(endian, data)
        .map_err(|_| "its program headers lie outside the file (truncated?)".to_string())?;
    let mut segments = Vec::new();
    for (index, ph) in headers.iter().enumerate() {
        if ph.p_type(endian) != PT_LOAD {
            continue;
        }
        let s = Segment {
            index,
            offset: ph.p_offset(endian),
            filesz: ph.p_filesz(endian),
            memsz: ph.p_memsz(endian),
            paddr: ph.p_paddr(endian),
            vaddr: ph.p_vaddr(endian),
        };
        if s.filesz > s.memsz {
            return Err(format!("PT_LOAD segment {index} has more bytes in the file than in memory"));
        }
        if s.offset.checked_add(s.filesz).is_none_or(|end| end > data.len() as u64) {
            return Err(format!("PT_LOAD segment {index} lies outside the file (truncated?)"));
        }
        if s.paddr.checked_add(s.memsz).is_none() || s.vaddr.checked_add(s.memsz).is_none() {
            return Err(format!("PT_LOAD segment {index} runs past the end of the address space"));
        }
        segments.push(s);
    }
    Ok(segments)
}

/// The ELF symbol table, for looking up a few symbols by name.
struct Symbols<'data> {
    table: object::read::elf::SymbolTable<'data, FileHeader64<LittleEndian>>,
}

impl<'data> Symbols<'data> {
    fn read(header: &FileHeader64<LittleEndian>, data: &'data [u8]) -> std::result::Result<Self, String> {
        let endian = LittleEndian;
        let sections = header
            .sections(endian, data)
            .map_err(|_| "its section headers lie outside the file (truncated?)".to_string())?;
        let table = sections
            .symbols(endian, data, SHT_SYMTAB)
            .map_err(|_| "its symbol table lies outside the file (truncated?)".to_string())?;
        if table.is_empty() {
            return Err("it has no symbol table (was it stripped?)".into());
        }
        Ok(Symbols { table })
    }

    /// st_value of the defined symbol `name`.
    fn value(&self, name: &str) -> std::result::Result<u64, String> {
        let endian = LittleEndian;
        self.table
            .iter()
            .find(|sym| !sym.is_undefined(endian) && self.table.symbol_name(endian, sym) == Ok(name.as_bytes()))
            .map(|sym| sym.st_value(endian))
            .ok_or_else(|| format!("it has no symbol {name}"))
    }
}

#[cfg(test)]
mod tests;
