/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job heap allocator without jemalloc, for the copy of the job library
 * inside libkrcore-fi.so (src/ofi): libfabric dlopen()s its providers, and
 * Debian's jemalloc, built with initial-exec TLS, cannot be dlopen'ed
 * ("cannot allocate memory in static TLS block"; job_arena.c). The same
 * interface as job_arena.c over the same heap: a bump pointer that asks the
 * keeper for more backing as it goes (grow), and freed blocks kept on one
 * list per power-of-two size class for the next allocation of that class.
 * No coalescing: the provider's buffers come in a few fixed sizes. A block
 * is its class size, aligned to it up to a page (alignment asked beyond
 * that: -EINVAL), with a 16-byte header before it naming its class.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"

#define BIN_MIN_SHIFT 6u  /* 64 bytes */
#define BIN_MAX_SHIFT 40u /* far past any heap */
#define BIN_HDR	      16u
#define BIN_PAGE      4096u

struct bin_hdr {
	uint32_t shift; /* the block's class: 1 << shift bytes */
	uint32_t magic;
	uint64_t rsvd;
};
#define BIN_MAGIC 0x6b726268u /* "krbh" */

struct kr_arena {
	pthread_mutex_t lock;
	uint8_t *base;
	size_t len; /* backed */
	size_t max;
	size_t used; /* bump pointer */
	kr_arena_grow_fn grow;
	void *grow_arg;
	void *free[BIN_MAX_SHIFT + 1]; /* per class: a freed block, its first word the next */
};

/* kr_arena_create() - see job.h. */
int kr_arena_create(void *base, size_t len, size_t max, size_t reserved, kr_arena_grow_fn grow,
		    void *arg, struct kr_arena **arenap)
{
	struct kr_arena *a;

	if (!base || !len || max < len || reserved >= len || !arenap)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	pthread_mutex_init(&a->lock, NULL);
	a->base = base;
	a->len = len;
	a->max = max;
	a->used = reserved;
	a->grow = grow;
	a->grow_arg = arg;
	*arenap = a;
	return 0;
}

/* kr_arena_destroy() - see job.h. */
void kr_arena_destroy(struct kr_arena *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* lock held: a fresh block of class shift from the bump pointer, or NULL. */
static void *bin_carve(struct kr_arena *a, uint32_t shift)
{
	size_t size = (size_t)1 << shift, align = size < BIN_PAGE ? size : BIN_PAGE;
	size_t off = (a->used + BIN_HDR + align - 1) & ~(align - 1), end;

	if (off > a->max || size > a->max - off)
		return NULL;
	end = off + size;
	if (end > a->len) {
		int64_t n = a->grow ? a->grow(a->grow_arg, end) : -ENOMEM;

		if (n < 0 || (uint64_t)n < end || (uint64_t)n > a->max)
			return NULL;
		a->len = (size_t)n;
	}
	a->used = end;
	return a->base + off;
}

/* kr_arena_alloc() - see job.h. */
void *kr_arena_alloc(struct kr_arena *a, size_t len, size_t align)
{
	uint32_t shift = BIN_MIN_SHIFT;
	struct bin_hdr *h;
	void *p;

	if (!a || !len || align > BIN_PAGE || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	while (shift < BIN_MAX_SHIFT && ((size_t)1 << shift) < len)
		shift++;
	pthread_mutex_lock(&a->lock);
	p = a->free[shift];
	if (p)
		memcpy(&a->free[shift], p, sizeof(void *));
	else
		p = bin_carve(a, shift);
	pthread_mutex_unlock(&a->lock);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	h = (struct bin_hdr *)((uint8_t *)p - BIN_HDR);
	h->shift = shift;
	h->magic = BIN_MAGIC;
	return p;
}

/* kr_arena_free() - see job.h: back on its class's list. */
void kr_arena_free(struct kr_arena *a, void *p)
{
	struct bin_hdr *h;
	uint32_t shift;

	if (!a || !p)
		return;
	h = (struct bin_hdr *)((uint8_t *)p - BIN_HDR);
	shift = h->shift;
	if (h->magic != BIN_MAGIC || shift < BIN_MIN_SHIFT || shift > BIN_MAX_SHIFT)
		return; /* not a block of this arena: leave it */
	pthread_mutex_lock(&a->lock);
	memcpy(p, &a->free[shift], sizeof(void *));
	a->free[shift] = p;
	pthread_mutex_unlock(&a->lock);
}

/* kr_arena_meta_first() - see job.h: this arena's bookkeeping is in the heap. */
const void *kr_arena_meta_first(const struct kr_arena *a)
{
	(void)a;
	return NULL;
}
