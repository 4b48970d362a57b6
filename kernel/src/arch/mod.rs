//! The hardware layer. This is the only module allowed to use `unsafe`; each use
//! carries a `// SAFETY:` reason. Everything above it is safe Rust.

pub mod apic;
pub mod context;
pub mod cpu;
pub mod entry;
pub mod gdt;
pub mod heap;
pub mod idt;
pub mod lock;
pub mod paging;
pub mod percpu;
pub mod physmem;
pub mod qemu;
pub mod serial;
pub mod shared;
pub mod smpboot;
pub mod tsc;
pub mod user;

/// All physical memory the kernel owns is mapped at `phys + KERNEL_OFFSET`,
/// leaving the lower half free for user programs.
pub const KERNEL_OFFSET: u64 = 0xffff_8000_0000_0000;
