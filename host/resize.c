// SPDX-License-Identifier: GPL-2.0-only
/*
 * Resizing a running enclave (atoll add / atoll remove): memory
 * (resize_mem.c) or CPUs (resize_cpus.c), under atoll_lock. Every resize
 * is recorded in the enclave's history (atoll status).
 */
#include <linux/ktime.h>
#include "atoll.h"

static bool is_cpu_op(u32 op)
{
	return op == ATOLL_RESIZE_ADD_CPUS || op == ATOLL_RESIZE_REMOVE_CPUS;
}

static void record(struct atoll_enclave *e, struct atoll_resize *req, int ret)
{
	e->resize[e->resizes++ % ATOLL_RESIZE_HISTORY] = (struct atoll_resize_event){
		.at_ns = ktime_get_ns() - e->created_ns, .op = req->op, .result = ret,
		.amount = is_cpu_op(req->op) ? req->cpus[0] : req->bytes,
		.linux_ns = req->linux_ns, .lwk_ns = req->lwk_ns };
}

/* ATOLL_IOC_RESIZE, under atoll_lock, for a running enclave. */
int atoll_resize(struct atoll_enclave *e, struct atoll_resize *req)
{
	int ret;

	req->linux_ns = 0;
	req->lwk_ns = 0;
	if ((req->op == ATOLL_RESIZE_ADD_MEM || req->op == ATOLL_RESIZE_REMOVE_MEM) &&
	    (!req->bytes || req->bytes % e->block_size)) {
		atoll_err(req->error, "memory is added and removed in whole %llu MiB blocks",
			  e->block_size >> 20);
		return -EINVAL;
	}
	switch (req->op) {
	case ATOLL_RESIZE_ADD_MEM:
		ret = atoll_resize_add_memory(e, req);
		break;
	case ATOLL_RESIZE_REMOVE_MEM:
		ret = atoll_resize_remove_memory(e, req);
		break;
	case ATOLL_RESIZE_ADD_CPUS:
		ret = atoll_resize_add_cpus(e, req);
		break;
	case ATOLL_RESIZE_REMOVE_CPUS:
		ret = atoll_resize_remove_cpus(e, req);
		break;
	default:
		atoll_err(req->error, "unknown resize operation %u", req->op);
		return -EINVAL;
	}
	record(e, req, ret);
	return ret;
}

/* The last resizes, oldest first. */
void atoll_resize_history(struct atoll_enclave *e, struct atoll_enclave_info *out)
{
	u32 n = min_t(u32, e->resizes, ATOLL_RESIZE_HISTORY), i;

	out->resizes = e->resizes;
	for (i = 0; i < n; i++)
		out->resize[i] = e->resize[(e->resizes - n + i) % ATOLL_RESIZE_HISTORY];
}
