// SPDX-License-Identifier: GPL-2.0
/*
 * A module that leaks memory when loaded, for tests/test_kdebug.py: on the
 * debug kernel (kmemleak), the test VM must report the leak at the run's end
 * and fail the run.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

/* Not __init: the leak's backtrace must still name a function of the
 * module when kmemleak prints it. Several objects, in case a stale copy of
 * one pointer (on a stack) keeps it referenced.
 */
static noinline void leak_some(void)
{
	int i;

	for (i = 0; i < 4; i++) {
		char *p = kmalloc(96 + 32 * i, GFP_KERNEL);

		if (p)
			memset(p, 0x5a, 96 + 32 * i);
		OPTIMIZER_HIDE_VAR(p);
	}
}

static int __init leak_once_init(void)
{
	leak_some();
	return 0;
}

static void __exit leak_once_exit(void)
{
}

module_init(leak_once_init);
module_exit(leak_once_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Leaks memory at load, to test that kmemleak's reports fail a test VM run");
