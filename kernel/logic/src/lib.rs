//! Hardware-free logic of the Atoll lightweight kernel.
//!
//! Everything here is plain computation over memory the caller hands in:
//! lock algorithms, the physical frame allocator, page-table planning, boot
//! memory-map arithmetic, runs between pages, a program's list of mappings,
//! the inter-kernel message ring, command-line parsing, Linux error
//! numbers, a pipe's bytes and ends, benchmark statistics, ACPI table
//! parsing and the OS noise probes' attribution. Keeping it free of
//! hardware access lets the same code run in the kernel (`no_std`; the
//! list of mappings and a pipe's bytes allocate, from the kernel's heap)
//! and under `cargo test` on the host.

#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate alloc;

pub mod acpi;
mod bitmap;
pub mod cmdline;
pub mod errno;
pub mod frames;
pub mod kmsg;
pub mod locks;
pub mod maps;
pub mod memmap;
pub mod noise;
pub mod paging_plan;
pub mod pipe;
pub mod runs;
pub mod stats;
pub mod user_pages;
pub mod xemem_events;
