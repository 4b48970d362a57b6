//! Tests of the image loader: a small ELF built here, the real LWK image when
//! it has been built, and damaged copies of both.

use super::*;
use std::path::PathBuf;

const BASE: u64 = 0x20_0000;
const VBASE: u64 = 0xffff_8000_0020_0000;
const ENTRY: u64 = 0x10;
const TRAMPOLINE: u64 = 0x100;

// Where the fields live in the test ELF, for the tests that damage one.
const E_MACHINE: usize = 18;
const E_SHOFF: usize = 0x28;
const PHDRS: usize = 0x40;
const PHDR_SIZE: usize = 56;
const SEG1_OFFSET: usize = 0x1000;
const SEG1_FILESZ: u64 = 0x1200;
const SEG2_OFFSET: usize = 0x3000;
const SEG2_FILESZ: u64 = 0x100;
const SEG2_MEMSZ: u64 = 0x1000;

fn put16(v: &mut [u8], at: usize, x: u16) {
    v[at..at + 2].copy_from_slice(&x.to_le_bytes());
}
fn put32(v: &mut [u8], at: usize, x: u32) {
    v[at..at + 4].copy_from_slice(&x.to_le_bytes());
}
fn put64(v: &mut [u8], at: usize, x: u64) {
    v[at..at + 8].copy_from_slice(&x.to_le_bytes());
}

/// A static-PIE-like ELF: a text segment (with the entry point and a
/// trampoline of `trampoline_len` bytes), a data segment with bss, a note
/// segment, and a symbol table with the three symbols, all at the end.
fn build(trampoline_len: u64) -> Vec<u8> {
    let mut v = vec![0u8; SEG2_OFFSET + SEG2_FILESZ as usize];
    // ELF header.
    v[..4].copy_from_slice(b"\x7fELF");
    v[4] = 2; // 64-bit
    v[5] = 1; // little-endian
    v[6] = 1; // version
    put16(&mut v, 16, 3); // ET_DYN
    put16(&mut v, E_MACHINE, 62); // x86-64
    put32(&mut v, 20, 1);
    put64(&mut v, 24, VBASE + ENTRY);
    put64(&mut v, 32, PHDRS as u64);
    put16(&mut v, 52, 64);
    put16(&mut v, 54, PHDR_SIZE as u16);
    put16(&mut v, 56, 3);
    put16(&mut v, 58, 64);
    put16(&mut v, 60, 4); // sections: null, .symtab, .strtab, .shstrtab
    put16(&mut v, 62, 3);
    // Program headers: (type, offset, address from base, filesz, memsz).
    let phdrs = [
        (1u32, SEG1_OFFSET as u64, 0u64, SEG1_FILESZ, SEG1_FILESZ),
        (4, SEG1_OFFSET as u64 + 0x80, 0x80, 0x10, 0x10),
        (1, SEG2_OFFSET as u64, 0x2000, SEG2_FILESZ, SEG2_MEMSZ),
    ];
    for (i, &(kind, offset, at, filesz, memsz)) in phdrs.iter().enumerate() {
        let ph = PHDRS + i * PHDR_SIZE;
        put32(&mut v, ph, kind);
        put32(&mut v, ph + 4, 7);
        put64(&mut v, ph + 8, offset);
        put64(&mut v, ph + 16, VBASE + at);
        put64(&mut v, ph + 24, BASE + at);
        put64(&mut v, ph + 32, filesz);
        put64(&mut v, ph + 40, memsz);
        put64(&mut v, ph + 48, 0x1000);
    }
    // Segment contents: a pattern, so that misplaced bytes show.
    for i in 0..SEG1_FILESZ as usize {
        v[SEG1_OFFSET + i] = (i % 251) as u8 + 1;
    }
    v[SEG2_OFFSET..].fill(0xaa);
    // Symbol names, symbols, section names.
    let strtab = b"\0kernel_entry64\0trampoline_start\0trampoline_end\0".to_vec();
    let symbols = [(1u32, ENTRY), (16, TRAMPOLINE), (33, TRAMPOLINE + trampoline_len)];
    let mut symtab = vec![0u8; 24 * (symbols.len() + 1)];
    for (i, &(name, value)) in symbols.iter().enumerate() {
        let s = 24 * (i + 1);
        put32(&mut symtab, s, name);
        symtab[s + 4] = 0x10; // global, no type
        put16(&mut symtab, s + 6, 1); // defined
        put64(&mut symtab, s + 8, VBASE + value);
    }
    let shstrtab = b"\0.symtab\0.strtab\0.shstrtab\0".to_vec();
    let symtab_at = v.len();
    v.extend_from_slice(&symtab);
    let strtab_at = v.len();
    v.extend_from_slice(&strtab);
    let shstrtab_at = v.len();
    v.extend_from_slice(&shstrtab);
    // Section headers last, so that any truncation damages them.
    let shoff = v.len();
    put64(&mut v, E_SHOFF, shoff as u64);
    v.resize(shoff + 4 * 64, 0);
    let sections = [
        (1u32, 2u32, symtab_at, symtab.len(), 2u32, 1u32, 24u64),
        (9, 3, strtab_at, strtab.len(), 0, 0, 0),
        (17, 3, shstrtab_at, shstrtab.len(), 0, 0, 0),
    ];
    for (i, &(name, kind, offset, size, link, info, entsize)) in sections.iter().enumerate() {
        let sh = shoff + 64 * (i + 1);
        put32(&mut v, sh, name);
        put32(&mut v, sh + 4, kind);
        put64(&mut v, sh + 24, offset as u64);
        put64(&mut v, sh + 32, size as u64);
        put32(&mut v, sh + 40, link);
        put32(&mut v, sh + 44, info);
        put64(&mut v, sh + 56, entsize);
    }
    v
}

fn valid() -> Vec<u8> {
    build(0xa0)
}

fn error_of(data: &[u8]) -> String {
    match parse(data) {
        Ok(image) => panic!("accepted a bad image: {image:?}"),
        Err(e) => e,
    }
}

#[test]
fn flattens_the_test_image() {
    let data = valid();
    let image = parse(&data).unwrap();
    assert_eq!(image.bytes.len() as u64, 0x2000 + SEG2_FILESZ);
    assert_eq!(image.mem_size, 0x2000 + SEG2_MEMSZ);
    assert_eq!(image.entry_offset, ENTRY);
    assert_eq!(image.trampoline_offset, TRAMPOLINE);
    assert_eq!(image.trampoline_size, 0xa0);
    let seg1 = SEG1_FILESZ as usize;
    assert_eq!(image.bytes[..seg1], data[SEG1_OFFSET..SEG1_OFFSET + seg1]);
    assert!(image.bytes[seg1..0x2000].iter().all(|&b| b == 0), "the gap between segments is not zero");
    assert!(image.bytes[0x2000..].iter().all(|&b| b == 0xaa));
}

#[test]
fn rejects_every_truncation() {
    let data = valid();
    for len in 0..data.len() {
        error_of(&data[..len]);
    }
    assert!(error_of(&data[..40]).contains("truncated"));
    assert!(error_of(&data[..SEG2_OFFSET + 10]).contains("segment 2 lies outside the file"));
    assert!(error_of(&data[..data.len() - 1]).contains("section headers lie outside the file"));
}

#[test]
fn rejects_bad_magic_and_garbage() {
    let mut data = valid();
    data[0] = 0;
    assert_eq!(error_of(&data), "not an ELF file");
    assert_eq!(error_of(b""), "not an ELF file");
    assert_eq!(error_of(b"#!/bin/sh\necho hello\n"), "not an ELF file");

    // Pseudo-random garbage, alone and behind a valid ELF64 ident.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as u8
    };
    for len in [1, 16, 63, 64, 65, 200, 4096, 70000] {
        let mut junk: Vec<u8> = (0..len).map(|_| next()).collect();
        error_of(&junk);
        if len >= 16 {
            junk[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
            error_of(&junk);
        }
    }
}

#[test]
fn survives_random_damage() {
    // Damaged headers must give an error or a consistent image, never a panic.
    let data = valid();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..3000 {
        let mut copy = data.clone();
        for _ in 0..4 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            // Mostly the headers and tables, where damage matters.
            let at = if seed.is_multiple_of(2) {
                (seed >> 8) as usize % 0x100
            } else {
                SEG2_OFFSET + (seed >> 8) as usize % (copy.len() - SEG2_OFFSET)
            };
            copy[at] = (seed >> 40) as u8;
        }
        if let Ok(image) = parse(&copy) {
            assert!(image.bytes.len() as u64 <= image.mem_size);
            assert!(image.entry_offset < image.bytes.len() as u64);
            assert!(image.trampoline_offset + image.trampoline_size <= image.bytes.len() as u64);
        }
    }
}

#[test]
fn rejects_wrong_kinds_of_elf() {
    let mut data = valid();
    put16(&mut data, E_MACHINE, 3);
    assert!(error_of(&data).contains("ELF machine 3, not x86-64"));

    let mut data = valid();
    data[4] = 1;
    assert_eq!(error_of(&data), "not a 64-bit ELF file");

    let mut data = valid();
    data[5] = 2;
    assert_eq!(error_of(&data), "not a little-endian ELF file");
}

#[test]
fn rejects_bad_segments() {
    let mut data = valid();
    put32(&mut data, PHDRS, 0);
    put32(&mut data, PHDRS + 2 * PHDR_SIZE, 0);
    assert_eq!(error_of(&data), "it has no PT_LOAD segment");

    let mut data = valid();
    let len = data.len() as u64;
    put64(&mut data, PHDRS + 2 * PHDR_SIZE + 8, len - 8);
    assert!(error_of(&data).contains("segment 2 lies outside the file"));

    let mut data = valid();
    put64(&mut data, PHDRS + 2 * PHDR_SIZE + 8, u64::MAX - 4);
    assert!(error_of(&data).contains("segment 2 lies outside the file"));

    let mut data = valid();
    put64(&mut data, PHDRS + 40, SEG1_FILESZ - 1);
    assert!(error_of(&data).contains("more bytes in the file than in memory"));

    let mut data = valid();
    put64(&mut data, PHDRS + 2 * PHDR_SIZE + 24, BASE + 0x3000);
    assert!(error_of(&data).contains("laid out differently"));

    let mut data = valid();
    put64(&mut data, PHDRS + 2 * PHDR_SIZE + 40, 4 << 30);
    assert!(error_of(&data).contains("span"));

    let mut data = valid();
    put64(&mut data, PHDRS + 16, u64::MAX - 8);
    assert!(error_of(&data).contains("end of the address space"));

    let mut data = valid();
    let len = data.len() as u64;
    put64(&mut data, 32, len);
    assert!(error_of(&data).contains("program headers lie outside the file"));
}

#[test]
fn rejects_bad_symbols() {
    let data = valid();
    let at = data.windows(14).position(|w| w == b"trampoline_end").unwrap();
    let mut renamed = data.clone();
    renamed[at] = b'T';
    assert_eq!(error_of(&renamed), "it has no symbol trampoline_end");

    let at = data.windows(14).position(|w| w == b"kernel_entry64").unwrap();
    let mut renamed = data.clone();
    renamed[at] = b'K';
    assert_eq!(error_of(&renamed), "it has no symbol kernel_entry64");

    let mut stripped = data.clone();
    put64(&mut stripped, E_SHOFF, 0);
    assert_eq!(error_of(&stripped), "it has no symbol table (was it stripped?)");
}

#[test]
fn checks_the_trampoline_size() {
    assert!(error_of(&build(48)).contains("trampoline is 48 bytes"));
    assert_eq!(parse(&build(49)).unwrap().trampoline_size, 49);
    assert_eq!(parse(&build(4096)).unwrap().trampoline_size, 4096);
    assert!(error_of(&build(4097)).contains("at most 4096"));
    assert!(error_of(&build(0)).contains("trampoline is 0 bytes"));
}

#[test]
fn entry_must_be_in_the_file_bytes() {
    let mut data = valid();
    // The first symbol's value: 24 bytes into .symtab, 8 more to st_value.
    let symtab = SEG2_OFFSET + SEG2_FILESZ as usize;
    put64(&mut data, symtab + 24 + 8, VBASE + 0x2000 + SEG2_FILESZ); // in bss
    assert!(error_of(&data).contains("kernel_entry64"));
    put64(&mut data, symtab + 24 + 8, 0x1000); // below the image
    assert!(error_of(&data).contains("not inside the loaded file bytes"));
}

// ---- The real LWK image ----

fn real_image() -> Option<(PathBuf, Vec<u8>)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../build/atoll-kernel");
    match std::fs::read(&path) {
        Ok(data) => Some((path, data)),
        Err(_) => {
            println!("note: {} is missing (run `make kernel`); skipping the real-image test", path.display());
            None
        }
    }
}

fn u64_at(data: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(data[at..at + 8].try_into().unwrap())
}

#[test]
fn loads_the_real_lwk() {
    let Some((path, data)) = real_image() else { return };
    let image = load(&path).unwrap();
    assert!(image.bytes.len() as u64 <= image.mem_size);
    assert!(image.entry_offset < image.bytes.len() as u64);
    assert!(image.trampoline_size > 48 && image.trampoline_size <= 4096);
    assert!(image.trampoline_offset + image.trampoline_size <= image.bytes.len() as u64);

    // Each PT_LOAD segment's file bytes, read here by hand, are in the flat
    // image at p_paddr - base.
    let phoff = u64_at(&data, 0x20) as usize;
    let phnum = u16::from_le_bytes([data[0x38], data[0x39]]) as usize;
    let mut loads = 0;
    let mut base = u64::MAX;
    for i in 0..phnum {
        let ph = phoff + i * 56;
        if u32::from_le_bytes(data[ph..ph + 4].try_into().unwrap()) == 1 {
            base = base.min(u64_at(&data, ph + 24));
        }
    }
    assert_eq!(base, 0x20_0000, "the LWK's physical link address");
    for i in 0..phnum {
        let ph = phoff + i * 56;
        if u32::from_le_bytes(data[ph..ph + 4].try_into().unwrap()) != 1 {
            continue;
        }
        loads += 1;
        let (offset, paddr, filesz) =
            (u64_at(&data, ph + 8) as usize, u64_at(&data, ph + 24), u64_at(&data, ph + 32) as usize);
        let at = (paddr - base) as usize;
        assert_eq!(image.bytes[at..at + filesz], data[offset..offset + filesz], "segment {i}");
    }
    assert!(loads > 0);
}

#[test]
fn rejects_damaged_real_lwk() {
    let Some((_, data)) = real_image() else { return };
    // Cut inside the first PT_LOAD segment's bytes.
    let phoff = u64_at(&data, 0x20) as usize;
    let end = (u64_at(&data, phoff + 8) + u64_at(&data, phoff + 32)) as usize;
    assert!(error_of(&data[..end - 1]).contains("lies outside the file"));
    assert!(error_of(&data[..32]).contains("truncated"));
    error_of(&data[..data.len() / 2]);

    let mut bad = data.clone();
    bad[1] = b'X';
    assert_eq!(error_of(&bad), "not an ELF file");

    let mut bad = data.clone();
    put16(&mut bad, E_MACHINE, 183); // aarch64
    assert!(error_of(&bad).contains("not x86-64"));
}

#[test]
fn load_names_the_file() {
    let dir = std::env::temp_dir().join(format!("atoll-cli-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("junk");
    std::fs::write(&path, b"junk").unwrap();
    let e = load(&path).unwrap_err().to_string();
    assert_eq!(e, format!("{} is not an Atoll LWK image: not an ELF file", path.display()));
    let missing = dir.join("missing");
    let e = load(&missing).unwrap_err().to_string();
    assert_eq!(e, format!("cannot read {}: No such file or directory", missing.display()));
    std::fs::remove_dir_all(&dir).unwrap();
}
