// SPDX-License-Identifier: GPL-2.0-only
/*
 * The mirror: the bound file mapped once over [ATOLL_USER_START,
 * ATOLL_USER_END) in the `atoll run` process, so its workers can load the
 * program and perform delegated calls on the program's own memory. A fault
 * walks the LWK's page tables (cr3) and maps the same physical page. A page
 * the LWK gives memory only when touched (the main stack's) that a worker
 * touches during a call, the LWK is asked for (PAGE_WANTED); what it does
 * not map for its user, or maps outside the enclave's memory, is SIGBUS
 * (EFAULT for a system call), except the frames of the program's XEMEM
 * attachments (granted by xemem.c while the attachment lives). Mappings go
 * when the LWK says it unmapped or reduced protection (map_generation), at
 * START, when a grant that was used ends, and when a block the mirror
 * mapped a page of leaves the enclave (each mirror notes which it did).
 *
 * The enclave's blocks are offline but stay in Linux's direct map, so the
 * LWK's tables are read through __va() once they are known to lie in them.
 * KASAN's shadow of that map says "freed" for offline pages: those accesses
 * are left unchecked, or KASAN reports each as a use-after-free.
 */
#include <linux/kasan.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include "atoll.h"
#include "mirror_grant.h"

/* x86-64 page-table entry bits, as the LWK writes them. */
#define LWK_PTE_PRESENT	BIT_ULL(0)
#define LWK_PTE_WRITE	BIT_ULL(1)
#define LWK_PTE_USER	BIT_ULL(2)
#define LWK_PTE_DIRTY	BIT_ULL(6)	/* the LWK zeroes only dirty pages at MADV_DONTNEED */
#define LWK_PTE_LARGE	BIT_ULL(7)	/* in a PDPTE: 1 GiB; in a PDE: 2 MiB */
#define LWK_PTE_ADDR	GENMASK_ULL(51, 12)

/* The index of e's block that holds phys, or -1. */
static int block_index(const struct atoll_enclave *e, u64 phys)
{
	/* Blocks come and go while it runs (resize.c): entries before the count. */
	u32 i, n = smp_load_acquire(&e->block_count);
	u64 base;

	for (i = 0; i < n; i++) {
		base = atoll_block_phys(e, i);
		if (phys >= base && phys - base < e->block_size)
			return i;
	}
	return -1;
}

/* Is [phys, phys + len) enclave memory, outside the shared area? */
static bool lwk_phys_ok(const struct atoll_enclave *e, u64 phys, u64 len)
{
	int i = block_index(e, phys);
	u64 base;

	if (i < 0)
		return false;
	base = atoll_block_phys(e, i);
	if (phys + len > base + e->block_size)
		return false;
	return i != 0 || phys >= base + ATOLL_SHARED_SIZE;
}

/*
 * The physical 4 KiB page the LWK maps at va for its user in the tables
 * at cr3 (which must lie in e's memory), wherever it lies, or -EFAULT.
 * *writable: every level allows writes; *leaf: the LWK's entry.
 * The LWK changes its tables meanwhile; tables it takes out stay unused
 * until the delegated calls that may walk them have ended.
 */
static int lwk_walk(struct atoll_enclave *e, u64 cr3, unsigned long va, u64 *phys,
		    bool *writable, struct atoll_lwk_leaf *leaf)
{
	u64 table = cr3 & LWK_PTE_ADDR, entry, size;
	int shift;

	*writable = true;
	for (shift = 39; shift >= PAGE_SHIFT; shift -= 9) {
		if (!lwk_phys_ok(e, table, PAGE_SIZE))
			return -EFAULT;
		entry = READ_ONCE_NOCHECK(((u64 *)__va(table))[(va >> shift) & 511]);
		if (!(entry & LWK_PTE_PRESENT) || !(entry & LWK_PTE_USER))
			return -EFAULT;
		if (!(entry & LWK_PTE_WRITE))
			*writable = false;
		size = 1ULL << shift;
		leaf->at = &((u64 *)__va(table))[(va >> shift) & 511];
		leaf->seen = entry;
		if (shift == PAGE_SHIFT ||
		    ((shift == 30 || shift == 21) && (entry & LWK_PTE_LARGE))) {
			*phys = (entry & LWK_PTE_ADDR & ~(size - 1)) |
				(va & (size - 1) & PAGE_MASK);
			return 0;
		}
		if (entry & LWK_PTE_LARGE)	/* reserved in a PML4E */
			return -EFAULT;
		table = entry & LWK_PTE_ADDR;
	}
	return -EFAULT;
}

/* As lwk_walk, for a page that must be the enclave's own memory. */
int atoll_lwk_translate(struct atoll_enclave *e, u64 cr3, unsigned long va, u64 *phys,
			bool *writable, struct atoll_lwk_leaf *leaf)
{
	int ret = lwk_walk(e, cr3, va, phys, writable, leaf);

	return ret ?: lwk_phys_ok(e, *phys, PAGE_SIZE) ? 0 : -EFAULT;
}

/* The address space of /dev/atoll's files: every mirror VMA is in it. */
static struct address_space *mirrors;

/*
 * The end of an attachment's grant (xemem.c): afterwards no mirror maps
 * its frames. Where mirrors did, they are zapped (what else is there
 * faults back in). The grant stays, refusing them, until its attachment
 * is freed (atoll_mirror_grant_free).
 */
void atoll_mirror_ungrant(struct atoll_mirror_grant *g)
{
	struct address_space *m = READ_ONCE(mirrors);
	unsigned long lo, hi;

	/* Mirrors map ATOLL_USER_START at offset 0 of the device's mapping. */
	if (g && atoll_mirror_grant_end(g, &lo, &hi) && m)
		unmap_mapping_range(m, lo - ATOLL_USER_START, hi - lo + PAGE_SIZE, 1);
}

enum mirror_frame { NOT_MIRRORED, OWN_MEMORY, ATTACHED };

/*
 * Under atoll_mirror_grants_lock(): may p's mirror map phys, and as what?
 * An attachment's frame is one even when it is the enclave's own memory
 * (another program of the enclave exported it): its grant's end must zap
 * it, and refuse it from then on, before the frame is freed. An
 * attachment got read-only stays so.
 */
static enum mirror_frame mirrorable(struct atoll_program *p, unsigned long va, u64 phys,
				    bool *writable)
{
	bool grant_writes;
	int attached = atoll_mirror_grant_lookup(p->e, p->area, p->pid, va, phys, &grant_writes);

	if (attached < 0)
		return NOT_MIRRORED;
	if (attached) {
		*writable &= grant_writes;
		return ATTACHED;
	}
	return lwk_phys_ok(p->e, phys, PAGE_SIZE) ? OWN_MEMORY : NOT_MIRRORED;
}

/* While the caller loads the ELF, read-only pages are writable for it. */
static bool loading(struct atoll_program *p)
{
	if (p->started || p->adopted)
		return false;
	/* The LWK sets each state with a release. */
	return smp_load_acquire(&p->proc->state) == ATOLL_PROC_LOADED;
}

/*
 * Marks the LWK's leaf written (Linux may write the page now, which the
 * LWK's CPUs cannot see) if it still holds what the walk saw: the LWK may
 * have changed or cleared it since, and a bit set in a cleared entry would
 * make it look taken. False: the fault is retried and walks again.
 */
static bool lwk_mark_dirty(const struct atoll_lwk_leaf *leaf)
{
	u64 seen = leaf->seen;
	bool marked;

	if (seen & LWK_PTE_DIRTY)
		return true;
	kasan_disable_current();	/* an LWK table: see the top */
	marked = try_cmpxchg64(leaf->at, &seen, seen | LWK_PTE_DIRTY);
	kasan_enable_current();
	return marked;
}

/* The slot whose call the current task performs for p, or -1. */
static int slot_of_current(struct atoll_program *p)
{
	unsigned long flags;
	int i, found = -1;

	spin_lock_irqsave(&p->call_lock, flags);
	for (i = 0; i < ATOLL_MAX_SLOTS && found < 0; i++)
		if (p->callers[i] == current)
			found = i;
	spin_unlock_irqrestore(&p->call_lock, flags);
	return found;
}

static bool answered(struct atoll_enclave *e, struct atoll_slot *s, u32 question)
{
	u32 answer = (question & ~ATOLL_FAULT_STATE_MASK) | ATOLL_FAULT_ANSWERED;

	/* Pairs with the LWK's release: its tables are changed before it. */
	return smp_load_acquire(&s->fault_state) == answer || READ_ONCE(e->crashed);
}

/*
 * The worker performing one of p's calls touched va, where the LWK maps
 * nothing: asks the LWK to give it memory there, as it would to the
 * program's own thread (PAGE_WANTED, answered in the call's slot). True
 * once it answered: the caller walks again. Outside a call (loading) or
 * if the LWK does not answer in time, the fault stays SIGBUS.
 */
static bool ask_lwk_for_page(struct atoll_program *p, unsigned long va, bool write)
{
	struct atoll_enclave *e = p->e;
	struct atoll_slot *s;
	u32 question;
	u64 msg[2];
	long left;
	int i;

	if (!p->started)
		return false;
	i = slot_of_current(p);
	if (i < 0)
		return false;
	s = &p->proc->slot[i];
	/* Numbered: an answer to an earlier question that timed out is not this one's. */
	question = (READ_ONCE(s->fault_state) + ATOLL_FAULT_STATE_MASK + 1) &
		   ~ATOLL_FAULT_STATE_MASK;
	question |= ATOLL_FAULT_ASKED;
	WRITE_ONCE(s->fault_va, va & PAGE_MASK);
	WRITE_ONCE(s->fault_write, write);
	/* The question first: the LWK reads it after this acquire. */
	smp_store_release(&s->fault_state, question);
	msg[0] = p->area;
	msg[1] = i;
	if (atoll_kmsg_send_wait(e, ATOLL_KMSG_PAGE_WANTED, msg, sizeof(msg)))
		return false;
	/*
	 * PAGE_READY's batch wakes e->wq. Only a fatal signal stops the wait:
	 * CALL_CANCEL's signal ends the call itself once the page is there.
	 */
	left = wait_event_killable_timeout(e->wq, answered(e, s, question), ATOLL_PAGE_WAIT);
	return left > 0 && !READ_ONCE(e->crashed);
}

/*
 * Pages mapped around a fault, in an aligned window (as Linux's
 * fault_around_bytes): the loader and a call's buffers go through pages in
 * order, and a fault costs far more than a walk of the LWK's tables.
 */
#define MIRROR_AROUND_PAGES	16

/*
 * Under map_sem and the grants' lock, after the fault at va was mapped:
 * maps the enclave's own pages the LWK already maps around it, read-only
 * (a write then asks pfn_mkwrite), or writable while the caller loads the
 * ELF and the fault was a write. Attachments' frames and pages the LWK
 * has not given are left to their own faults.
 */
static void mirror_map_around(struct atoll_program *p, struct vm_area_struct *vma,
			      unsigned long va, bool write)
{
	unsigned long span = MIRROR_AROUND_PAGES * PAGE_SIZE;
	unsigned long at = max(ALIGN_DOWN(va, span), vma->vm_start);
	unsigned long end = min(ALIGN_DOWN(va, span) + span, vma->vm_end);
	bool writes = write && loading(p) && (vma->vm_flags & VM_WRITE);
	struct atoll_lwk_leaf leaf;
	bool writable;
	pgprot_t prot;
	u64 phys;
	int block;

	for (; at < end; at += PAGE_SIZE) {
		if (at == (va & PAGE_MASK) ||
		    lwk_walk(p->e, p->cr3, at, &phys, &writable, &leaf) ||
		    mirrorable(p, at, phys, &writable) != OWN_MEMORY)
			continue;
		prot = __pgprot(pgprot_val(vma->vm_page_prot) & ~_PAGE_RW);
		if (writes && lwk_mark_dirty(&leaf))
			prot = __pgprot(pgprot_val(prot) | _PAGE_RW);
		block = block_index(p->e, phys);
		if (block >= 0)
			set_bit(block, p->mapped_blocks);
		/* A page mapped already stays as it is. */
		vmf_insert_pfn_prot(vma, at, PHYS_PFN(phys), prot);
	}
}

static vm_fault_t mirror_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct atoll_program *p = vma->vm_private_data;
	bool write = vmf->flags & FAULT_FLAG_WRITE;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	struct atoll_lwk_leaf leaf;
	enum mirror_frame frame;
	bool asked = false;
	pgprot_t prot;
	bool writable;
	u64 phys;
	int block;

again:
	/* Held across walk and insert, so a zap cannot slip in between. */
	down_read(&p->map_sem);
	atoll_mirror_grants_lock();
	if (lwk_walk(p->e, p->cr3, vmf->address, &phys, &writable, &leaf)) {
		atoll_mirror_grants_unlock();
		up_read(&p->map_sem);
		/* Once: the LWK's answer is final, and it may be "no". */
		if (!asked && ask_lwk_for_page(p, vmf->address, write)) {
			asked = true;
			goto again;
		}
		return VM_FAULT_SIGBUS;
	}
	frame = mirrorable(p, vmf->address, phys, &writable);
	if (frame == NOT_MIRRORED)
		goto out;
	if (frame == OWN_MEMORY)
		writable |= loading(p);
	if (write && !writable)
		goto out;
	/*
	 * vm_page_prot is read-only (pfn_mkwrite asks for write notification);
	 * a page the LWK lets its user write is mapped writable at once.
	 */
	prot = vma->vm_page_prot;
	if (writable && (vma->vm_flags & VM_WRITE)) {
		prot = __pgprot(pgprot_val(prot) | _PAGE_RW);
		if (!lwk_mark_dirty(&leaf)) {
			ret = VM_FAULT_NOPAGE;
			goto out;
		}
	} else {
		prot = __pgprot(pgprot_val(prot) & ~_PAGE_RW);
	}
	/* Before the page is mapped: atoll_mirror_zap_blocks() reads it under map_sem. */
	block = block_index(p->e, phys);
	if (block >= 0)
		set_bit(block, p->mapped_blocks);
	ret = vmf_insert_pfn_prot(vma, vmf->address, PHYS_PFN(phys), prot);
	if (ret == VM_FAULT_NOPAGE)
		mirror_map_around(p, vma, vmf->address, write);
out:
	atoll_mirror_grants_unlock();
	up_read(&p->map_sem);
	return ret;
}

/* A write to a page mapped read-only: allowed only if the LWK allows it now. */
static vm_fault_t mirror_pfn_mkwrite(struct vm_fault *vmf)
{
	struct atoll_program *p = vmf->vma->vm_private_data;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	struct atoll_lwk_leaf leaf;
	enum mirror_frame frame = NOT_MIRRORED;
	bool writable;
	u64 phys;

	down_read(&p->map_sem);
	atoll_mirror_grants_lock();
	if (!lwk_walk(p->e, p->cr3, vmf->address, &phys, &writable, &leaf))
		frame = mirrorable(p, vmf->address, phys, &writable);
	if (frame != NOT_MIRRORED && (writable || (frame == OWN_MEMORY && loading(p))) &&
	    PHYS_PFN(phys) == pte_pfn(vmf->orig_pte))
		ret = lwk_mark_dirty(&leaf) ? 0 : VM_FAULT_NOPAGE;
	atoll_mirror_grants_unlock();
	up_read(&p->map_sem);
	return ret;
}

/*
 * A VMA that stays whole and in place (one mirror per program, one per
 * XEMEM attachment): no splitting it, no moving it.
 */
int atoll_vma_no_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

int atoll_vma_no_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct mirror_ops = {
	.fault = mirror_fault,
	.pfn_mkwrite = mirror_pfn_mkwrite,
	.may_split = atoll_vma_no_split,
	.mremap = atoll_vma_no_mremap,
};

int atoll_mirror_mmap(struct atoll_program *p, struct vm_area_struct *vma)
{
	struct address_space *m = vma->vm_file->f_mapping, *old;

	/* Called under the mmap lock: p->lock (taken before it by START) is not taken here. */
	if (!smp_load_acquire(&p->created))
		return -ENXIO;
	if (vma->vm_start != ATOLL_USER_START || vma->vm_end != ATOLL_USER_END ||
	    vma->vm_pgoff || !(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	/* One device node: its files share one address space. */
	old = cmpxchg(&mirrors, NULL, m);
	if (old && old != m)
		return -EXDEV;
	if (test_and_set_bit(0, &p->mirror_mapped))
		return -EBUSY;
	/* No fork copies, no core dumps of 64 TiB, no growing, no PROT_EXEC. */
	vma->vm_flags |= VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY;
	vma->vm_flags &= ~VM_MAYEXEC;
	vma->vm_ops = &mirror_ops;
	vma->vm_private_data = p;
	mmgrab(vma->vm_mm);
	/* The reference is taken before atoll_mirror_zap() can see mm. */
	smp_store_release(&p->mm, vma->vm_mm);
	return 0;
}

/*
 * p's mirror's address space, read-locked, or NULL: none yet, or exiting
 * (its mappings go anyway). Lock order as in a fault: the mmap lock, then
 * map_sem.
 */
static struct mm_struct *mirror_mm_lock(struct atoll_program *p)
{
	/* Pairs with the release in atoll_mirror_mmap(). */
	struct mm_struct *mm = smp_load_acquire(&p->mm);

	if (mm && !mmget_not_zero(mm))
		mm = NULL;
	if (mm)
		mmap_read_lock(mm);
	return mm;
}

static void mirror_mm_unlock(struct mm_struct *mm)
{
	if (mm) {
		mmap_read_unlock(mm);
		mmput(mm);
	}
}

/* Under mm's lock (mm may be NULL) and map_sem written: drops every mapping of p's mirror. */
static void zap_mirror(struct atoll_program *p, struct mm_struct *mm)
{
	struct vm_area_struct *vma = mm ? find_vma(mm, ATOLL_USER_START) : NULL;

	if (vma && vma->vm_start == ATOLL_USER_START && vma->vm_ops == &mirror_ops &&
	    vma->vm_private_data == p)
		zap_vma_ptes(vma, vma->vm_start, vma->vm_end - vma->vm_start);
	bitmap_zero(p->mapped_blocks, ATOLL_MAX_MEM_RANGES);
}

/*
 * Drops every mirror mapping: at START (start: later faults honour the
 * LWK's protections) or when map_generation moved since the last zap.
 */
void atoll_mirror_zap(struct atoll_program *p, bool start)
{
	struct mm_struct *mm;
	u32 gen;

	if (!start && READ_ONCE(p->proc->map_generation) == READ_ONCE(p->zapped_gen))
		return;
	mm = mirror_mm_lock(p);
	down_write(&p->map_sem);
	if (start)
		p->started = true;
	gen = READ_ONCE(p->proc->map_generation);
	if (start || gen != p->zapped_gen)
		zap_mirror(p, mm);
	p->zapped_gen = gen;
	up_write(&p->map_sem);
	mirror_mm_unlock(mm);
}

/*
 * An execve replaced the program's address space (new page-table root
 * cr3): every mapping goes, and until the next START the caller may load
 * the new image as at RUN.
 */
void atoll_mirror_reload(struct atoll_program *p, u64 cr3)
{
	struct mm_struct *mm = mirror_mm_lock(p);

	down_write(&p->map_sem);
	p->cr3 = cr3;
	p->started = false;
	p->adopted = false;
	zap_mirror(p, mm);
	p->zapped_gen = READ_ONCE(p->proc->map_generation);
	up_write(&p->map_sem);
	mirror_mm_unlock(mm);
}

void atoll_mirror_put(struct atoll_program *p)
{
	if (p->mm)
		mmdrop(p->mm);
	p->mm = NULL;
}

/*
 * Each enclave's programs, from RUN or ADOPT (before their mirror can be
 * mapped) to their file's release (after its last mapping went): the
 * mirrors atoll_mirror_zap_blocks() looks at. Taken before any mmap lock.
 */
static DEFINE_MUTEX(tracked_lock);

void atoll_mirror_track(struct atoll_program *p)
{
	mutex_lock(&tracked_lock);
	list_add(&p->mirror_node, &p->e->mirrors);
	mutex_unlock(&tracked_lock);
}

void atoll_mirror_untrack(struct atoll_program *p)
{
	mutex_lock(&tracked_lock);
	list_del_init(&p->mirror_node);
	mutex_unlock(&tracked_lock);
}

/* Under map_sem: has p's mirror mapped a page of e's blocks [first, end)? */
static bool mapped_any(struct atoll_program *p, u32 first, u32 end)
{
	return find_next_bit(p->mapped_blocks, end, first) < end;
}

/*
 * Blocks [first, first + count) of e go back to Linux (resize_mem.c),
 * after the LWK let them go: no fault finds their pages any more. Only
 * mirrors that mapped one of their pages since their last zap are zapped
 * (what else the LWK maps there faults back in); the others, and every
 * other enclave's, keep their mappings.
 */
void atoll_mirror_zap_blocks(struct atoll_enclave *e, u32 first, u32 count)
{
	struct atoll_program *p;
	struct mm_struct *mm;
	bool mapped;

	mutex_lock(&tracked_lock);
	list_for_each_entry(p, &e->mirrors, mirror_node) {
		/* Written: a fault that noted a page of them has mapped it. */
		down_write(&p->map_sem);
		mapped = mapped_any(p, first, first + count);
		up_write(&p->map_sem);
		if (!mapped)
			continue;
		mm = mirror_mm_lock(p);
		down_write(&p->map_sem);
		zap_mirror(p, mm);
		up_write(&p->map_sem);
		mirror_mm_unlock(mm);
		pr_debug("atoll: enclave %s: program %u's mirror zapped: a block it mapped goes back to Linux\n",
			 e->name, p->pid);
	}
	mutex_unlock(&tracked_lock);
}
