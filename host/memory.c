// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory: whole memory blocks (128 MB on x86-64) taken from Linux and given
 * back through the same sysfs files an administrator would use (modules get
 * no device_online()), so Linux's own memory-hotplug code migrates pages,
 * does the locking and keeps MemTotal right. Only blocks in ZONE_MOVABLE
 * are asked for: their pages can always be moved away, so taking them
 * never hurts the host.
 */
#include <linux/fs.h>
#include <linux/memory.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include "atoll.h"

static int block_file(unsigned long id, const char *file, char *buf, size_t len, bool write)
{
	char path[96];
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/devices/system/memory/memory%lu/%s", id, file);
	f = filp_open(path, write ? O_WRONLY : O_RDONLY, 0);
	if (IS_ERR(f))
		return PTR_ERR(f);
	if (write) {
		n = kernel_write(f, buf, len, &pos);
	} else {
		n = kernel_read(f, buf, len - 1, &pos);
		buf[n > 0 ? n : 0] = '\0';
	}
	filp_close(f, NULL);
	return n < 0 ? n : 0;
}

/*
 * One block's state through its sysfs file. The write succeeds at once
 * unless another hotplug operation holds device_hotplug_lock: then Linux
 * has already slept 5 ms and asks for a restart, which a user's write()
 * would get at once; so does this, a bounded number of times. -EBUSY
 * (pages Linux could not move) is final: offline_pages() has retried
 * the migration itself.
 */
static int block_set_state(unsigned long id, const char *state)
{
	int tries, ret = 0;

	for (tries = 0; tries < 100; tries++) {
		ret = block_file(id, "state", (char *)state, strlen(state), true);
		if (ret != -ERESTARTNOINTR)
			break;
		cond_resched();
	}
	return ret;
}

/*
 * Each hotplug step takes mem_hotplug_lock for writing, which waits for a
 * normal RCU grace period unless a step ran just before (13 ms of a 22 ms
 * online in the test VM): Linux's own offline-then-online of a block pays
 * it once, a resize once per command. Expedited, as Linux's offline
 * already does for its LRU caches, the wait is that of an IPI to each
 * Linux CPU.
 */
static void hotplug_begin(void)
{
	rcu_expedite_gp();
}

static void hotplug_end(void)
{
	rcu_unexpedite_gp();
}

/* An online block whose only valid zone is Movable. */
static bool block_is_online_movable(unsigned long id)
{
	char state[32], zones[64];

	if (block_file(id, "state", state, sizeof(state), false) ||
	    strncmp(state, "online", 6))
		return false;
	if (block_file(id, "valid_zones", zones, sizeof(zones), false))
		return false;
	return !strncmp(zones, "Movable", 7);
}

/*
 * Blocks Linux refused to offline (EBUSY: a page it cannot move, such as
 * one reserved at boot), tried only after the others: each refusal costs
 * a hotplug step. Under atoll_lock, as every take is.
 */
#define REFUSED_KEPT 8
static unsigned long refused_ids[REFUSED_KEPT];
static u32 refused_count;

static bool refused_before(unsigned long id)
{
	u32 i;

	for (i = 0; i < min_t(u32, refused_count, REFUSED_KEPT); i++)
		if (refused_ids[i] == id)
			return true;
	return false;
}

/* The newest REFUSED_KEPT are kept. */
static void note_refusal(unsigned long id)
{
	if (!refused_before(id))
		refused_ids[refused_count++ % REFUSED_KEPT] = id;
}

static unsigned long last_block(u64 block_size)
{
	unsigned long end_pfn = 0;
	int nid;

	for_each_online_node(nid)
		end_pfn = max(end_pfn, pgdat_end_pfn(NODE_DATA(nid)));
	return PFN_PHYS(end_pfn) / block_size;
}

/*
 * Offlines enough blocks for `bytes` more, highest first, after those e
 * has: first every block Linux did not refuse before, then those. A
 * block that refuses (EBUSY: pages Linux could not migrate) is skipped
 * for another. On failure e has what it had before.
 */
int atoll_memory_take(struct atoll_enclave *e, u64 bytes, char *err)
{
	u64 size = memory_block_size_bytes();
	u32 had = e->block_count, want = had + bytes / size, refused = 0, i;
	unsigned long id, now_refused[REFUSED_KEPT];
	bool later;

	e->block_size = size;
	if (!bytes || bytes % size) {
		atoll_err(err, "memory must be a positive multiple of the %llu MiB block size",
			  size >> 20);
		return -EINVAL;
	}
	if (bytes / size > ATOLL_MAX_MEM_RANGES - had) {
		atoll_err(err, "an enclave can have at most %u blocks of %llu MiB (it has %u)",
			  ATOLL_MAX_MEM_RANGES, size >> 20, had);
		return -EINVAL;
	}
	hotplug_begin();
	for (i = 0; i < 2; i++) {
		later = i;
		for (id = last_block(size); id-- > 0 && e->block_count < want;) {
			if (fatal_signal_pending(current))
				break;
			if (refused_before(id) != later || !block_is_online_movable(id))
				continue;
			if (block_set_state(id, "offline")) {
				if (refused < REFUSED_KEPT)
					now_refused[refused] = id;
				refused++;
				continue;
			}
			e->blocks[e->block_count].id = id;
			e->blocks[e->block_count].movable = true;
			/* The entry first: the mirror reads the count without a lock. */
			smp_store_release(&e->block_count, e->block_count + 1);
		}
	}
	hotplug_end();
	for (i = 0; i < min_t(u32, refused, REFUSED_KEPT); i++)
		note_refusal(now_refused[i]);
	if (e->block_count < want && fatal_signal_pending(current)) {
		atoll_err(err, "interrupted while taking memory");
		atoll_memory_give_back_to(e, had);
		return -EINTR;
	}
	if (e->block_count < want) {
		atoll_err(err, "could take only %u of the %u memory blocks asked for (%u movable blocks refused); Linux gives up memory only from ZONE_MOVABLE: boot it with movablecore=<size> (or memhp_default_state=online_movable for hot-added memory)",
			  e->block_count - had, want - had, refused);
		atoll_memory_give_back_to(e, had);
		return -ENOMEM;
	}
	return 0;
}

u64 atoll_block_phys(const struct atoll_enclave *e, u32 i)
{
	return e->blocks[i].id * e->block_size;
}

/* The enclave's blocks as physical ranges (boot parameters, ioctl replies). */
void atoll_memory_ranges(const struct atoll_enclave *e, struct atoll_mem_range *out)
{
	u32 i;

	for (i = 0; i < e->block_count; i++) {
		out[i].start = atoll_block_phys(e, i);
		out[i].size = e->block_size;
	}
}

void atoll_memory_give_back(struct atoll_enclave *e)
{
	atoll_memory_give_back_to(e, 0);
}

/* Onlines e's last blocks again until it has `keep`. */
void atoll_memory_give_back_to(struct atoll_enclave *e, u32 keep)
{
	int ret;

	hotplug_begin();
	while (e->block_count > keep) {
		struct atoll_block *b = &e->blocks[--e->block_count];

		ret = block_set_state(b->id, b->movable ? "online_movable" : "online");
		if (ret)
			pr_err("atoll: could not online memory block %lu again (error %d)\n",
			       b->id, ret);
	}
	hotplug_end();
}
