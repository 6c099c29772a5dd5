/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What changed in the kernel interfaces krmin uses between Debian 12's 6.1
 * and 6.12 (Debian 13, RHEL 10, Debian 12's backports kernel); the kmod
 * suite builds and boots both. 6.10 and 6.11 (follow_pte) are not built
 * here.
 */
#ifndef KRMIN_COMPAT_H
#define KRMIN_COMPAT_H

#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/version.h>

/* 6.3 made vma->vm_flags read-only: vm_flags_set/vm_flags_clear */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
static inline void krmin_vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void krmin_vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#else
#define krmin_vm_flags_set   vm_flags_set
#define krmin_vm_flags_clear vm_flags_clear
#endif

/* 6.12 removed no_llseek: a file without ->llseek refuses seeks (ESPIPE) */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#define KRMIN_FOPS_NO_LLSEEK .llseek = no_llseek,
#else
#define KRMIN_FOPS_NO_LLSEEK
#endif

/*
 * The frame of the page at addr of a VM_IO | VM_PFNMAP mapping (mmap_lock
 * held): follow_pfn until 6.9, follow_pte in 6.10 and 6.11,
 * follow_pfnmap_start/_end from 6.12. 0 or -EINVAL (no frame there).
 */
static inline int krmin_follow_pfn(struct vm_area_struct *vma, unsigned long addr,
				   unsigned long *pfn)
{
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 10, 0)
	return follow_pfn(vma, addr, pfn);
#elif LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
	spinlock_t *ptl;
	pte_t *ptep;
	int ret = follow_pte(vma, addr, &ptep, &ptl);

	if (ret)
		return ret;
	*pfn = pte_pfn(ptep_get(ptep));
	pte_unmap_unlock(ptep, ptl);
	return 0;
#else
	struct follow_pfnmap_args args = {.vma = vma, .address = addr};
	int ret = follow_pfnmap_start(&args);

	if (ret)
		return ret;
	*pfn = args.pfn;
	follow_pfnmap_end(&args);
	return 0;
#endif
}

#endif
