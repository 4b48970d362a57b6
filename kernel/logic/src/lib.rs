//! Hardware-free logic of the Atoll lightweight kernel.
//!
//! Everything here is plain computation over memory the caller hands in:
//! lock algorithms, the physical frame allocator, page-table planning, boot
//! memory-map arithmetic, runs between pages, the inter-kernel message ring, command-line parsing, Linux error numbers, benchmark statistics and ACPI
//! table parsing. Keeping it free of hardware access lets the same code run in
//! the kernel (`no_std`, no allocator) and under `cargo test` on the host.

#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod acpi;
mod bitmap;
pub mod cmdline;
pub mod errno;
pub mod frames;
pub mod kmsg;
pub mod locks;
pub mod memmap;
pub mod paging_plan;
pub mod runs;
pub mod stats;
pub mod user_pages;
