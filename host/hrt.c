// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who may run kernel-mode programs (`atoll run --hrt`) in an enclave. A
 * program at CPL 0 in the LWK can reach all physical memory, Linux's
 * included, so running one is trusted like loading a kernel module: only
 * root creates an enclave that allows them (create is root's alone), and
 * in it only root runs them, unless root also let the enclave's owner user
 * and group do so (`--hrt-users`), which gives them root's power over the
 * node.
 */
#include <linux/capability.h>
#include "atoll.h"

int atoll_hrt_set(struct atoll_enclave *e, u32 hrt, char *err)
{
	if (hrt > ATOLL_HRT_OWNER) {
		atoll_err(err, "kernel-mode setting %u is none of 0 (no one), 1 (root), 2 (root and the owner)",
			  hrt);
		return -EINVAL;
	}
	e->hrt = hrt;
	return 0;
}

/* RUN: may the caller run a program of kernel_mode (0 or 1) in e? */
int atoll_hrt_check_run(const struct atoll_enclave *e, u32 kernel_mode, char *err)
{
	if (!kernel_mode)
		return 0;
	if (kernel_mode != 1) {
		atoll_err(err, "kernel mode %u is neither 0 nor 1", kernel_mode);
		return -EINVAL;
	}
	if (e->hrt == ATOLL_HRT_NONE) {
		atoll_err(err, "enclave %s runs no kernel-mode programs: it was created without --hrt",
			  e->name);
		return -EPERM;
	}
	if (capable(CAP_SYS_ADMIN) || (e->hrt == ATOLL_HRT_OWNER && atoll_may_use(e)))
		return 0;
	if (e->hrt == ATOLL_HRT_OWNER)
		atoll_err(err, "only root and enclave %s's owner user and group may run kernel-mode programs in it",
			  e->name);
	else
		atoll_err(err, "only root may run kernel-mode programs in enclave %s (it was created without --hrt-users)",
			  e->name);
	return -EPERM;
}
