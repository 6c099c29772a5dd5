// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * krmin device: the /dev/krmin misc device, its open files and module setup.
 *
 * Every open file gets f_mapping pointed at one address_space (of an inode
 * on a private pseudo filesystem), whatever device node it was opened
 * through, so that unmap_mapping_range() on a slot's offset window reaches
 * every mapping of that slot (the approach DRM takes).
 */
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mount.h>
#include <linux/poll.h>
#include <linux/pseudo_fs.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "krmin.h"
#include "krmin_compat.h"

#define KRMIN_FS_MAGIC 0x6b726d6e /* "krmn" */

static unsigned int max_pinned_mb;
module_param(max_pinned_mb, uint, 0444);
MODULE_PARM_DESC(max_pinned_mb,
		 "Most memory all slots may pin, MiB (0: a quarter of RAM)");

/* Who may take the keeper role, besides holding CAP_IPC_LOCK (init namespace ids). */
static unsigned int keeper_uid;
module_param(keeper_uid, uint, 0444);
MODULE_PARM_DESC(keeper_uid, "uid that may register as the keeper (default 0)");
static unsigned int keeper_gid;
module_param(keeper_gid, uint, 0444);
MODULE_PARM_DESC(keeper_gid, "gid whose members may register as the keeper (default 0)");

bool krmin_may_keep(void)
{
	kuid_t uid = make_kuid(&init_user_ns, keeper_uid);
	kgid_t gid = make_kgid(&init_user_ns, keeper_gid);

	if (!capable(CAP_IPC_LOCK))
		return false;
	return (uid_valid(uid) && uid_eq(current_euid(), uid)) ||
	       (gid_valid(gid) && in_egroup_p(gid));
}

struct krmin_dev krmin_dev = {
	.lock = __MUTEX_INITIALIZER(krmin_dev.lock),
	.queue = LIST_HEAD_INIT(krmin_dev.queue),
	.wq = __WAIT_QUEUE_HEAD_INITIALIZER(krmin_dev.wq),
};

static struct vfsmount *krmin_mnt;
static int krmin_mnt_count;
static struct inode *krmin_inode;

static int krmin_open(struct inode *inode, struct file *file)
{
	struct krmin_file *kf;

	if (!current->mm)
		return -EINVAL;
	kf = kzalloc(sizeof(*kf), GFP_KERNEL);
	if (!kf)
		return -ENOMEM;
	mutex_init(&kf->read_lock);
	kf->mm = current->mm;
	mmgrab(kf->mm);
	file->private_data = kf;
	file->f_mapping = krmin_dev.mapping;
	return stream_open(inode, file);
}

static int krmin_release(struct inode *inode, struct file *file)
{
	struct krmin_file *kf = file->private_data;

	/* role is final here: no ioctl can run on a released file. */
	if (kf->role == KRMIN_ROLE_KEEPER)
		krmin_keeper_detach(kf);
	else if (kf->role == KRMIN_ROLE_JOB)
		krmin_job_detach(kf);
	mmdrop(kf->mm);
	mutex_destroy(&kf->read_lock);
	kfree(kf);
	return 0;
}

static long krmin_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct krmin_file *kf = file->private_data;
	void __user *uarg = (void __user *)arg;

	/* A file works only in the process that opened it. */
	if (current->mm != kf->mm)
		return -EACCES;
	switch (cmd) {
	case KRMIN_IOC_KEEPER_REG:
		return krmin_keeper_reg(kf, uarg);
	case KRMIN_IOC_SLOT_REG:
		return krmin_slot_reg(kf, uarg);
	case KRMIN_IOC_SLOT_UNREG:
		return krmin_slot_unreg(kf, uarg);
	case KRMIN_IOC_SLOT_GRANT:
		return krmin_slot_grant(kf, uarg);
	case KRMIN_IOC_SLOT_REVOKE:
		return krmin_slot_revoke(kf, uarg);
	case KRMIN_IOC_SLOT_CLAIM:
		return krmin_slot_claim(kf, uarg);
	case KRMIN_IOC_SLOT_RELEASE:
		return krmin_slot_release(kf, uarg);
	case KRMIN_IOC_SLOT_ADD_IO:
		return krmin_slot_add_io(kf, uarg);
	default:
		return -ENOTTY;
	}
}

static ssize_t krmin_read(struct file *file, char __user *buf, size_t count,
			  loff_t *ppos)
{
	struct krmin_file *kf = file->private_data;

	if (current->mm != kf->mm)
		return -EACCES;
	return krmin_read_events(kf, buf, count, file->f_flags & O_NONBLOCK);
}

static __poll_t krmin_poll(struct file *file, poll_table *wait)
{
	struct krmin_file *kf = file->private_data;

	poll_wait(file, &krmin_dev.wq, wait);
	/* Only the keeper has events; a racy read of role is harmless here. */
	if (READ_ONCE(kf->role) == KRMIN_ROLE_KEEPER &&
	    READ_ONCE(krmin_dev.nr_queued))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

static const struct file_operations krmin_fops = {
	.owner = THIS_MODULE,
	.open = krmin_open,
	.release = krmin_release,
	.unlocked_ioctl = krmin_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.read = krmin_read,
	.poll = krmin_poll,
	.mmap = krmin_mmap,
	KRMIN_FOPS_NO_LLSEEK
};

/*
 * /sys/class/misc/krmin/stats: slots by state and pinned pages, one
 * "name value" per line, for operators and for tests that check nothing
 * leaks across many leases.
 */
static ssize_t stats_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	unsigned int n[KRMIN_SLOT_QUEUED + 1] = {0}, slots = 0;
	unsigned long pinned;
	bool keeper;
	u32 id;

	mutex_lock(&krmin_dev.lock);
	for (id = 0; id < KRMIN_MAX_SLOTS; id++) {
		if (!krmin_dev.slots[id])
			continue;
		slots++;
		n[krmin_dev.slots[id]->state]++;
	}
	pinned = krmin_dev.pinned_pages;
	keeper = krmin_dev.keeper;
	mutex_unlock(&krmin_dev.lock);
	return sysfs_emit(buf,
			  "keeper %d\nslots %u\nfree %u\ngranted %u\nowned %u\nqueued %u\npinned_pages %lu\n",
			  keeper, slots, n[KRMIN_SLOT_FREE], n[KRMIN_SLOT_GRANTED],
			  n[KRMIN_SLOT_OWNED], n[KRMIN_SLOT_QUEUED], pinned);
}
static DEVICE_ATTR_RO(stats);

static struct attribute *krmin_attrs[] = {
	&dev_attr_stats.attr,
	NULL,
};
ATTRIBUTE_GROUPS(krmin);

static struct miscdevice krmin_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KRMIN_DEV_NAME,
	.fops = &krmin_fops,
	.mode = 0666, /* jobs open it; keeper registration needs CAP_IPC_LOCK */
	.groups = krmin_groups,
};

static int krmin_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, KRMIN_FS_MAGIC) ? 0 : -ENOMEM;
}

/* No .owner: the internal mount must not pin the module (see krmin_exit). */
static struct file_system_type krmin_fs_type = {
	.name = "krmin",
	.init_fs_context = krmin_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

static int __init krmin_init(void)
{
	int ret;

	/* A slot's ring and doorbell pages fit in its mmap offset window. */
	BUILD_BUG_ON(2ULL * KRMIN_SLOT_MAX_BYTES > 1ULL << KRMIN_MMAP_SLOT_SHIFT);
	if (max_pinned_mb)
		krmin_dev.max_pinned_pages = (unsigned long)max_pinned_mb
					     << (20 - PAGE_SHIFT);
	else
		krmin_dev.max_pinned_pages = totalram_pages() / 4;

	ret = simple_pin_fs(&krmin_fs_type, &krmin_mnt, &krmin_mnt_count);
	if (ret)
		return ret;
	krmin_inode = alloc_anon_inode(krmin_mnt->mnt_sb);
	if (IS_ERR(krmin_inode)) {
		ret = PTR_ERR(krmin_inode);
		goto err_release_fs;
	}
	krmin_dev.mapping = krmin_inode->i_mapping;
	ret = misc_register(&krmin_misc);
	if (ret)
		goto err_put_inode;
	pr_info("krmin: /dev/%s ready, uapi %d, %u slots, pin limit %lu pages\n",
		KRMIN_DEV_NAME, KRMIN_UAPI_VERSION, KRMIN_MAX_SLOTS,
		krmin_dev.max_pinned_pages);
	return 0;

err_put_inode:
	iput(krmin_inode);
err_release_fs:
	simple_release_fs(&krmin_mnt, &krmin_mnt_count);
	return ret;
}

/*
 * Runs only with no open file (the fops .owner holds the module) and hence
 * no mapping (a vma holds its file) and no slot (the keeper's file is gone).
 */
static void __exit krmin_exit(void)
{
	misc_deregister(&krmin_misc);
	iput(krmin_inode);
	simple_release_fs(&krmin_mnt, &krmin_mnt_count);
}

module_init(krmin_init);
module_exit(krmin_exit);
MODULE_DESCRIPTION("krcore vQP ownership: pinned ring slots, leases, revocation");
MODULE_LICENSE("Dual BSD/GPL");
