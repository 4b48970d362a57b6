//! Tests of the program parser on small ELF files built here, damaged copies
//! of them, and (when gcc is installed) real static, static-PIE and dynamic
//! programs.

use super::*;
use crate::program::test_programs::compile;

const E_TYPE: usize = 16;
const E_MACHINE: usize = 18;
const E_ENTRY: usize = 24;
const E_PHOFF: usize = 32;
const PHDRS: usize = 0x40;

fn put16(v: &mut [u8], at: usize, x: u16) {
    v[at..at + 2].copy_from_slice(&x.to_le_bytes());
}
fn put32(v: &mut [u8], at: usize, x: u32) {
    v[at..at + 4].copy_from_slice(&x.to_le_bytes());
}
fn put64(v: &mut [u8], at: usize, x: u64) {
    v[at..at + 8].copy_from_slice(&x.to_le_bytes());
}

/// (p_type, p_flags, p_offset, p_vaddr, p_filesz, p_memsz)
type Phdr = (u32, u32, u64, u64, u64, u64);

/// An ELF file of `size` bytes with these program headers at 0x40.
fn build(e_type: u16, entry: u64, phdrs: &[Phdr], size: usize) -> Vec<u8> {
    let mut v = vec![0u8; size.max(PHDRS + phdrs.len() * 56)];
    v[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
    put16(&mut v, E_TYPE, e_type);
    put16(&mut v, E_MACHINE, 62);
    put32(&mut v, 20, 1);
    put64(&mut v, E_ENTRY, entry);
    put64(&mut v, E_PHOFF, PHDRS as u64);
    put16(&mut v, 52, 64);
    put16(&mut v, 54, 56);
    put16(&mut v, 56, phdrs.len() as u16);
    for (i, &(kind, flags, offset, vaddr, filesz, memsz)) in phdrs.iter().enumerate() {
        let ph = PHDRS + i * 56;
        put32(&mut v, ph, kind);
        put32(&mut v, ph + 4, flags);
        put64(&mut v, ph + 8, offset);
        put64(&mut v, ph + 16, vaddr);
        put64(&mut v, ph + 24, vaddr);
        put64(&mut v, ph + 32, filesz);
        put64(&mut v, ph + 40, memsz);
        put64(&mut v, ph + 48, 0x1000);
    }
    v
}

/// Like `gcc -static`: headers in a read-only segment, text, data with bss.
fn static_exec() -> Vec<u8> {
    build(
        2,
        0x40_1010,
        &[
            (PT_LOAD.0, 4, 0, 0x40_0000, 0x200, 0x200),
            (PT_LOAD.0, 5, 0x1000, 0x40_1000, 0x100, 0x100),
            (PT_LOAD.0, 6, 0x2000, 0x40_3000, 0x80, 0x1000),
            (0x6474_e551, 6, 0, 0, 0, 0), // PT_GNU_STACK
        ],
        0x2080,
    )
}

fn error_of(data: &[u8]) -> String {
    match parse(data, Role::Program) {
        Ok(p) => panic!("accepted a bad program: {p:?}"),
        Err(e) => e,
    }
}

#[test]
fn a_static_executable() {
    let p = parse(&static_exec(), Role::Program).unwrap();
    assert_eq!((p.bias, p.entry, p.phnum), (0, 0x40_1010, 4));
    assert_eq!(p.phdr, 0x40_0040, "e_phoff inside the first segment");
    assert_eq!(
        p.segments,
        vec![
            Segment { index: 0, offset: 0, filesz: 0x200, addr: 0x40_0000, memsz: 0x200, prot: PROT_READ },
            Segment {
                index: 1,
                offset: 0x1000,
                filesz: 0x100,
                addr: 0x40_1000,
                memsz: 0x100,
                prot: PROT_READ | PROT_EXEC
            },
            Segment {
                index: 2,
                offset: 0x2000,
                filesz: 0x80,
                addr: 0x40_3000,
                memsz: 0x1000,
                prot: PROT_READ | PROT_WRITE
            },
        ]
    );
}

#[test]
fn a_static_pie_gets_the_bias() {
    let mut data = static_exec();
    put16(&mut data, E_TYPE, 3);
    // Link it at 0 as PIEs are.
    put64(&mut data, E_ENTRY, 0x1010);
    for i in 0..3 {
        put64(&mut data, PHDRS + i * 56 + 16, [0, 0x1000, 0x3000][i]);
    }
    let p = parse(&data, Role::Program).unwrap();
    assert_eq!((p.bias, p.entry, p.phdr), (PIE_BASE, PIE_BASE + 0x1010, PIE_BASE + 0x40));
    assert_eq!(p.segments[2].addr, PIE_BASE + 0x3000);
}

#[test]
fn pt_phdr_wins() {
    let data = build(
        2,
        0x40_1000,
        &[(PT_PHDR.0, 4, 0x40, 0x40_0040, 0x70, 0x70), (PT_LOAD.0, 5, 0, 0x40_0000, 0x2000, 0x2000)],
        0x2000,
    );
    assert_eq!(parse(&data, Role::Program).unwrap().phdr, 0x40_0040);
    let moved = build(
        2,
        0x40_1000,
        &[(PT_PHDR.0, 4, 0x40, 0x50_0000, 0x70, 0x70), (PT_LOAD.0, 5, 0, 0x40_0000, 0x2000, 0x2000)],
        0x2000,
    );
    assert_eq!(parse(&moved, Role::Program).unwrap().phdr, 0x50_0000);
    // No PT_PHDR and e_phoff in no segment: Linux passes the bias.
    let unmapped = build(2, 0x40_1000, &[(PT_LOAD.0, 5, 0x1000, 0x40_1000, 0x100, 0x100)], 0x1100);
    assert_eq!(parse(&unmapped, Role::Program).unwrap().phdr, 0);
}

#[test]
fn refuses_what_is_not_a_static_x86_64_program() {
    assert!(error_of(b"").contains("not an ELF file"));
    assert!(error_of(b"#!/bin/sh\necho hi\n").contains("is a script"));
    assert!(error_of(b"\x7fELF\x02\x01\x01").contains("truncated"));

    let mut data = static_exec();
    data[4] = 1;
    assert!(error_of(&data).contains("32-bit"));
    let mut data = static_exec();
    data[5] = 2;
    assert!(error_of(&data).contains("big-endian"));
    let mut data = static_exec();
    put16(&mut data, E_MACHINE, 183);
    assert_eq!(error_of(&data), "is built for ARM64 (aarch64), not x86-64");
    let mut data = static_exec();
    put16(&mut data, E_TYPE, 1);
    assert!(error_of(&data).contains("object file"));
    put16(&mut data, E_TYPE, 4);
    assert!(error_of(&data).contains("core dump"));
    let mut data = static_exec();
    put16(&mut data, 54, 64);
    assert!(error_of(&data).contains("program headers of 64 bytes"));

    let interp = b"/lib64/ld-linux-x86-64.so.2\0";
    let mut dynamic = build(
        3,
        0x1000,
        &[
            (PT_INTERP.0, 4, 0x200, 0x200, interp.len() as u64, interp.len() as u64),
            (PT_LOAD.0, 5, 0, 0, 0x1100, 0x1100),
        ],
        0x1100,
    );
    dynamic[0x200..0x200 + interp.len()].copy_from_slice(interp);
    let p = parse(&dynamic, Role::Program).unwrap();
    assert_eq!(p.interp.as_deref(), Some(&interp[..interp.len() - 1]));
    // A loader may not name one of its own, and must be a shared object.
    assert!(parse(&dynamic, Role::Interpreter).unwrap_err().contains("loader of its own"));
    put16(&mut dynamic, E_TYPE, 2);
    assert!(parse(&dynamic, Role::Interpreter).unwrap_err().contains("is not a shared object"));
    // The name must end with a NUL inside the segment.
    dynamic[0x200 + interp.len() - 1] = b'x';
    assert!(error_of(&dynamic).contains("damaged loader name"));
}

#[test]
fn refuses_damage() {
    let data = static_exec();
    for len in 0..data.len() {
        error_of(&data[..len]);
    }
    assert!(error_of(&data[..0x80]).contains("program headers outside the file"));
    assert!(error_of(&data[..0x2040]).contains("segment (2) that lies outside the file"));

    let mut bad = data.clone();
    put64(&mut bad, E_ENTRY, 0x40_2000);
    assert!(error_of(&bad).contains("entry point (0x402000) outside"));
    let mut bad = data.clone();
    put64(&mut bad, PHDRS + 32, 0x300); // filesz > memsz
    assert!(error_of(&bad).contains("more bytes in the file than in memory"));
    let mut bad = data.clone();
    put64(&mut bad, PHDRS + 56 + 16, u64::MAX - 0x10); // vaddr + memsz overflows
    assert!(error_of(&bad).contains("past the end of the address space"));
    let none = build(2, 0x40_1000, &[(0x6474_e551, 6, 0, 0, 0, 0)], 0x100);
    assert!(error_of(&none).contains("no loadable segments"));
}

#[test]
fn survives_random_damage() {
    let data = static_exec();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..5000 {
        let mut copy = data.clone();
        for _ in 0..3 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            copy[(seed >> 8) as usize % (PHDRS + 4 * 56)] = (seed >> 40) as u8;
        }
        if let Ok(p) = parse(&copy, Role::Program) {
            for s in &p.segments {
                assert!(s.filesz <= s.memsz && s.offset + s.filesz <= copy.len() as u64);
            }
        }
    }
}

// ---- Real programs, when gcc is installed ----

const HELLO: &str = "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n";

#[test]
fn real_programs() {
    if let Some(program) = compile("static", HELLO, &["-static", "-no-pie"]) {
        let p = parse(&program.bytes(), Role::Program).unwrap();
        assert_eq!(p.bias, 0);
        assert!(p.segments.iter().any(|s| s.prot & PROT_EXEC != 0));
        assert!(p.segments.iter().any(|s| s.memsz > s.filesz), "bss");
    }
    if let Some(program) = compile("static-pie", HELLO, &["-static-pie"]) {
        let p = parse(&program.bytes(), Role::Program).unwrap();
        assert_eq!(p.bias, PIE_BASE);
        assert!(p.segments.iter().all(|s| s.addr >= PIE_BASE));
    }
    if let Some(program) = compile("dynamic", HELLO, &[]) {
        let p = parse(&program.bytes(), Role::Program).unwrap();
        assert_eq!(p.interp.as_deref(), Some(&b"/lib64/ld-linux-x86-64.so.2"[..]));
        assert_eq!(p.bias, PIE_BASE);
    }
    if let Ok(loader) = std::fs::read("/lib64/ld-linux-x86-64.so.2") {
        let p = parse(&loader, Role::Interpreter).unwrap();
        assert_eq!(p.bias, INTERP_BASE);
        assert!(p.interp.is_none() && p.segments.iter().all(|s| s.addr >= INTERP_BASE));
    }
    if let Some(program) = compile("object", HELLO, &["-c"]) {
        assert!(parse(&program.bytes(), Role::Program).unwrap_err().contains("object file"));
    }
}
