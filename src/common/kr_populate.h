/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Map pages a fresh process is about to touch in one system call instead of
 * one page fault each. A fault is a trap into the kernel per page (measured
 * on the 2-vCPU VMs here: 1.5 us on one, 9.5-14 us on another whose
 * hypervisor traps page faults), populating is the kernel's own loop over the
 * same pages (0.3-0.7 us a page on the second). Only for pages that will be
 * touched: populating a page nobody uses costs its time for nothing, and on
 * shared memory a hole gets a page.
 *
 * madvise's MADV_POPULATE_READ/WRITE came with Linux 5.14; an older kernel
 * answers EINVAL and the pages fault in as before: the caller goes on.
 */
#ifndef KR_POPULATE_H
#define KR_POPULATE_H

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Populate [p, p + len) widened to pages, for reading or for writing too. 0 or -errno. */
static inline int kr_populate(const void *p, size_t len, int write)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi;

	if (!len)
		return 0;
	lo = (uintptr_t)p & ~(pg - 1);
	hi = ((uintptr_t)p + len + pg - 1) & ~(pg - 1);
	return madvise((void *)lo, hi - lo, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ)
		   ? -errno
		   : 0;
}

/*
 * Zeroed heap memory for a structure of some pages that a fresh process uses
 * at once (its ctx, a job's view of a sim host): calloc clears it with a page
 * fault a page where the heap is new; here the pages come populated first.
 * Heap memory, not a mapping of its own: free() gives it back without an
 * munmap (a TLB shootdown, 150 us measured on the VM that traps faults).
 * NULL and errno (ENOMEM) if not.
 */
static inline void *kr_zalloc_hot(size_t len)
{
	void *p = malloc(len);

	if (p) {
		(void)kr_populate(p, len, 1);
		memset(p, 0, len);
	}
	return p;
}

#endif /* KR_POPULATE_H */
