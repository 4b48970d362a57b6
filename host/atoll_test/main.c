// SPDX-License-Identifier: GPL-2.0-only
/*
 * atoll_test.ko: the message checks and benchmarks (`atoll kmsg-check`,
 * `kmsg-bench`, `kmsg-mcast` of the CLI's test build) on /dev/atoll-test,
 * for the test VM. It runs on atoll.ko's exports: the ioctl path
 * (atoll_run_op, under atoll_lock), the enclave registry, the message
 * transport and multicast. Installs leave it out; atoll.ko answers these
 * ioctls with -ENOTTY.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include "atoll_test.h"

/* Takes the n message types for fns, all or none. */
int atoll_test_register(const u16 *types, const atoll_kmsg_handler *fns, u32 n)
{
	u32 i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = atoll_kmsg_register(types[i], fns[i]);
		if (ret) {
			atoll_test_unregister(types, i);
			return ret;
		}
	}
	return 0;
}

/* Gives the n types back; their handlers no longer run afterwards. */
void atoll_test_unregister(const u16 *types, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		atoll_kmsg_unregister(types[i]);
}

static long atoll_test_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case ATOLL_IOC_KMSG_CHECK:
		return atoll_run_op(arg, sizeof(struct atoll_kmsg_check_req), ATOLL_MAGIC_KCHECK,
				    (atoll_op)atoll_test_kmsg_check);
	case ATOLL_IOC_KMSG_BENCH:
		return atoll_run_op(arg, sizeof(struct atoll_kmsg_bench_req), ATOLL_MAGIC_KBENCH,
				    (atoll_op)atoll_test_kmsg_bench);
	case ATOLL_IOC_KMSG_MCAST:
		return atoll_run_op(arg, sizeof(struct atoll_kmsg_mcast_req), ATOLL_MAGIC_MCAST,
				    (atoll_op)atoll_test_kmsg_mcast);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations atoll_test_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = atoll_test_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice atoll_test_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "atoll-test",
	.fops = &atoll_test_fops,
	.mode = 0666,	/* atoll_may_admin() decides, and says why */
};

static int __init atoll_test_init(void)
{
	int ret = atoll_test_reports_init();

	if (ret)
		return ret;
	ret = atoll_test_check_init();
	if (ret)
		goto no_check;
	ret = atoll_test_bench_init();
	if (ret)
		goto no_bench;
	ret = misc_register(&atoll_test_dev);
	if (ret)
		goto no_dev;
	return 0;
no_dev:
	atoll_test_bench_exit();
no_bench:
	atoll_test_check_exit();
no_check:
	atoll_test_reports_exit();
	return ret;
}

static void __exit atoll_test_exit(void)
{
	misc_deregister(&atoll_test_dev);
	atoll_test_bench_exit();
	atoll_test_check_exit();
	atoll_test_reports_exit();
}

module_init(atoll_test_init);
module_exit(atoll_test_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Atoll's message checks and benchmarks, for its test VM");
