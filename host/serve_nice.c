// SPDX-License-Identifier: GPL-2.0-only
/*
 * How an enclave's programs are served on Linux: the `atoll run` process of
 * each program performs its delegated calls, and on a busy Linux it waits
 * its turn with every other task, so a call waits for Linux's scheduler.
 * Root may give the servers a nice value when creating the enclave (the
 * same power `renice` gives root); the module sets it on the thread that
 * binds a program (RUN, or ADOPT for a forked child's server), and the
 * threads that thread starts inherit it.
 */
#include <linux/sched.h>
#include "atoll.h"

int atoll_serve_nice_set(struct atoll_enclave *e, s32 nice, char *err)
{
	if (nice < MIN_NICE || nice > MAX_NICE) {
		atoll_err(err, "serve nice %d is outside %d..%d", nice, MIN_NICE, MAX_NICE);
		return -EINVAL;
	}
	e->serve_nice = nice;
	return 0;
}

/* The caller binds a program of e (its server's first thread). */
void atoll_serve_nice_apply(const struct atoll_enclave *e)
{
	if (e->serve_nice)
		set_user_nice(current, e->serve_nice);
}
