//! Links the kernel with the hardware layer's linker script (hal/linker.ld),
//! and builds the vDSO that every program gets (vdso/, with the host's C
//! compiler) for the kernel to include (ATOLL_VDSO).
use std::process::Command;

fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    println!("cargo:rustc-link-arg-bin=atoll-kernel=-T{dir}/hal/linker.ld");
    println!("cargo:rustc-link-arg-bin=atoll-kernel=-zmax-page-size=4096");
    println!("cargo:rerun-if-changed=hal/linker.ld");

    let out = format!("{}/vdso.so", std::env::var("OUT_DIR").unwrap());
    let status = Command::new("gcc")
        .args(["-O2", "-Wall", "-Werror", "-fPIC", "-fno-stack-protector"])
        .args(["-fno-asynchronous-unwind-tables", "-nostdlib", "-shared"])
        .arg(format!("-I{dir}/../abi"))
        .arg(format!("-Wl,-T,{dir}/vdso/vdso.lds"))
        .args(["-Wl,--hash-style=both", "-Wl,-soname=linux-vdso.so.1", "-Wl,-Bsymbolic"])
        .args(["-Wl,--no-undefined", "-o", &out])
        .arg(format!("{dir}/vdso/vdso.c"))
        .status()
        .expect("building the vDSO needs gcc");
    assert!(status.success(), "building the vDSO failed");
    println!("cargo:rustc-env=ATOLL_VDSO={out}");
    for f in ["vdso/vdso.c", "vdso/vdso.lds", "../abi/atoll_abi.h", "../abi/atoll_abi_gen.h"] {
        println!("cargo:rerun-if-changed={f}");
    }
}
