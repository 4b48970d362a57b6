// SPDX-License-Identifier: GPL-2.0-only
/*
 * Who may do what with enclaves. Creating, destroying and resizing them,
 * noise probes, message checks and changing an owner are root's
 * (CAP_SYS_ADMIN): they take CPUs and memory from Linux or hold a CPU.
 * An enclave's owner user and the members of its owner group (if it has
 * one: ATOLL_NO_GROUP, the default, leaves the owner alone) may use it:
 * run programs in it, read its console, status and program list, ping it
 * and message it. /dev/atoll is open to everyone (mode 0666); these checks
 * are the gate.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/export.h>
#include <linux/uidgid.h>

#include "atoll.h"

/* Without an audit record: asking is not an attempt (atoll list asks for each enclave). */
static bool admin(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
}

int atoll_may_admin(char *err, const char *what)
{
	if (admin())
		return 0;
	if (err)
		atoll_err(err, "only root (CAP_SYS_ADMIN) may %s", what);
	return -EPERM;
}
EXPORT_SYMBOL_GPL(atoll_may_admin);

bool atoll_may_use(const struct atoll_enclave *e)
{
	return uid_eq(current_euid(), e->owner_uid) ||
	       (gid_valid(e->owner_gid) && in_egroup_p(e->owner_gid)) || admin();
}

int atoll_check_use(const struct atoll_enclave *e, char *err)
{
	struct user_namespace *ns = current_user_ns();

	if (atoll_may_use(e))
		return 0;
	if (err)
		atoll_err(err, "enclave %s belongs to user %u%s: only they and root may use it",
			  e->name, from_kuid_munged(ns, e->owner_uid),
			  gid_valid(e->owner_gid) ? " and its group" : "");
	return -EACCES;
}

int atoll_owner_set(struct atoll_enclave *e, u32 uid, u32 gid, char *err)
{
	kuid_t kuid = make_kuid(current_user_ns(), uid);
	kgid_t kgid = gid == ATOLL_NO_GROUP ? INVALID_GID : make_kgid(current_user_ns(), gid);

	if (!uid_valid(kuid) || (gid != ATOLL_NO_GROUP && !gid_valid(kgid))) {
		atoll_err(err, "user %u or group %u does not exist here", uid, gid);
		return -EINVAL;
	}
	e->owner_uid = kuid;
	e->owner_gid = kgid;
	return 0;
}
