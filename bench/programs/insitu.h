/* SPDX-License-Identifier: GPL-2.0-only */
/* The in-situ workflow's segment (bench/programs/insitu_sim.c, insitu_analytics.c). */
#ifndef INSITU_H
#define INSITU_H

#include <stdint.h>

/*
 * The segment's first page; three grids (n * n doubles each, page-aligned)
 * follow it. The simulation computes each step into a grid that is neither
 * its input nor the snapshot being analysed, so a snapshot is published
 * without a copy: it is simply the grid the last step wrote.
 */
struct insitu_header {
	volatile uint64_t n;		/* grid side */
	volatile uint64_t published;	/* snapshots the simulation published */
	volatile uint64_t snapshot;	/* the grid that holds the last one */
	volatile uint64_t finished;	/* the simulation ended */
	char pad[32];
	volatile uint64_t taken;	/* snapshots the analytics finished with (its own line) */
	volatile uint64_t gone;		/* the analytics no longer reads the segment */
	/*
	 * The analytics' own small segment, whose events it waits on (0:
	 * none yet): an event lives with its segment's owner, so waiting on
	 * a segment of its own keeps the simulation's kernel out of every
	 * wait, and a snapshot costs the simulation one message, no interrupt.
	 */
	volatile int64_t doorbell;
};

#define INSITU_HEADER_BYTES 4096

#endif
