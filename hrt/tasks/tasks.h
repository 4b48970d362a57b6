/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A small fork/join task runtime with work stealing (after the seed's
 * NESL/NDPC examples), on the hybrid-runtime API (atoll/hrt.h), or, built
 * with -DTASKS_PTHREADS, on Linux's pthreads: the same program either way.
 * One worker per CPU; a worker that waits for a task it forked runs other
 * tasks meanwhile (its own first, then others' stolen).
 */
#ifndef ATOLL_TASKS_H
#define ATOLL_TASKS_H

#include <stdint.h>

struct task {
	void (*fn)(void *arg);
	void *arg;
	uint32_t done;
};

/* Starts a worker on each of the program's other CPUs (at most max). */
int tasks_start(int max);
/* Makes t runnable by any worker; t must stay valid until tasks_join(t). */
void tasks_fork(struct task *t, void (*fn)(void *arg), void *arg);
/* Waits for t, running other tasks meanwhile. */
void tasks_join(struct task *t);
/* Ends the workers (every task joined). */
void tasks_stop(void);
/* How many workers run tasks, the caller included. */
int tasks_workers(void);

#endif
