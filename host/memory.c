// SPDX-License-Identifier: GPL-2.0-only
/*
 * Memory: whole memory blocks (128 MB on x86-64) taken from Linux and given
 * back through the same sysfs files an administrator would use, so Linux's
 * own memory-hotplug code migrates pages, does the locking and keeps
 * MemTotal right. Only blocks in ZONE_MOVABLE are asked for: their pages can
 * always be moved away, so taking them never hurts the host.
 */
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/memory.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
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

static int block_set_state(unsigned long id, const char *state)
{
	int tries, ret = 0;

	/* sysfs asks for a restart when another hotplug operation holds its lock. */
	for (tries = 0; tries < 100; tries++) {
		ret = block_file(id, "state", (char *)state, strlen(state), true);
		if (ret != -ERESTARTNOINTR)
			break;
		/* What msleep(1) used to give at HZ=250: 4 to 8 ms. */
		usleep_range(4000, 8000);
	}
	return ret;
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
 * has. A block that refuses (EBUSY: pages Linux could not migrate) is
 * skipped for another. On failure e has what it had before.
 */
int atoll_memory_take(struct atoll_enclave *e, u64 bytes, char *err)
{
	u64 size = memory_block_size_bytes();
	u32 had = e->block_count, want = had + bytes / size, refused = 0;
	unsigned long id;
	int ret;

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
	for (id = last_block(size); id-- > 0 && e->block_count < want;) {
		if (fatal_signal_pending(current)) {
			atoll_err(err, "interrupted while taking memory");
			atoll_memory_give_back_to(e, had);
			return -EINTR;
		}
		if (!block_is_online_movable(id))
			continue;
		ret = block_set_state(id, "offline");
		if (ret) {
			refused++;
			continue;
		}
		e->blocks[e->block_count].id = id;
		e->blocks[e->block_count].movable = true;
		/* The entry first: the mirror reads the count without a lock. */
		smp_store_release(&e->block_count, e->block_count + 1);
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

	while (e->block_count > keep) {
		struct atoll_block *b = &e->blocks[--e->block_count];

		ret = block_set_state(b->id, b->movable ? "online_movable" : "online");
		if (ret)
			pr_err("atoll: could not online memory block %lu again (error %d)\n",
			       b->id, ret);
	}
}
