// SPDX-License-Identifier: GPL-2.0-only
/*
 * Booting the LWK (Pisces' sequence): load the image into the enclave's
 * first block, write the boot parameters, build page tables the trampoline
 * can use, borrow Linux's real-mode trampoline page, INIT/SIPI the first
 * enclave CPU, wait for "booted", give the page back.
 */
#include <linux/cpu.h>
#include <linux/gfp.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/apic.h>
#include <asm/msr.h>
#include <asm/tsc.h>
#include "atoll.h"

#define PTE_PRESENT_RW		0x3ULL
#define PTE_LARGE		0x80ULL
#define MAX_BOOT_TABLES		40

/* Page tables below 4 GiB (the trampoline loads CR3 in 32-bit terms). */
struct boot_tables {
	u64 *pml4;
	struct page *pages[MAX_BOOT_TABLES];
	int count;
};

static u64 *table_alloc(struct boot_tables *bt)
{
	struct page *p;

	if (bt->count == MAX_BOOT_TABLES)
		return NULL;
	p = alloc_page(GFP_KERNEL | __GFP_DMA32 | __GFP_ZERO);
	if (!p)
		return NULL;
	bt->pages[bt->count++] = p;
	return page_address(p);
}

static u64 *table_next(struct boot_tables *bt, u64 *table, unsigned int idx)
{
	u64 *t;

	if (!(table[idx] & 1)) {
		t = table_alloc(bt);
		if (!t)
			return NULL;
		table[idx] = __pa(t) | PTE_PRESENT_RW;
	}
	return __va(table[idx] & PTE_PFN_MASK);
}

static int map_2m(struct boot_tables *bt, u64 virt, u64 phys)
{
	u64 *pdpt = table_next(bt, bt->pml4, (virt >> 39) & 511);
	u64 *pd = pdpt ? table_next(bt, pdpt, (virt >> 30) & 511) : NULL;

	if (!pd)
		return -ENOMEM;
	pd[(virt >> 21) & 511] = phys | PTE_PRESENT_RW | PTE_LARGE;
	return 0;
}

static void tables_free(struct boot_tables *bt)
{
	while (bt->count)
		__free_page(bt->pages[--bt->count]);
}

/*
 * Identity map of the first 2 MiB (the trampoline) and the enclave's
 * memory at its direct-map address.
 */
static int tables_build(struct boot_tables *bt, struct atoll_enclave *e)
{
	u32 i;
	u64 off, phys;
	int ret;

	bt->count = 0;
	bt->pml4 = table_alloc(bt);
	if (!bt->pml4)
		return -ENOMEM;
	ret = map_2m(bt, 0, 0);
	for (i = 0; i < e->block_count && !ret; i++) {
		phys = atoll_block_phys(e, i);
		for (off = 0; off < e->block_size && !ret; off += SZ_2M)
			ret = map_2m(bt, ATOLL_KERNEL_OFFSET + phys + off, phys + off);
	}
	if (ret)
		tables_free(bt);
	return ret;
}

struct borrowed_page {
	void *va;		/* writable alias of the trampoline page */
	void *saved;
	unsigned long phys;
};

/* Saves the page's contents and maps it writable at b->va. */
static int trampoline_borrow(struct borrowed_page *b, char *err)
{
	struct page *page;

	b->phys = atoll_trampoline_phys();
	if ((b->phys & ~PAGE_MASK) || b->phys >= SZ_1M) {
		atoll_err(err, "Linux's trampoline at %#lx is not a page below 1 MiB", b->phys);
		return -ENODEV;
	}
	b->saved = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!b->saved)
		return -ENOMEM;
	/* The page is read-only in the direct map: write through an alias. */
	page = pfn_to_page(b->phys >> PAGE_SHIFT);
	b->va = vmap(&page, 1, VM_MAP, PAGE_KERNEL);
	if (!b->va) {
		kfree(b->saved);
		return -ENOMEM;
	}
	memcpy(b->saved, b->va, PAGE_SIZE);
	return 0;
}

static void trampoline_restore(struct borrowed_page *b)
{
	memcpy(b->va, b->saved, PAGE_SIZE);
	vunmap(b->va);
	kfree(b->saved);
}

static void fill_params(struct atoll_enclave *e, const struct atoll_create *req,
			u64 base, u64 cr3, unsigned long tramp)
{
	struct atoll_boot_params *p = e->shared + ATOLL_BOOT_PARAMS_OFFSET;
	u64 apic_base;

	p->hdr = (struct atoll_header){ ATOLL_MAGIC_BOOT, ATOLL_ABI_VERSION, sizeof(*p), 0 };
	p->enclave_id = e->id;
	p->cpu_count = e->cpu_count;
	p->mem_count = e->block_count;
	p->host_apic_id = cpu_physical_id(0);
	p->x2apic = x2apic_enabled();
	p->tsc_khz = tsc_khz;
	rdmsrl(MSR_IA32_APICBASE, apic_base);
	p->lapic_phys = apic_base & MSR_IA32_APICBASE_BASE;
	p->trampoline_phys = tramp;
	p->boot_cr3 = cr3;
	p->shared_phys = base;
	p->shared_size = ATOLL_SHARED_SIZE;
	p->status_phys = base + ATOLL_STATUS_OFFSET;
	p->console_phys = base + ATOLL_CONSOLE_OFFSET;
	p->console_size = ATOLL_CONSOLE_SIZE;
	p->image_phys = base + ATOLL_IMAGE_OFFSET;
	p->image_size = req->image_mem_size;
	memcpy(p->apic_ids, e->apic_ids, sizeof(p->apic_ids));
	atoll_memory_ranges(e, p->mem);
	memcpy(p->cmdline, req->cmdline, sizeof(p->cmdline));
	p->cmdline[ATOLL_CMDLINE_LEN - 1] = '\0';
}

static int image_check(const struct atoll_create *req, u64 block_size, char *err)
{
	u64 room = block_size - ATOLL_SHARED_SIZE;

	if (!req->image_size || req->image_size > req->image_mem_size ||
	    req->image_mem_size > room) {
		atoll_err(err, "the LWK image (%llu bytes, %llu in memory) does not fit the %llu bytes after the shared area",
			  req->image_size, req->image_mem_size, room);
		return -EINVAL;
	}
	if (req->entry_offset >= req->image_size ||
	    req->trampoline_size < sizeof(struct atoll_trampoline_slots) + ATOLL_TRAMPOLINE_SLOTS ||
	    req->trampoline_size > PAGE_SIZE ||
	    req->trampoline_offset > req->image_size - req->trampoline_size) {
		atoll_err(err, "the LWK image's entry or trampoline lies outside it");
		return -EINVAL;
	}
	return 0;
}

/*
 * The start of the enclave's first block, mapped for the module outside
 * Linux's direct map (where memremap() would point): the block is offline,
 * and a kernel with KASAN keeps the direct map's shadow of freed pages
 * poisoned, so every access there to the LWK's memory was reported as a
 * use-after-free. Only what the module touches: the shared area and the
 * LWK's image (the whole block's 32768 PTEs took a millisecond and more to
 * unmap at destroy, counted in the time memory took to go back).
 */
static void *block_map(u64 base, u64 size)
{
	unsigned long i, n = size >> PAGE_SHIFT;
	struct page **pages;
	void *va;

	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++)
		pages[i] = pfn_to_page(PHYS_PFN(base) + i);
	va = vmap(pages, n, VM_MAP, PAGE_KERNEL);
	kvfree(pages);
	return va;
}

/* Loads and starts the LWK; on any failure its CPUs are parked again. */
int atoll_boot(struct atoll_enclave *e, const struct atoll_create *req, char *err)
{
	u64 base = atoll_block_phys(e, 0);
	struct atoll_trampoline_slots slots = { 0 };
	struct borrowed_page tramp;
	struct boot_tables bt;
	void *image;
	u64 t0, deadline;
	u32 i, timeout_ms;
	int ret;

	ret = image_check(req, e->block_size, err);
	if (ret)
		return ret;
	t0 = ktime_get_ns();
	e->shared = block_map(base, ATOLL_SHARED_SIZE + PAGE_ALIGN(req->image_mem_size));
	if (!e->shared) {
		atoll_err(err, "cannot map the enclave's memory at %#llx", base);
		return -ENOMEM;
	}
	memset(e->shared, 0, ATOLL_SHARED_SIZE);
	image = e->shared + ATOLL_IMAGE_OFFSET;
	if (copy_from_user(image, u64_to_user_ptr(req->image_ptr), req->image_size)) {
		atoll_err(err, "cannot read the LWK image from the caller");
		return -EFAULT;
	}
	memset(image + req->image_size, 0, req->image_mem_size - req->image_size);
	e->console = e->shared + ATOLL_CONSOLE_OFFSET;
	e->console->hdr = (struct atoll_header){ ATOLL_MAGIC_CONSOLE, ATOLL_ABI_VERSION,
						 sizeof(struct atoll_console), 0 };
	e->console->capacity = ATOLL_CONSOLE_SIZE - sizeof(struct atoll_console);
	atoll_lwk_status_init(e);
	ret = atoll_kmsg_link_init(e);
	if (ret) {
		atoll_err(err, "no memory for the message buffer");
		return ret;
	}
	ret = tables_build(&bt, e);
	if (ret) {
		atoll_err(err, "no memory below 4 GiB for boot page tables");
		return ret;
	}
	fill_params(e, req, base, __pa(bt.pml4), atoll_trampoline_phys());
	e->phase_ns[ATOLL_PHASE_LOAD] = ktime_get_ns() - t0;

	slots.cr3 = __pa(bt.pml4);
	slots.stack = ATOLL_KERNEL_OFFSET + base + ATOLL_SHARED_SIZE;
	slots.entry = ATOLL_KERNEL_OFFSET + base + ATOLL_IMAGE_OFFSET + req->entry_offset;
	slots.arg0 = base + ATOLL_BOOT_PARAMS_OFFSET;
	slots.arg1 = ATOLL_BOOT_KIND_COKERNEL;
	/* No CPU may come online through the page while it is lent. */
	cpu_hotplug_disable();
	ret = trampoline_borrow(&tramp, err);
	if (ret)
		goto out_hotplug;
	memcpy(tramp.va, image + req->trampoline_offset, req->trampoline_size);
	memcpy(tramp.va + ATOLL_TRAMPOLINE_SLOTS, &slots, sizeof(slots));

	timeout_ms = req->boot_timeout_ms ?
		     min(req->boot_timeout_ms, 600000u) : ATOLL_DEFAULT_BOOT_MS;
	t0 = ktime_get_ns();
	deadline = t0 + (u64)timeout_ms * NSEC_PER_MSEC;
	atoll_cpu_init(e->apic_ids[0]);
	atoll_cpu_sipi(e->apic_ids[0], tramp.phys);
	ret = atoll_lwk_wait_booted(e, deadline);
	e->phase_ns[ATOLL_PHASE_BOOT] = ktime_get_ns() - t0;
	trampoline_restore(&tramp);

	if (ret == -ETIMEDOUT) {
		atoll_err(err, "the LWK did not report booted within %u ms", timeout_ms);
	} else if (ret == -EINTR) {
		atoll_err(err, "interrupted while the LWK was booting");
	} else if (!e->booted) {
		atoll_err(err, "the LWK crashed while booting");
		ret = -EIO;
	} else if (e->booted_cpus != e->cpu_count) {
		atoll_err(err, "the LWK came up on %u of %u CPUs", e->booted_cpus, e->cpu_count);
		ret = -EIO;
	}
	if (ret)
		for (i = 0; i < e->cpu_count; i++)
			atoll_cpu_init(e->apic_ids[i]);
out_hotplug:
	cpu_hotplug_enable();
	tables_free(&bt);
	return ret;
}

/*
 * A CPU added to a running enclave starts as the LWK's secondaries did at
 * boot: through Linux's trampoline page (the LWK writes its own code and
 * slots into it) and page tables below 4 GiB that map the page and all of
 * the enclave's memory. Lent until atoll_cpu_loan_end(); no CPU may come
 * online in Linux through the page meanwhile.
 */
struct atoll_cpu_loan {
	struct boot_tables bt;
	struct borrowed_page page;
};

struct atoll_cpu_loan *atoll_cpu_loan_start(struct atoll_enclave *e, u64 *page, u64 *cr3,
					    char *err)
{
	struct atoll_cpu_loan *loan = kzalloc(sizeof(*loan), GFP_KERNEL);
	int ret;

	if (!loan)
		return ERR_PTR(-ENOMEM);
	ret = tables_build(&loan->bt, e);
	if (ret) {
		atoll_err(err, "no memory below 4 GiB for the new CPU's page tables");
		goto out_free;
	}
	cpu_hotplug_disable();
	ret = trampoline_borrow(&loan->page, err);
	if (ret) {
		cpu_hotplug_enable();
		tables_free(&loan->bt);
		goto out_free;
	}
	*page = loan->page.phys;
	*cr3 = __pa(loan->bt.pml4);
	return loan;
out_free:
	kfree(loan);
	return ERR_PTR(ret);
}

void atoll_cpu_loan_end(struct atoll_cpu_loan *loan)
{
	trampoline_restore(&loan->page);
	cpu_hotplug_enable();
	tables_free(&loan->bt);
	kfree(loan);
}
