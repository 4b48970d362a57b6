/* SPDX-License-Identifier: GPL-2.0-only */
/* mirror_grant.c, for mirror.c: the frames of attachments a mirror may map. */
#ifndef ATOLL_MIRROR_GRANT_H
#define ATOLL_MIRROR_GRANT_H

#include "atoll.h"

bool atoll_mirror_grant_end(struct atoll_mirror_grant *g, unsigned long *lo, unsigned long *hi);
void atoll_mirror_grants_lock(void);
void atoll_mirror_grants_unlock(void);
int atoll_mirror_grant_lookup(struct atoll_enclave *e, u32 area, u32 pid, unsigned long va,
			      u64 phys, bool *writable);

#endif /* ATOLL_MIRROR_GRANT_H */
