/* SPDX-License-Identifier: GPL-2.0-only */
/* For host/kmsg_ring.c in user space (host/tests). */
#include <string.h>
