//! The vDSO every program gets (kernel/vdso, built by build.rs): its data
//! page (struct atoll_vdso_data) at VDSO_BASE and its image right after,
//! read-only, so that clock_gettime, gettimeofday and time need no system
//! call. `atoll run` passes the image's address as AT_SYSINFO_EHDR.

use atoll_abi::{VdsoData, VDSO_BASE, VDSO_PAGES};
use core::mem::offset_of;
use hal::tsc;
use lwk_logic::errno::Errno;
use lwk_logic::maps::Backing;
use lwk_logic::user_pages::{Access, PAGE_SIZE};

use crate::mm::vm::{self, AddressSpace};

static IMAGE: &[u8] = include_bytes!(env!("ATOLL_VDSO"));
const IMAGE_PAGES: u64 = (IMAGE.len() as u64).div_ceil(PAGE_SIZE);
// The data page and the image.
const _: () = assert!(IMAGE_PAGES < VDSO_PAGES, "the vDSO outgrew its pages");

/// Maps the data page and the image into a new program's `vm`.
pub fn map(vm: &mut AddressSpace) -> Result<(), Errno> {
    let rw = Access { read: true, write: true, exec: false };
    vm.map_fixed(VDSO_BASE, (1 + IMAGE_PAGES) * PAGE_SIZE, rw)?;
    vm.fill(VDSO_BASE + offset_of!(VdsoData, ns_mult) as u64, &tsc::ns_mult().to_le_bytes())?;
    vm.fill(VDSO_BASE + PAGE_SIZE, IMAGE)?;
    let mut freed = vm::Freed::new();
    let read = Access { read: true, write: false, exec: false };
    vm.protect(VDSO_BASE, PAGE_SIZE, read, &mut freed)?;
    let code = Access { exec: true, ..read };
    vm.protect(VDSO_BASE + PAGE_SIZE, IMAGE_PAGES * PAGE_SIZE, code, &mut freed)?;
    // Fresh pages: nothing was shared, nothing freed.
    drop(freed);
    vm.label(VDSO_BASE, VDSO_BASE + PAGE_SIZE, false, &Backing::Vvar);
    let image_end = VDSO_BASE + (1 + IMAGE_PAGES) * PAGE_SIZE;
    vm.label(VDSO_BASE + PAGE_SIZE, image_end, false, &Backing::Vdso);
    Ok(())
}

/// CLOCK_REALTIME - CLOCK_MONOTONIC for the vDSO of the program in `vm`.
pub fn set_realtime_offset(vm: &mut AddressSpace, offset_ns: i64) {
    let at = VDSO_BASE + offset_of!(VdsoData, realtime_offset_ns) as u64;
    // A program that unmapped its vDSO has nothing to set.
    let _ = vm.fill(at, &offset_ns.to_le_bytes());
}
