// SPDX-License-Identifier: GPL-2.0-only
/*
 * Frames outside a program's own memory that its mirror (mirror.c) may
 * map: those of its XEMEM attachments, granted by xemem.c while each
 * attachment lives. Faults hold grants_sem for reading from the lookup
 * until the page is mapped, and record where they mapped a grant's frames.
 * A grant's end takes it for writing and marks the grant dead: afterwards
 * no fault maps its frames, not even as the enclave's own memory (another
 * program of the enclave may have exported them), and the recorded range
 * is all there is to zap. A dead grant is freed with its attachment, once
 * the LWK no longer maps the frames either.
 */
#include <linux/bsearch.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/spinlock.h>
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
	bool dead;		/* ended: its frames are refused */
	spinlock_t used_lock;	/* faults record where they mapped its frames: */
	unsigned long lo;	/* the lowest and highest such address, */
	unsigned long hi;	/* lo > hi while none */
};

static LIST_HEAD(grants);
static DECLARE_RWSEM(grants_sem);

/* frames (count of them) stay valid until atoll_mirror_grant_free(). */
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

/*
 * Ends g (its frames are refused from now on): true the first time if a
 * mirror mapped them, with the range they were mapped at.
 */
bool atoll_mirror_grant_end(struct atoll_mirror_grant *g, unsigned long *lo, unsigned long *hi)
{
	bool was_dead;

	down_write(&grants_sem);
	was_dead = g->dead;
	g->dead = true;
	up_write(&grants_sem);
	*lo = g->lo;
	*hi = g->hi;
	return !was_dead && *lo <= *hi;
}

/* Its attachment is gone and no LWK maps the frames: g goes (ended or not). */
void atoll_mirror_grant_free(struct atoll_mirror_grant *g)
{
	if (!g)
		return;
	down_write(&grants_sem);
	list_del(&g->node);
	up_write(&grants_sem);
	kvfree(g->sorted);
	kfree(g);
}

void atoll_mirror_grants_lock(void)
{
	down_read(&grants_sem);
}

void atoll_mirror_grants_unlock(void)
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

static bool holds(struct atoll_mirror_grant *g, u64 phys)
{
	const u64 *s = sorted(g);
	u32 i;

	if (s)
		return bsearch(&phys, s, g->count, sizeof(u64), cmp_frame);
	for (i = 0; i < g->count; i++)	/* no memory for the sorted copy */
		if (g->frames[i] == phys)
			return true;
	return false;
}

/*
 * Under atoll_mirror_grants_lock(): is phys, mapped at va of the program
 * in (e, area, pid), an attachment's frame? 1 (*writable says if its grant
 * allows writes; the address is recorded), 0, or -EACCES if its grant has
 * ended (the frame must not be mapped at all).
 */
int atoll_mirror_grant_lookup(struct atoll_enclave *e, u32 area, u32 pid, unsigned long va,
			      u64 phys, bool *writable)
{
	struct atoll_mirror_grant *g;

	list_for_each_entry(g, &grants, node) {
		if (g->e != e || g->area != area || g->pid != pid || !holds(g, phys))
			continue;
		if (g->dead)
			return -EACCES;
		spin_lock(&g->used_lock);
		g->lo = min(g->lo, va & PAGE_MASK);
		g->hi = max(g->hi, va & PAGE_MASK);
		spin_unlock(&g->used_lock);
		*writable = g->writable;
		return 1;
	}
	return 0;
}
