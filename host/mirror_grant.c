// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frames outside a program's own memory that its mirror (mirror.c) may
 * map: those of its XEMEM attachments, granted by xemem.c while each
 * attachment lives. Faults hold grants_sem for reading from the lookup
 * until the page is mapped, and record where they mapped a grant's frames;
 * a grant's end takes it for writing, so afterwards no fault maps them and
 * the recorded range is all there is to zap.
 */
#include <linux/bsearch.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include "mirror_grant.h"

struct atoll_mirror_grant {
	struct list_head node;
	struct atoll_enclave *e;
	u32 area;
	u32 pid;
	const u64 *frames;	/* the attachment's, borrowed */
	u64 *sorted;		/* the same sorted, made at the first lookup */
	u32 count;
	bool writable;
	spinlock_t used_lock;	/* faults record where they mapped its frames: */
	unsigned long lo;	/* the lowest and highest such address, */
	unsigned long hi;	/* lo > hi while none */
};

static LIST_HEAD(grants);
static DECLARE_RWSEM(grants_sem);

/* frames (count of them) stay valid until atoll_mirror_ungrant(). */
struct atoll_mirror_grant *atoll_mirror_grant(struct atoll_enclave *e, u32 area, u32 pid,
					      const u64 *frames, u32 count, bool writable)
{
	struct atoll_mirror_grant *g = kzalloc(sizeof(*g), GFP_KERNEL);

	if (!g)
		return NULL;
	*g = (struct atoll_mirror_grant){ .e = e, .area = area, .pid = pid, .frames = frames,
					  .count = count, .writable = writable, .lo = ULONG_MAX };
	spin_lock_init(&g->used_lock);
	down_write(&grants_sem);
	list_add(&g->node, &grants);
	up_write(&grants_sem);
	return g;
}

/* Ends g; false if no mirror mapped its frames, else the range they were at. */
bool mirror_grant_end(struct atoll_mirror_grant *g, unsigned long *lo, unsigned long *hi)
{
	down_write(&grants_sem);
	list_del(&g->node);
	up_write(&grants_sem);
	*lo = g->lo;
	*hi = g->hi;
	kvfree(g->sorted);
	kfree(g);
	return *lo <= *hi;
}

void mirror_grants_lock(void)
{
	down_read(&grants_sem);
}

void mirror_grants_unlock(void)
{
	up_read(&grants_sem);
}

static int cmp_frame(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* g's frames sorted, made once (an attach stays quick), or NULL without memory. */
static const u64 *sorted(struct atoll_mirror_grant *g)
{
	/* Acquire: a published array is whole (pairs with the release below). */
	u64 *s = smp_load_acquire(&g->sorted);

	if (s)
		return s;
	s = kvmalloc_array(g->count, sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	memcpy(s, g->frames, g->count * sizeof(*s));
	sort(s, g->count, sizeof(*s), cmp_frame, NULL);
	if (cmpxchg_release(&g->sorted, NULL, s)) {
		kvfree(s);	/* another fault made it first: theirs is whole */
		s = smp_load_acquire(&g->sorted);
	}
	return s;
}

/*
 * Under mirror_grants_lock(): is phys, mapped at va of the program in
 * (e, area, pid), an attachment's frame? 1 (*writable says if its grant
 * allows writes; the address is recorded), 0, or -ENOMEM when that could
 * not be told.
 */
int mirror_grant_lookup(struct atoll_enclave *e, u32 area, u32 pid, unsigned long va, u64 phys,
			bool *writable)
{
	struct atoll_mirror_grant *g;
	const u64 *frames;

	list_for_each_entry(g, &grants, node) {
		if (g->e != e || g->area != area || g->pid != pid)
			continue;
		frames = sorted(g);
		if (!frames)
			return -ENOMEM;
		if (!bsearch(&phys, frames, g->count, sizeof(u64), cmp_frame))
			continue;
		spin_lock(&g->used_lock);
		g->lo = min(g->lo, va & PAGE_MASK);
		g->hi = max(g->hi, va & PAGE_MASK);
		spin_unlock(&g->used_lock);
		*writable = g->writable;
		return 1;
	}
	return 0;
}
