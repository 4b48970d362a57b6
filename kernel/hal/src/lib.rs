//! The LWK's hardware layer: the only crate of the kernel with `unsafe`.
//!
//! It owns everything that touches the machine directly: the boot paths,
//! CPUs and their tables, interrupts, page tables, the context switch,
//! per-CPU data, the way into and out of user mode, physical memory, the
//! memory shared with the host and the memory it lends after boot. The kernel crate above it is safe Rust
//! (`#![forbid(unsafe_code)]`) and never gets called from here except
//! through the hooks it registers:
//!
//! | hook | registered with | called when |
//! |---|---|---|
//! | the kernel's main | [`entry!`] | the boot CPU has a console and boot information |
//! | secondary-CPU entry | [`smp::start_secondaries`] | a secondary CPU is set up |
//! | system-call handler | [`syscall_handler!`] | a user thread executes SYSCALL |
//! | exception, after-interrupt | [`trap::set_handlers`] | an exception; the end of an interrupt |
//! | interrupt handlers | [`irq::register`] | their vector fires |
//! | after-switch step | [`task::Task::left_cpu`] | a context switch has left the previous task |
//! | crash reporter | [`stop::set_crash_reporter`] | the system stops with a failure |
//!
//! Every `unsafe` block carries a `// SAFETY:` reason (a clippy lint
//! enforces it).

#![no_std]

extern crate alloc;

pub mod apic;
pub mod blocks;
pub mod boot;
pub mod console;
mod console_ring;
pub mod cpu;
pub mod frames;
mod gdt;
pub mod heap;
pub mod idt;
pub mod irq;
pub mod lent;
pub mod lock;
pub mod machine;
pub mod mem;
pub mod mode;
pub mod paging;
pub mod percpu;
pub mod physmem;
mod qemu;
mod serial;
pub mod shared;
pub mod smp;
mod smpboot;
pub mod stop;
pub mod string;
pub mod task;
pub mod trap;
pub mod tsc;
pub mod user;
pub mod user_space;

pub use boot::{BootInfo, BootKind, Enclave};
pub use idt::TrapFrame;
pub use lock::{SpinLock, SpinLockGuard};
pub use percpu::{cpu_index, MAX_CPUS};
pub use physmem::KERNEL_OFFSET;
