// SPDX-License-Identifier: GPL-2.0
/*
 * A module that makes the kernel warn once when loaded, for tests/test_vm.py:
 * the test VM must fail a run whose guest kernel warned, after the script
 * has run to its end.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init warn_once_init(void)
{
	WARN(1, "atoll test: a warning on purpose\n");
	return 0;
}

static void __exit warn_once_exit(void)
{
}

module_init(warn_once_init);
module_exit(warn_once_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Warns once at load, to test that warnings fail a test VM run");
