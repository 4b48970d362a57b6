// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Interrupt-off regions: CLI at CPL 0; in ring 3, which may not, the LWK
 * holds off preemption of the thread instead (for at most 10 ms).
 */
#include <atoll/hrt.h>
#include "internal.h"

#define IF_FLAG 0x200UL

unsigned long hrt_irq_save(void)
{
	unsigned long flags;

	/* In ring 3, "interrupts were on" is "the thread was not held". */
	if (hrt_mode() != HRT_KERNEL)
		return hrt_call(ATOLL_HRT_OP_HOLD, 1, 0, 0, 0, 0) == 1 ? 0 : IF_FLAG;
	__asm__ volatile("pushfq; pop %0; cli" : "=r"(flags) : : "memory");
	return flags & IF_FLAG;
}

void hrt_irq_restore(unsigned long saved)
{
	if (hrt_mode() != HRT_KERNEL) {
		hrt_call(ATOLL_HRT_OP_HOLD, saved & IF_FLAG ? 0 : 1, 0, 0, 0, 0);
		return;
	}
	if (saved & IF_FLAG)
		__asm__ volatile("sti" : : : "memory");
}
