//! Builds libatoll-hrt from its C sources (scripts/build-hrt.sh) into
//! OUT_DIR and links it statically: the crate wraps that one library.
use std::path::Path;
use std::process::Command;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let status = Command::new(root.join("scripts/build-hrt.sh"))
        .arg(&out)
        .status()
        .expect("running scripts/build-hrt.sh");
    assert!(status.success(), "scripts/build-hrt.sh failed");
    println!("cargo:rustc-link-search=native={out}/lib");
    println!("cargo:rustc-link-lib=static=atoll-hrt");
    for dir in ["hrt", "abi"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
}
