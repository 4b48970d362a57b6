//! Links the kernel with its own linker script.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    println!("cargo:rustc-link-arg-bin=atoll-kernel=-T{dir}/linker.ld");
    println!("cargo:rustc-link-arg-bin=atoll-kernel=-zmax-page-size=4096");
    println!("cargo:rerun-if-changed=linker.ld");
}
