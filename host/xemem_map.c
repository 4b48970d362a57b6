// SPDX-License-Identifier: GPL-2.0-only
/*
 * XEMEM attachments on Linux: a segment's frames mapped into the calling
 * process through a file of its own (an anonymous inode), one VMA per
 * attachment. A fault maps the segment's frame (the frames are pinned or
 * enclave memory, so no page is reference-counted here); a revoked
 * attachment is zapped and faults with SIGBUS. The VMA's close hands the
 * attachment back to the registry (xemem.c) through its work item.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include "xemem.h"

/* Faults read, a revocation writes: no frame is mapped after it. */
static DECLARE_RWSEM(map_sem);

static vm_fault_t xemem_fault(struct vm_fault *vmf)
{
	struct xemem_att *a = vmf->vma->vm_private_data;
	u64 i = (a->offset + vmf->address - vmf->vma->vm_start) >> PAGE_SHIFT;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	down_read(&map_sem);
	if (!a->revoked && i < a->seg->npages)
		ret = vmf_insert_pfn(vmf->vma, vmf->address, PHYS_PFN(a->seg->phys[i]));
	up_read(&map_sem);
	return ret;
}

static void xemem_open(struct vm_area_struct *vma)
{
	struct xemem_att *a = vma->vm_private_data;

	atomic_inc(&a->vmas);
}

static void xemem_close(struct vm_area_struct *vma)
{
	struct xemem_att *a = vma->vm_private_data;

	/* Under the mmap lock, which the registry's lock must not nest in. */
	if (atomic_dec_and_test(&a->vmas))
		queue_work(xemem_wq, &a->closed);
}

static const struct vm_operations_struct xemem_vm_ops = {
	.open = xemem_open,
	.fault = xemem_fault,
	.close = xemem_close,
	.may_split = atoll_vma_no_split,	/* one attachment, one VMA */
	.mremap = atoll_vma_no_mremap,
};

static int xemem_file_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct xemem_att *a = file->private_data;

	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != a->size ||
	    !(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (!a->writable) {
		if (vma->vm_flags & VM_WRITE)
			return -EACCES;
		vma->vm_flags &= ~VM_MAYWRITE;
	}
	vma->vm_flags |= VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY;
	vma->vm_ops = &xemem_vm_ops;
	vma->vm_private_data = a;
	WRITE_ONCE(a->start, vma->vm_start);
	/* From here its VMA owns it: a later failure of the mmap closes the VMA. */
	atomic_set(&a->vmas, 1);
	WRITE_ONCE(a->mapped, true);
	return 0;
}

static const struct file_operations xemem_fops = {
	.owner = THIS_MODULE,
	.mmap = xemem_file_mmap,
};

/*
 * Maps a into the calling process at vaddr (0: where it fits): the
 * address, or -errno. On failure *owned says whether a VMA took a (its
 * close then frees it) or the caller must.
 */
long xemem_map_attach(struct xemem_att *a, u64 vaddr, bool *owned)
{
	unsigned long prot = PROT_READ | (a->writable ? PROT_WRITE : 0);
	unsigned long flags = MAP_SHARED | (vaddr ? MAP_FIXED_NOREPLACE : 0);
	struct file *file;
	unsigned long addr;

	file = anon_inode_getfile("[atoll-xemem]", &xemem_fops, a, O_RDWR);
	if (IS_ERR(file))
		return PTR_ERR(file);
	addr = vm_mmap(file, vaddr, a->size, prot, flags, 0);
	fput(file);
	*owned = READ_ONCE(a->mapped);
	return addr;
}

/* Zaps a's mapping; later faults give SIGBUS. Lock order as a fault's. */
void xemem_map_zap(struct xemem_att *a)
{
	struct mm_struct *mm = a->mm;
	struct vm_area_struct *vma;

	if (mm && !mmget_not_zero(mm))
		mm = NULL;	/* exiting: its mappings are going anyway */
	if (mm)
		mmap_read_lock(mm);
	down_write(&map_sem);
	a->revoked = true;
	if (mm) {
		vma = find_vma(mm, READ_ONCE(a->start));
		if (vma && vma->vm_ops == &xemem_vm_ops && vma->vm_private_data == a)
			zap_vma_ptes(vma, vma->vm_start, vma->vm_end - vma->vm_start);
	}
	up_write(&map_sem);
	if (mm) {
		mmap_read_unlock(mm);
		mmput(mm);
	}
}

/* xpmem_detach on Linux: unmaps the attachment that starts at vaddr. */
int xemem_map_detach(u64 vaddr)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	unsigned long len = 0;

	mmap_read_lock(mm);
	vma = find_vma(mm, vaddr);
	if (vma && vma->vm_start == vaddr && vma->vm_ops == &xemem_vm_ops)
		len = vma->vm_end - vma->vm_start;
	mmap_read_unlock(mm);
	if (!len)
		return -EINVAL;
	return vm_munmap(vaddr, len);
}
