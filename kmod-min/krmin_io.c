// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * krmin device pages: a slot may carry the page(s) of device memory its QP
 * rings doorbells through (a ConnectX UAR page), so that a job maps exactly
 * its slot's doorbell page and never the keeper's command fd.
 *
 * The keeper names its own mapping of the pages (an mmap of the device's
 * file: VM_IO | VM_PFNMAP). Under the keeper's mmap_lock the module reads the
 * page frames (krmin_follow_pfn, page by page: they must be contiguous) and the
 * mapping's page protection, and takes a reference to the mapping's file.
 * Device pages cannot be pinned; the file reference is what keeps them the
 * device's: the driver frees a UAR only when its file is released, and the
 * module drops the reference only after the slot is gone and every job
 * mapping of it has been zapped (krmin_slot_free). The fault handler
 * inserts the frames with the recorded protection (uncached or
 * write-combining, as the keeper has them), which on x86 PAT also matches
 * the memory type the driver reserved for them.
 *
 * The keeper's mapping can go without the keeper: a device reset or unbind
 * (uverbs' disassociate) zaps every mapping the driver made, but not the
 * jobs' mappings this module made, and the frames may then be another
 * context's UAR or no device's at all. So the module watches the keeper's
 * range with an mmu interval notifier: when it is invalidated (disassociate,
 * munmap, the keeper's exit) the slot's device pages are marked gone and
 * every job mapping of the slot is zapped; a later touch of them raises
 * SIGBUS (its RAM pages fault back in).
 */
#include <linux/file.h>
#include <linux/mm.h>
#include <linux/mmu_notifier.h>
#include <linux/slab.h>
#include <linux/sched/mm.h>

#include "krmin.h"
#include "krmin_compat.h"

/* Reads the frames behind [addr, addr + len) of the caller's device mapping. */
static int krmin_io_resolve(u64 addr, u64 len, unsigned long *pfn, pgprot_t *prot,
			    struct file **file)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	unsigned long first = 0, p, i;
	int ret = -EINVAL;

	mmap_read_lock(mm);
	vma = vma_lookup(mm, addr);
	if (!vma || addr + len > vma->vm_end || !vma->vm_file ||
	    (vma->vm_flags & (VM_IO | VM_PFNMAP)) != (VM_IO | VM_PFNMAP))
		goto out;
	for (i = 0; i < len >> PAGE_SHIFT; i++) {
		if (krmin_follow_pfn(vma, addr + (i << PAGE_SHIFT), &p))
			goto out;
		if (!i)
			first = p;
		else if (p != first + i)
			goto out; /* not contiguous: not one device range */
	}
	*pfn = first;
	*prot = vma->vm_page_prot;
	*file = get_file(vma->vm_file);
	ret = 0;
out:
	mmap_read_unlock(mm);
	return ret;
}

/* The keeper's mapping of a slot's device pages, watched. */
struct krmin_io_watch {
	struct mmu_interval_notifier mni;
	u32 slot;
};

/*
 * The keeper's range is being unmapped or changed: its frames are no
 * longer the slot's to hand out. May sleep (krmin_dev.lock, zapping the
 * jobs' mappings), so a non-blockable invalidation is refused and retried
 * by the caller as a blockable one.
 */
static bool krmin_io_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range, unsigned long cur_seq)
{
	struct krmin_io_watch *w = container_of(mni, struct krmin_io_watch, mni);
	struct krmin_slot *slot;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mmu_interval_set_seq(mni, cur_seq);
	mutex_lock(&krmin_dev.lock);
	slot = krmin_slot_get_locked(w->slot);
	if (slot && slot->io_watch == w && !slot->io_gone) {
		slot->io_gone = true;
		krmin_slot_zap_locked(slot);
	}
	mutex_unlock(&krmin_dev.lock);
	return true;
}

static const struct mmu_interval_notifier_ops krmin_io_mni_ops = {
	.invalidate = krmin_io_invalidate,
};

void krmin_io_unwatch(struct krmin_slot *slot)
{
	if (!slot->io_watch)
		return;
	/* waits for a running invalidation, which takes krmin_dev.lock */
	mmu_interval_notifier_remove(&slot->io_watch->mni);
	kfree(slot->io_watch);
	slot->io_watch = NULL;
}

long krmin_slot_add_io(struct krmin_file *kf, void __user *uarg)
{
	struct krmin_io_watch *watch;
	unsigned long seq;
	struct krmin_slot_io req;
	struct krmin_slot *slot;
	struct file *file;
	unsigned long pfn;
	pgprot_t prot;
	long ret;

	ret = krmin_copy_req(&req, sizeof(req), uarg);
	if (ret)
		return ret;
	if (req.reserved || req.slot >= KRMIN_MAX_SLOTS ||
	    !krmin_range_ok(req.io_addr, req.io_len, KRMIN_SLOT_IO_MAX_BYTES))
		return -EINVAL;
	if (READ_ONCE(kf->role) != KRMIN_ROLE_KEEPER)
		return -EPERM;
	/*
	 * Watched from before the frames are read: an invalidation after that
	 * moves the notifier's sequence, which is checked once the slot is
	 * locked (mmu_interval_read_retry), so none is missed.
	 */
	watch = kzalloc(sizeof(*watch), GFP_KERNEL);
	if (!watch)
		return -ENOMEM;
	watch->slot = req.slot;
	ret = mmu_interval_notifier_insert(&watch->mni, current->mm, req.io_addr, req.io_len,
					   &krmin_io_mni_ops);
	if (ret) {
		kfree(watch);
		return ret;
	}
	seq = mmu_interval_read_begin(&watch->mni);
	/* mmap_lock before krmin_dev.lock, never under it */
	ret = krmin_io_resolve(req.io_addr, req.io_len, &pfn, &prot, &file);
	if (ret) {
		mmu_interval_notifier_remove(&watch->mni);
		kfree(watch);
		return ret;
	}

	mutex_lock(&krmin_dev.lock);
	slot = krmin_slot_get_locked(req.slot);
	if (!krmin_is_keeper_locked(kf)) {
		ret = -EPERM;
	} else if (!slot) {
		ret = -ENOENT;
	} else if (slot->io_file || slot->state != KRMIN_SLOT_FREE) {
		ret = -EBUSY; /* a job could be mapping its pages now */
	} else if (mmu_interval_read_retry(&watch->mni, seq)) {
		ret = -EAGAIN; /* the mapping changed while its frames were read */
	} else {
		slot->io_pfn = pfn;
		slot->io_prot = prot;
		slot->io_pages = req.io_len >> PAGE_SHIFT;
		slot->io_file = file;
		slot->io_watch = watch;
		slot->io_gone = false;
		file = NULL;
		watch = NULL;
	}
	mutex_unlock(&krmin_dev.lock);
	if (watch) {
		mmu_interval_notifier_remove(&watch->mni);
		kfree(watch);
	}
	if (file)
		fput(file);
	return ret;
}
