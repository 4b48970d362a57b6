//! Links the kernel with the hardware layer's linker script (hal/linker.ld).
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    println!("cargo:rustc-link-arg-bin=atoll-kernel=-T{dir}/hal/linker.ld");
    println!("cargo:rustc-link-arg-bin=atoll-kernel=-zmax-page-size=4096");
    println!("cargo:rerun-if-changed=hal/linker.ld");
}
