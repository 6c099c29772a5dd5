// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * krmin mappings: a job maps the pinned pages of the slots it owns.
 *
 * ->mmap only checks and marks the vma; pages are inserted one by one by the
 * fault handler, which checks ownership under krmin_dev.lock every time.
 * Revocation zaps the slot's whole offset window in the device-wide
 * address_space under the same lock. Hence a PTE can only exist while its
 * vma's file owns the slot: a fault either sees the owner (and its PTE is
 * zapped by a later revocation) or it sees none and raises SIGBUS. No PTE is
 * ever inserted from ->mmap, because the vma is not yet in the address_space
 * there and a concurrent revocation would miss it.
 *
 * The mappings are VM_PFNMAP | VM_IO: the pages belong to the keeper, so
 * they are not refcounted per PTE, cannot be pinned again through the job
 * (get_user_pages fails), are not dumped and are not copied on fork
 * (VM_DONTCOPY; VM_IO also refuses MADV_DOFORK).
 */
#include <linux/mm.h>
#include <linux/sched.h>

#include "krmin.h"
#include "krmin_compat.h"

void krmin_slot_zap_locked(const struct krmin_slot *slot)
{
	lockdep_assert_held(&krmin_dev.lock);
	unmap_mapping_range(krmin_dev.mapping, krmin_mmap_offset(slot->id),
			    1ULL << KRMIN_MMAP_SLOT_SHIFT, 1);
}

static vm_fault_t krmin_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct krmin_file *kf = vma->vm_file->private_data;
	unsigned long idx = vmf->pgoff & KRMIN_PGOFF_PAGE_MASK;
	unsigned long id = vmf->pgoff >> KRMIN_PGOFF_SLOT_SHIFT;
	struct krmin_slot *slot;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	if (id >= KRMIN_MAX_SLOTS || vma->vm_mm != kf->mm)
		return VM_FAULT_SIGBUS;
	mutex_lock(&krmin_dev.lock);
	slot = krmin_dev.slots[id];
	if (slot && slot->state == KRMIN_SLOT_OWNED && slot->owner == kf) {
		if (idx < slot->nr_pages)
			ret = vmf_insert_pfn(vma, vmf->address,
					     page_to_pfn(slot->pages[idx]));
		else if (idx - slot->nr_pages < slot->io_pages && !slot->io_gone) /* krmin_io.c */
			ret = vmf_insert_pfn_prot(vma, vmf->address,
						  slot->io_pfn + (idx - slot->nr_pages),
						  slot->io_prot);
	}
	mutex_unlock(&krmin_dev.lock);
	return ret;
}

/* No .open/.close: nothing is tracked per vma, a split or move is fine. */
static const struct vm_operations_struct krmin_vm_ops = {
	.fault = krmin_vm_fault,
};

int krmin_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct krmin_file *kf = file->private_data;
	unsigned long idx = vma->vm_pgoff & KRMIN_PGOFF_PAGE_MASK;
	unsigned long id = vma->vm_pgoff >> KRMIN_PGOFF_SLOT_SHIFT;
	unsigned long npages = vma_pages(vma);
	struct krmin_slot *slot;
	int ret = 0;

	if (current->mm != kf->mm)
		return -EACCES;
	/* Shared and not executable; PFN maps cannot be copy-on-write. */
	if (!(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;
	if (id >= KRMIN_MAX_SLOTS)
		return -EINVAL;

	mutex_lock(&krmin_dev.lock);
	slot = krmin_dev.slots[id];
	if (kf->role != KRMIN_ROLE_JOB || !slot ||
	    slot->state != KRMIN_SLOT_OWNED || slot->owner != kf)
		ret = -EACCES;
	else if (idx >= slot->nr_pages + slot->io_pages ||
		 npages > slot->nr_pages + slot->io_pages - idx)
		ret = -EINVAL;
	mutex_unlock(&krmin_dev.lock);
	if (ret)
		return ret;

	krmin_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	krmin_vm_flags_clear(vma, VM_MAYEXEC);
	vma->vm_ops = &krmin_vm_ops;
	return 0;
}
