//! Page tables for the direct map: every range the kernel owns is mapped at
//! phys + KERNEL_OFFSET with the largest pages that fit (1 GiB, 2 MiB, then
//! 4 KiB at ragged edges), so normal operation never takes a TLB-missing walk
//! into small pages and never page-faults.

use core::sync::atomic::{AtomicU64, Ordering};
use lwk_logic::paging_plan::{plan, table_indices, PageSize};

use super::physmem::phys_to_virt;
use crate::physmem::KERNEL_OFFSET;

const PRESENT: u64 = 1 << 0;
const WRITABLE: u64 = 1 << 1;
const WRITE_THROUGH: u64 = 1 << 3;
const CACHE_DISABLE: u64 = 1 << 4;
const HUGE: u64 = 1 << 7;
const ADDR_MASK: u64 = 0x000f_ffff_ffff_f000;

static KERNEL_PML4: AtomicU64 = AtomicU64::new(0);

extern "C" {
    static boot_pml4: u8;
}

/// Physical address of the boot page tables (identity + upper half of 0-4 GiB),
/// which secondary CPUs use on their way in.
pub(crate) fn boot_tables_phys() -> u64 {
    // SAFETY: only the symbol's address is taken.
    super::physmem::virt_to_phys(unsafe { &boot_pml4 as *const u8 as u64 })
}

/// Builds kernel page tables. `new_table` returns a zeroed 4 KiB frame.
pub(crate) struct Builder<F: FnMut() -> u64> {
    pml4: u64,
    new_table: F,
}

fn table(phys: u64) -> &'static mut [u64; 512] {
    // SAFETY: `phys` is a page-table frame the kernel allocated (at boot by
    // the builder, later by next_live under the lent-memory lock); it is
    // mapped (the direct map) and only changed under that ownership.
    unsafe { &mut *(phys_to_virt(phys) as *mut [u64; 512]) }
}

impl<F: FnMut() -> u64> Builder<F> {
    pub(crate) fn new(mut new_table: F) -> Self {
        let pml4 = new_table();
        Builder { pml4, new_table }
    }

    /// Walks one level down from `entry`, creating the next table if absent.
    fn next(&mut self, table_phys: u64, index: usize) -> u64 {
        let t = table(table_phys);
        if t[index] & PRESENT == 0 {
            let fresh = (self.new_table)();
            t[index] = fresh | PRESENT | WRITABLE;
        }
        t[index] & ADDR_MASK
    }

    fn map_page(&mut self, virt: u64, phys: u64, size: PageSize, flags: u64) {
        let [i4, i3, i2, i1] = table_indices(virt);
        let pdpt = self.next(self.pml4, i4);
        match size {
            PageSize::Size1G => table(pdpt)[i3] = phys | flags | HUGE,
            PageSize::Size2M => {
                let pd = self.next(pdpt, i3);
                table(pd)[i2] = phys | flags | HUGE;
            }
            PageSize::Size4K => {
                let pd = self.next(pdpt, i3);
                let pt = self.next(pd, i2);
                table(pt)[i1] = phys | flags;
            }
        }
    }

    /// Maps RAM [start, end) write-back at its direct-map address.
    pub(crate) fn map_ram(&mut self, start: u64, end: u64, allow_1g: bool) {
        for c in plan(start, end, KERNEL_OFFSET, allow_1g) {
            self.map_page(c.virt, c.phys, c.size, PRESENT | WRITABLE);
        }
    }

    /// Maps one 4 KiB device page uncached at its direct-map address.
    pub(crate) fn map_mmio(&mut self, phys: u64) {
        let phys = phys & !0xfff;
        let flags = PRESENT | WRITABLE | CACHE_DISABLE | WRITE_THROUGH;
        self.map_page(phys_to_virt(phys), phys, PageSize::Size4K, flags);
    }

    pub(crate) fn finish(self) -> u64 {
        KERNEL_PML4.store(self.pml4, Ordering::Relaxed);
        self.pml4
    }
}

/// Why a page could not be mapped after boot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PteError {
    /// No frame for a page table.
    NoMemory,
    /// A large page covers the address already.
    Huge,
    /// Outside the 512 GiB the kernel's top-level entries cover: user
    /// address spaces copied those entries and would not see a new one.
    OutOfReach,
}

/// Maps one 2 MiB page write-back in the live kernel tables (a memory block
/// the host adds). A missing page directory comes from `new_table` (a
/// zeroed frame that stays a table for good, whatever happens to the
/// block). The caller serializes changes.
pub(crate) fn map_kernel_large_page(
    virt: u64,
    phys: u64,
    new_table: impl FnOnce() -> Option<u64>,
) -> Result<(), PteError> {
    let [i4, i3, i2, _] = table_indices(virt);
    let top = table(KERNEL_PML4.load(Ordering::Relaxed))[i4];
    if top & PRESENT == 0 {
        return Err(PteError::OutOfReach);
    }
    let pdpt = table(top & ADDR_MASK);
    if pdpt[i3] & PRESENT == 0 {
        pdpt[i3] = new_table().ok_or(PteError::NoMemory)? | PRESENT | WRITABLE;
    } else if pdpt[i3] & HUGE != 0 {
        return Err(PteError::Huge);
    }
    let pd = table(pdpt[i3] & ADDR_MASK);
    if pd[i2] & PRESENT != 0 {
        return Err(PteError::Huge);
    }
    pd[i2] = phys | PRESENT | WRITABLE | HUGE;
    Ok(())
}

/// Unmaps a page `map_kernel_large_page` mapped, and drops this CPU's
/// translation of it; other CPUs are the caller's to flush.
pub(crate) fn unmap_kernel_large_page(virt: u64) {
    let [i4, i3, i2, _] = table_indices(virt);
    let top = table(KERNEL_PML4.load(Ordering::Relaxed))[i4];
    let Some(pdpt) = (top & PRESENT != 0).then(|| table(top & ADDR_MASK)) else { return };
    if pdpt[i3] & PRESENT == 0 || pdpt[i3] & HUGE != 0 {
        return;
    }
    let pd = table(pdpt[i3] & ADDR_MASK);
    if pd[i2] & HUGE != 0 {
        pd[i2] = 0;
        // SAFETY: invlpg only drops a cached translation.
        unsafe { core::arch::asm!("invlpg [{}]", in(reg) virt, options(nostack)) };
    }
}

/// The table an entry points to, made (zeroed) if absent. Runs after boot,
/// on the live kernel tables, under the caller's lock.
fn next_live(
    table_phys: u64,
    index: usize,
    new_table: &mut impl FnMut() -> Option<u64>,
) -> Result<u64, PteError> {
    let t = table(table_phys);
    if t[index] & PRESENT == 0 {
        let fresh = new_table().ok_or(PteError::NoMemory)?;
        t[index] = fresh | PRESENT | WRITABLE;
    } else if t[index] & HUGE != 0 {
        return Err(PteError::Huge);
    }
    Ok(t[index] & ADDR_MASK)
}

/// Maps one 4 KiB page write-back in the live kernel tables, missing
/// tables from `new_table` (zeroed frames); the caller serializes changes
/// and checked that `virt` was unmapped. A present entry never changes, so
/// no CPU needs a flush.
pub(crate) fn map_kernel_page(
    virt: u64,
    phys: u64,
    mut new_table: impl FnMut() -> Option<u64>,
) -> Result<(), PteError> {
    let [i4, i3, i2, i1] = table_indices(virt);
    let top = table(KERNEL_PML4.load(Ordering::Relaxed))[i4];
    if top & PRESENT == 0 {
        return Err(PteError::OutOfReach);
    }
    let pdpt = top & ADDR_MASK;
    let pd = next_live(pdpt, i3, &mut new_table)?;
    let pt = next_live(pd, i2, &mut new_table)?;
    table(pt)[i1] = phys | PRESENT | WRITABLE;
    Ok(())
}

/// Unmaps one 4 KiB page that `map_kernel_page` mapped, and drops this
/// CPU's translation of it; other CPUs are the caller's to flush.
pub(crate) fn unmap_kernel_page(virt: u64) {
    let [i4, i3, i2, i1] = table_indices(virt);
    let mut t = KERNEL_PML4.load(Ordering::Relaxed);
    for i in [i4, i3, i2] {
        let e = table(t)[i];
        if e & PRESENT == 0 || e & HUGE != 0 {
            return;
        }
        t = e & ADDR_MASK;
    }
    table(t)[i1] = 0;
    // SAFETY: invlpg only drops a cached translation.
    unsafe { core::arch::asm!("invlpg [{}]", in(reg) virt, options(nostack)) };
}

/// Switches this CPU to the kernel page tables.
pub(crate) fn activate_kernel_tables() {
    let pml4 = KERNEL_PML4.load(Ordering::Relaxed);
    assert!(pml4 != 0, "kernel page tables not built");
    // SAFETY: the kernel tables map the running code, stack and data at the
    // same virtual addresses as the boot tables (the direct map).
    unsafe { core::arch::asm!("mov cr3, {}", in(reg) pml4, options(nostack)) };
}

/// True for addresses in the lower half: programs', never the kernel's.
pub fn is_user_address(a: u64) -> bool {
    a < 0x0000_8000_0000_0000
}

/// Translates a direct-map virtual address through the live page tables;
/// used by the self-tests to check the map.
pub fn translate(virt: u64) -> Option<(u64, PageSize)> {
    let cr3: u64;
    // SAFETY: reading CR3 has no side effects.
    unsafe { core::arch::asm!("mov {}, cr3", out(reg) cr3, options(nostack)) };
    let [i4, i3, i2, i1] = table_indices(virt);
    let e4 = table(cr3 & ADDR_MASK)[i4];
    if e4 & PRESENT == 0 {
        return None;
    }
    let e3 = table(e4 & ADDR_MASK)[i3];
    if e3 & PRESENT == 0 {
        return None;
    }
    if e3 & HUGE != 0 {
        return Some(((e3 & ADDR_MASK & !0x3fff_ffff) + (virt & 0x3fff_ffff), PageSize::Size1G));
    }
    let e2 = table(e3 & ADDR_MASK)[i2];
    if e2 & PRESENT == 0 {
        return None;
    }
    if e2 & HUGE != 0 {
        return Some(((e2 & ADDR_MASK & !0x1f_ffff) + (virt & 0x1f_ffff), PageSize::Size2M));
    }
    let e1 = table(e2 & ADDR_MASK)[i1];
    (e1 & PRESENT != 0).then(|| ((e1 & ADDR_MASK) + (virt & 0xfff), PageSize::Size4K))
}

/// Physical address of the kernel's PML4 (user tables copy its upper half).
pub(crate) fn kernel_root() -> u64 {
    KERNEL_PML4.load(Ordering::Relaxed)
}

pub(crate) fn current_root() -> u64 {
    let cr3: u64;
    // SAFETY: reading CR3 has no side effects.
    unsafe { core::arch::asm!("mov {}, cr3", out(reg) cr3, options(nostack)) };
    cr3 & ADDR_MASK
}

/// The root each CPU has loaded (0: not known yet), for `loaded_anywhere`.
static LOADED: [AtomicU64; super::percpu::MAX_CPUS] =
    [const { AtomicU64::new(0) }; super::percpu::MAX_CPUS];

/// Switches this CPU to the kernel's own tables (off any program's).
pub fn switch_to_kernel() {
    switch_root(kernel_root())
}

/// Switches to the address space rooted at `root` (the kernel PML4, or a
/// user PML4 whose upper half is the kernel's: `user_space::Root::load`),
/// unless it is already loaded.
pub(crate) fn switch_root(root: u64) {
    if current_root() != root {
        // SAFETY: `root` is the kernel PML4 or a user PML4 that repeats its
        // upper half, so the running kernel code and data stay mapped.
        unsafe { core::arch::asm!("mov cr3, {}", in(reg) root, options(nostack)) };
    }
    LOADED[super::percpu::cpu_index()].store(root, Ordering::Release);
}

/// Whether some CPU has the page tables at `root` loaded: they must not
/// be freed then (that CPU would lose the kernel's mappings with them).
pub(crate) fn loaded_anywhere(root: u64) -> bool {
    LOADED.iter().any(|r| r.load(Ordering::Acquire) == root)
}

/// Drops this CPU's cached user translations (reloading CR3; user pages
/// are never global).
pub fn flush_user_tlb() {
    let root = current_root();
    // SAFETY: reloads the page tables already in use.
    unsafe { core::arch::asm!("mov cr3, {}", in(reg) root, options(nostack)) };
}
