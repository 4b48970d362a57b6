// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel symbols Atoll needs that Linux does not export, found once at
 * load time (README, "Kernel symbols"):
 *   real_mode_header          where Linux's real-mode trampoline page is: the
 *                             only memory below 1 MiB a CPU can be started in
 *   x86_platform_ipi_callback the hook of Linux's platform IPI vector, which
 *                             lets the LWK interrupt Linux when it has news
 * kallsyms_lookup_name itself is not exported either; a kprobe on it tells
 * its address.
 */
#include <linux/kprobes.h>
#include <asm/realmode.h>
#include "atoll.h"

static struct real_mode_header **real_mode_header_p;
static void (**platform_ipi_callback_p)(void);

static unsigned long lookup_name(const char *name)
{
	static unsigned long (*kallsyms_lookup)(const char *name);
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };

	if (!kallsyms_lookup) {
		if (register_kprobe(&kp) < 0)
			return 0;
		kallsyms_lookup = (void *)kp.addr;
		unregister_kprobe(&kp);
	}
	return kallsyms_lookup ? kallsyms_lookup(name) : 0;
}

int atoll_symbols_init(void)
{
	real_mode_header_p = (void *)lookup_name("real_mode_header");
	platform_ipi_callback_p = (void *)lookup_name("x86_platform_ipi_callback");
	if (!real_mode_header_p || !*real_mode_header_p) {
		pr_err("atoll: cannot find real_mode_header (needs CONFIG_KPROBES and CONFIG_KALLSYMS_ALL)\n");
		return -ENOENT;
	}
	if (!platform_ipi_callback_p) {
		pr_err("atoll: cannot find x86_platform_ipi_callback (needs CONFIG_KALLSYMS_ALL)\n");
		return -ENOENT;
	}
	return 0;
}

u32 atoll_trampoline_phys(void)
{
	return (*real_mode_header_p)->trampoline_start;
}

void (**atoll_platform_ipi_hook(void))(void)
{
	return platform_ipi_callback_p;
}
