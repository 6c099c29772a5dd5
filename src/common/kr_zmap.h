/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Zeroed memory for a large structure a fresh process touches little of (a
 * job's view of a sim host). calloc clears every page of it, a page fault each
 * (~1.5 us on a virtual machine); a private anonymous mapping faults in only
 * the pages that are used. One mmap per object: not for small or many.
 */
#ifndef KR_ZMAP_H
#define KR_ZMAP_H

#include <stddef.h>
#include <sys/mman.h>

/* len zeroed bytes, page-aligned; NULL and errno (ENOMEM) if not. */
static inline void *kr_zmap(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Give back what kr_zmap(len) returned (NULL: nothing). */
static inline void kr_zunmap(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

#endif /* KR_ZMAP_H */
