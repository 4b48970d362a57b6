//! The loader end to end without an enclave: a real program (gcc or
//! musl-gcc; static, or dynamic with Debian's ld.so) is planned exactly as `atoll run` plans it, then started in a forked
//! child of the test process the way the LWK starts it: its regions mapped
//! at their addresses with their protections, the file bytes and the stack
//! copied in, rsp set and a jump to the entry with rdx zero (as after
//! execve). The program runs on Linux, so its output and exit status show
//! whether the C runtime found argc, argv, envp and auxv where it expects.
//!
//! Test-only `unsafe`: fork, raw mappings and the jump are what is tested.

use super::*;
use crate::program::test_programs::{compile_with, Compiled};
use atoll_abi::{PROT_EXEC, PROT_READ, PROT_WRITE};
use std::io::Read;
use std::os::fd::AsRawFd;

const PROBE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
int main(int argc, char **argv) {
    unsigned char *r = (unsigned char *)getauxval(AT_RANDOM);
    printf("argc=%d", argc);
    for (int i = 0; i < argc; i++) printf(" [%s]", argv[i]);
    printf(" null=%d", argv[argc] == NULL);
    printf(" GREETING=%s", getenv("GREETING"));
    printf(" execfn=%s platform=%s", (char *)getauxval(AT_EXECFN), (char *)getauxval(AT_PLATFORM));
    printf(" random=%02x%02x", r[0], r[15]);
    printf(" pagesz=%lu uid=%lu\n", getauxval(AT_PAGESZ), getauxval(AT_UID));
    char *heap = malloc(1 << 20);
    strcpy(heap, "heap works");
    puts(heap);
    return 42;
}
"#;

/// Where the child reports that it could not set up (an address was taken).
const SETUP_FAILED: i32 = 200;

fn plan_for(files: &Files) -> Plan {
    let argv = vec![b"/bin/probe".to_vec(), b"one".to_vec(), b"two words".to_vec()];
    let envp = vec![b"A=1".to_vec(), b"GREETING=hi there".to_vec()];
    let how = Invocation { name: "probe", execfn: b"/bin/probe", argv: &argv, envp: &envp };
    let facts = Facts {
        ids: crate::sys::Ids { uid: 1234, euid: 1234, gid: 5, egid: 5 },
        hwcap: crate::sys::hwcap(),
        random: [0xab, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xcd],
        // Only the LWK maps one.
        vdso: None,
    };
    plan(files, &how, &facts).unwrap()
}

/// Runs `plan` in a child; its exit status (as waitpid gives it) and stdout.
fn run_natively(files: &Files, plan: &Plan) -> (i32, String) {
    let (read_end, write_end) = rustix::pipe::pipe().unwrap();
    // SAFETY: fork in a threaded test process; until it execs the program,
    // the child only makes async-signal-safe system calls and copies bytes
    // that are already allocated (no allocation, no locks).
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        // SAFETY: the child's memory is its own copy; see start_program.
        unsafe { start_program(files, plan, write_end.as_raw_fd()) }
    }
    drop(write_end);
    let mut out = String::new();
    std::fs::File::from(read_end).read_to_string(&mut out).unwrap();
    let pid = rustix::process::Pid::from_raw(pid);
    let (_, status) = rustix::process::waitpid(pid, rustix::process::WaitOptions::empty()).unwrap().unwrap();
    (status.as_raw(), out)
}

/// In the child: map, copy, protect, jump. Never returns.
///
/// # Safety
/// Only in a freshly forked child: it maps over addresses the test process
/// does not use (MAP_FIXED_NOREPLACE checks) and leaves Rust for good.
unsafe fn start_program(files: &Files, plan: &Plan, stdout: i32) -> ! {
    // SAFETY: see the function's contract; every address written to was
    // just mapped by this child, and the jump leaves Rust for good.
    unsafe {
        libc::dup2(stdout, 1);
        libc::alarm(20);
        for r in &plan.layout.regions {
            let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE;
            let at = libc::mmap(r.start as *mut _, r.size as usize, libc::PROT_READ | libc::PROT_WRITE, flags, -1, 0);
            if at != r.start as *mut _ {
                libc::_exit(SETUP_FAILED);
            }
        }
        for p in &plan.placements {
            let bytes = files.bytes(p);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.addr as *mut u8, bytes.len());
        }
        let stack = &plan.stack;
        std::ptr::copy_nonoverlapping(stack.bytes.as_ptr(), stack.sp as *mut u8, stack.bytes.len());
        for r in &plan.layout.regions {
            let mut prot = 0;
            for (ours, linux) in
                [(PROT_READ, libc::PROT_READ), (PROT_WRITE, libc::PROT_WRITE), (PROT_EXEC, libc::PROT_EXEC)]
            {
                if r.prot & ours != 0 {
                    prot |= linux;
                }
            }
            libc::mprotect(r.start as *mut _, r.size as usize, prot);
        }
        core::arch::asm!(
            "mov rsp, rdi",
            "xor edi, edi",
            "xor edx, edx",
            "jmp rax",
            in("rdi") stack.sp,
            in("rax") plan.entry,
            options(noreturn)
        );
    }
}

fn check_probe(program: Option<Compiled>) {
    let Some(program) = program else { return };
    let name = program.name();
    let data = program.bytes();
    let loader = interpreter(&data, &name).unwrap().map(|path| std::fs::read(path).unwrap());
    let files = Files { program: &data, interp: loader.as_deref() };
    let plan = plan_for(&files);
    let (status, out) = run_natively(&files, &plan);
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == SETUP_FAILED {
        println!("note: an address the program needs is taken in this test process; skipping");
        return;
    }
    assert!(libc::WIFEXITED(status), "{name}: ended by signal {} with output {out:?}", libc::WTERMSIG(status));
    assert_eq!(libc::WEXITSTATUS(status), 42, "{name}: {out}");
    assert_eq!(
        out,
        "argc=3 [/bin/probe] [one] [two words] null=1 GREETING=hi there execfn=/bin/probe platform=x86_64 \
         random=abcd pagesz=4096 uid=1234\nheap works\n",
        "{name}"
    );
}

#[test]
fn a_static_program_starts() {
    check_probe(compile_with("gcc", "probe-static", PROBE, &["-static", "-no-pie", "-O1"]));
}

#[test]
fn a_static_pie_starts() {
    check_probe(compile_with("gcc", "probe-static-pie", PROBE, &["-static-pie", "-O1"]));
}

#[test]
fn a_dynamic_program_starts_in_its_loader() {
    check_probe(compile_with("gcc", "probe-dynamic", PROBE, &["-O1"]));
}

#[test]
fn a_static_musl_program_starts() {
    check_probe(compile_with("musl-gcc", "probe-musl", PROBE, &["-static", "-no-pie", "-O1"]));
}

/// Debian's musl-gcc does not know -static-pie: its link step by hand.
const MUSL_STATIC_PIE: &[&str] = &[
    "-O1",
    "-fPIE",
    "-nostartfiles",
    "-Wl,-static,-pie,--no-dynamic-linker,-z,text",
    "/usr/lib/x86_64-linux-musl/rcrt1.o",
    "/usr/lib/x86_64-linux-musl/crti.o",
    "/usr/lib/x86_64-linux-musl/crtn.o",
];

#[test]
fn a_static_pie_musl_program_starts() {
    check_probe(compile_with("musl-gcc", "probe-musl-pie", PROBE, MUSL_STATIC_PIE));
}
