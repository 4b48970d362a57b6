// SPDX-License-Identifier: GPL-2.0-only
/*
 * Atoll host module: /dev/atoll and its ioctls. Each ioctl's struct is
 * checked (magic, version, size) and copied back even on failure, so the
 * CLI can print the module's own explanation. The enclave ioctls run one at
 * a time under atoll_lock; the program ioctls (program.c) have their own
 * path, as each open file can be bound to a program.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "atoll.h"

/* Serialises the enclave ioctls (atoll.h). */
DEFINE_MUTEX(atoll_lock);

/*
 * One enclave ioctl: the request struct in, checked, op(req) under
 * atoll_lock, the struct back out. The test module's ioctls too.
 */
long atoll_run_op(unsigned long arg, size_t size, u32 magic, atoll_op op)
{
	struct atoll_header *hdr;
	long ret;

	hdr = kmalloc(size, GFP_KERNEL);
	if (!hdr)
		return -ENOMEM;
	if (copy_from_user(hdr, (void __user *)arg, size)) {
		ret = -EFAULT;
		goto out;
	}
	ret = atoll_req_check(hdr, size, magic);
	if (ret)
		goto out;
	ret = mutex_lock_killable(&atoll_lock);
	if (ret)
		goto out;
	ret = op(hdr);
	mutex_unlock(&atoll_lock);
	if (copy_to_user((void __user *)arg, hdr, size))
		ret = -EFAULT;
out:
	kfree(hdr);
	return ret;
}
EXPORT_SYMBOL_GPL(atoll_run_op);

static long atoll_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case ATOLL_IOC_CREATE:
		return atoll_run_op(arg, sizeof(struct atoll_create), ATOLL_MAGIC_CREATE,
				    (atoll_op)atoll_enclave_create);
	case ATOLL_IOC_INFO:
		return atoll_run_op(arg, sizeof(struct atoll_enclave_info), ATOLL_MAGIC_INFO,
				    (atoll_op)atoll_enclave_info);
	case ATOLL_IOC_CONSOLE:
		return atoll_run_op(arg, sizeof(struct atoll_console_read), ATOLL_MAGIC_CONSREAD,
				    (atoll_op)atoll_enclave_console);
	case ATOLL_IOC_PING:
		return atoll_run_op(arg, sizeof(struct atoll_ping), ATOLL_MAGIC_PING,
				    (atoll_op)atoll_enclave_ping);
	case ATOLL_IOC_MSG_SEND:
		return atoll_run_op(arg, sizeof(struct atoll_msg_io), ATOLL_MAGIC_MSG,
				    (atoll_op)atoll_enclave_msg_send);
	case ATOLL_IOC_MSG_RECV:
		return atoll_usermsg_recv(arg);
	case ATOLL_IOC_PROGRAMS:
		return atoll_run_op(arg, sizeof(struct atoll_programs), ATOLL_MAGIC_PROGRAMS,
				    (atoll_op)atoll_enclave_programs);
	case ATOLL_IOC_DESTROY:
		return atoll_run_op(arg, sizeof(struct atoll_destroy), ATOLL_MAGIC_DESTROY,
				    (atoll_op)atoll_enclave_destroy);
	case ATOLL_IOC_XEMEM:
		return atoll_xemem_ioctl(file->private_data, arg);
	case ATOLL_IOC_RESIZE:
		return atoll_run_op(arg, sizeof(struct atoll_resize), ATOLL_MAGIC_RESIZE,
				    (atoll_op)atoll_enclave_resize);
	case ATOLL_IOC_CHOWN:
		return atoll_run_op(arg, sizeof(struct atoll_chown), ATOLL_MAGIC_CHOWN,
				    (atoll_op)atoll_enclave_chown);
	case ATOLL_IOC_NOISE:
		return atoll_run_op(arg, sizeof(struct atoll_noise_req), ATOLL_MAGIC_NOISE,
				    (atoll_op)atoll_enclave_noise);
	case ATOLL_IOC_XEMEM_LIST:
		return atoll_run_op(arg, sizeof(struct atoll_xemem_list), ATOLL_MAGIC_XLIST,
				    (atoll_op)atoll_xemem_list);
	case ATOLL_IOC_RUN:
	case ATOLL_IOC_START:
	case ATOLL_IOC_CALL:
	case ATOLL_IOC_KILL:
	case ATOLL_IOC_ADOPT:
	case ATOLL_IOC_EXEC:
		return atoll_program_ioctl(file->private_data, cmd, arg);
	default:
		return -ENOTTY;
	}
}

static int atoll_open(struct inode *inode, struct file *file)
{
	struct atoll_program *p = atoll_program_alloc();

	if (!p)
		return -ENOMEM;
	file->private_data = p;
	return 0;
}

/* The last reference: no ioctl runs and no mirror mapping is left. */
static int atoll_release(struct inode *inode, struct file *file)
{
	atoll_program_release(file->private_data);
	return 0;
}

static int atoll_mmap(struct file *file, struct vm_area_struct *vma)
{
	return atoll_mirror_mmap(file->private_data, vma);
}

static const struct file_operations atoll_fops = {
	.owner = THIS_MODULE,
	.open = atoll_open,
	.release = atoll_release,
	.mmap = atoll_mmap,
	.unlocked_ioctl = atoll_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice atoll_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "atoll",
	.fops = &atoll_fops,
	.mode = 0666,	/* access.c decides who may do what */
};

static int __init atoll_init(void)
{
	int ret = atoll_xemem_init();

	if (ret)
		return ret;
	ret = atoll_symbols_init() ?: atoll_lifecycle_init() ?: atoll_program_init() ?:
	      atoll_peers_init() ?: atoll_kgroup_init() ?: atoll_noise_init() ?:
	      atoll_usermsg_init() ?: atoll_xemem_lwk_init() ?: atoll_resize_init();
	if (ret)
		goto fail;
	atoll_kmsg_start();
	ret = misc_register(&atoll_dev);
	if (ret) {
		atoll_kmsg_stop();
		goto fail;
	}
	pr_info("atoll: ready (ABI %u): /dev/atoll\n", ATOLL_ABI_VERSION);
	return 0;
fail:
	atoll_xemem_exit();
	return ret;
}

static void __exit atoll_exit(void)
{
	/* Enclaves hold a module reference, so none is left here. */
	misc_deregister(&atoll_dev);
	atoll_kmsg_stop();
	atoll_usermsg_exit();
	atoll_xemem_exit();
}

module_init(atoll_init);
module_exit(atoll_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Atoll: boot lightweight-kernel enclaves on CPUs and memory taken from Linux");
