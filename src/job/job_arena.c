/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job heap allocator: a jemalloc arena whose extent hooks carve the
 * job's hugepage heap (already registered by the keeper as this job's MR),
 * so kr_malloc memory is RDMA-ready with no registration call.
 *
 * Which jemalloc: Debian's libjemalloc exports the unprefixed malloc/free.
 * Linking it would replace the whole process's malloc (a library must not)
 * and crashes under AddressSanitizer (both claim malloc; measured: SEGV at
 * pc 0); dlopen(RTLD_LOCAL) fails because it uses initial-exec TLS ("cannot
 * allocate memory in static TLS block" once ASan and libibverbs took the
 * surplus). So krcore links a private copy of libjemalloc_pic.a whose public
 * names are renamed krje_* (src/job/meson.build): the process keeps its own
 * malloc (or ASan's), and krcore reaches jemalloc as krje_mallctl/mallocx/
 * dallocx only.
 *
 * Extent hooks: alloc is a bump pointer over the heap (fresh pages from
 * the keeper, so fresh extents are zero); past what is backed it asks the
 * keeper for more (grow: one call per doubling, not per kr_malloc), up to the
 * heap's reserved size. jemalloc's own metadata is the exception: its base
 * blocks are the only 2 MB-aligned requests (kr_malloc asks 16-byte
 * alignment), and they come from ordinary process memory, so metadata never
 * sits in RDMA memory and a 2 MB heap is all usable (measured: without this
 * a fresh arena takes 2 MB of the heap before the first kr_malloc);
 * retain:false makes jemalloc ask for extents of the size it needs instead
 * of growing in 2 MB steps; dalloc opts out (jemalloc keeps and reuses
 * the extent: heap memory is never given back to the system, it is the job's
 * until detach); split and merge are allowed (all extents lie in one
 * mapping); no purge, no commit/decommit (hugepages stay committed).
 * Every call uses MALLOCX_TCACHE_NONE: a thread cache would outlive the
 * arena at detach.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <jemalloc/jemalloc.h>

#include "common/kr_log.h"
#include "common/kr_populate.h"
#include "job/job.h"

#define KR_ARENA_FLAGS	    MALLOCX_TCACHE_NONE
#define KR_ARENA_META_ALIGN (2u << 20) /* jemalloc's HUGEPAGE: base blocks */
#define KR_ARENA_META_MAX   32u

/*
 * jemalloc options (its malloc_conf, renamed): exact-size extents; one
 * automatic arena, since every call names its arena (its boot then clears
 * the statistics of 1 arena instead of 4 per CPU: 30 page faults instead of
 * 37 in a fresh process, on the attach path)
 */
const char *krje_malloc_conf = "retain:false,narenas:1";

/* jemalloc's mallctl/mallocx/dallocx under their private names (krje.syms) */
int krje_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
void *krje_mallocx(size_t size, int flags);
void krje_dallocx(void *ptr, int flags);

/* hooks must stay first: jemalloc hands the hooks pointer back to us */
struct kr_arena {
	extent_hooks_t hooks;
	pthread_mutex_t lock;
	uint8_t *base;
	size_t len; /* backed */
	size_t max; /* reserved: len grows up to it */
	size_t used;
	kr_arena_grow_fn grow;
	void *grow_arg;
	unsigned int ind;
	struct {
		void *addr;
		size_t len;
	} meta[KR_ARENA_META_MAX]; /* jemalloc base blocks, process memory */
};

/* lock held: a metadata block outside the heap, recorded for destroy */
static void *arena_meta_alloc(struct kr_arena *a, size_t size, size_t align)
{
	uint32_t i;
	uint8_t *p, *q;

	for (i = 0; i < KR_ARENA_META_MAX && a->meta[i].addr; i++)
		;
	if (i == KR_ARENA_META_MAX)
		return NULL;
	/* over-map to align, trim both ends */
	p = mmap(NULL, size + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	q = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (q > p)
		munmap(p, (size_t)(q - p));
	if (q + size < p + size + align)
		munmap(q + size, (size_t)(p + size + align - (q + size)));
	a->meta[i].addr = q;
	a->meta[i].len = size;
	/* what of its first base block a new arena writes at once: measured
	 * (mincore, jemalloc 5.3) 21 of the first 23 pages by arenas.create, more
	 * with the first allocations: one system call instead of ~25 page faults
	 * on the first kr_malloc's path (kr_populate.h) */
	if (!i)
		(void)kr_populate(q, size < KR_ARENA_META_HOT ? size : KR_ARENA_META_HOT, 1);
	return q;
}

static struct kr_arena *arena_of(extent_hooks_t *h)
{
	return (struct kr_arena *)h;
}

static void *arena_extent_alloc(extent_hooks_t *h, void *new_addr, size_t size, size_t align,
				bool *zero, bool *commit, unsigned int ind)
{
	struct kr_arena *a = arena_of(h);
	size_t off;
	void *p = NULL;

	(void)ind;
	if (!align || (align & (align - 1)))
		return NULL;
	pthread_mutex_lock(&a->lock);
	if (!new_addr && align >= KR_ARENA_META_ALIGN) {
		p = arena_meta_alloc(a, size, align);
		if (p) {
			*zero = true;
			*commit = true;
		}
		goto out;
	}
	off = (a->used + align - 1) & ~(align - 1);
	if (new_addr && (uint8_t *)new_addr != a->base + off)
		goto out; /* only growth in place at the bump pointer */
	if (off > a->max || size > a->max - off)
		goto out;
	if (off + size > a->len) {
		int64_t n = a->grow ? a->grow(a->grow_arg, off + size) : -ENOMEM;

		if (n < 0 || (uint64_t)n < off + size || (uint64_t)n > a->max)
			goto out; /* jemalloc returns NULL: kr_malloc says ENOMEM */
		a->len = (size_t)n;
	}
	p = a->base + off;
	a->used = off + size;
	*zero = true; /* never handed out before: the keeper scrubbed it */
	*commit = true;
out:
	pthread_mutex_unlock(&a->lock);
	return p;
}

static bool arena_extent_dalloc(extent_hooks_t *h, void *addr, size_t size, bool committed,
				unsigned int ind)
{
	(void)h, (void)addr, (void)size, (void)committed, (void)ind;
	return true; /* opt out: jemalloc retains the extent for reuse */
}

/* Heap extents stay (the heap goes at detach); metadata blocks are unmapped. */
static void arena_extent_destroy(extent_hooks_t *h, void *addr, size_t size, bool committed,
				 unsigned int ind)
{
	struct kr_arena *a = arena_of(h);

	(void)committed, (void)ind;
	pthread_mutex_lock(&a->lock);
	for (uint32_t i = 0; i < KR_ARENA_META_MAX; i++) {
		if (a->meta[i].addr == addr && a->meta[i].len == size) {
			munmap(addr, size);
			a->meta[i].addr = NULL;
			break;
		}
	}
	pthread_mutex_unlock(&a->lock);
}

static bool arena_extent_split(extent_hooks_t *h, void *addr, size_t size, size_t size_a,
			       size_t size_b, bool committed, unsigned int ind)
{
	(void)h, (void)addr, (void)size, (void)size_a, (void)size_b, (void)committed, (void)ind;
	return false; /* allowed */
}

static bool arena_extent_merge(extent_hooks_t *h, void *addr_a, size_t size_a, void *addr_b,
			       size_t size_b, bool committed, unsigned int ind)
{
	(void)h, (void)addr_a, (void)size_a, (void)addr_b, (void)size_b, (void)committed, (void)ind;
	return false; /* allowed: one mapping */
}

/* kr_arena_create() - see job.h. Returns 0, -ENOMEM, -EINVAL. */
int kr_arena_create(void *base, size_t len, size_t max, size_t reserved, kr_arena_grow_fn grow,
		    void *arg, struct kr_arena **arenap)
{
	struct kr_arena *a;
	extent_hooks_t *hp;
	size_t sz = sizeof(unsigned int);
	int rc;

	if (!base || !len || max < len || reserved >= len || !arenap)
		return -EINVAL;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->hooks.alloc = arena_extent_alloc;
	a->hooks.dalloc = arena_extent_dalloc;
	a->hooks.destroy = arena_extent_destroy;
	a->hooks.split = arena_extent_split;
	a->hooks.merge = arena_extent_merge;
	pthread_mutex_init(&a->lock, NULL);
	a->base = base;
	a->len = len;
	a->max = max;
	a->used = reserved; /* the bump pointer starts past the library's bytes */
	a->grow = grow;
	a->grow_arg = arg;
	hp = &a->hooks;
	rc = krje_mallctl("arenas.create", &a->ind, &sz, &hp, sizeof(hp));
	if (rc) {
		KR_ERR("pool", "jemalloc arenas.create: %s", strerror(rc));
		free(a);
		return -ENOMEM;
	}
	*arenap = a;
	return 0;
}

/* kr_arena_destroy() - drop the arena and everything in it (before the heap is unmapped). */
void kr_arena_destroy(struct kr_arena *a)
{
	char name[64];

	if (!a)
		return;
	snprintf(name, sizeof(name), "arena.%u.destroy", a->ind);
	if (krje_mallctl(name, NULL, NULL, NULL, 0))
		KR_WARN("pool", "jemalloc %s failed; its metadata leaks", name);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

void *kr_arena_alloc(struct kr_arena *a, size_t len, size_t align)
{
	void *p;

	p = krje_mallocx(len, (int)(MALLOCX_ARENA(a->ind) | MALLOCX_ALIGN(align) | KR_ARENA_FLAGS));
	if (!p)
		errno = ENOMEM;
	return p;
}

void kr_arena_free(struct kr_arena *a, void *p)
{
	if ((uint8_t *)p < a->base || (uint8_t *)p >= a->base + a->len) {
		KR_ERR_RATELIMITED("pool", "kr_free(%p): not from this job's heap; ignored", p);
		return;
	}
	krje_dallocx(p, KR_ARENA_FLAGS);
}

/* kr_arena_meta_first() - see job.h. */
const void *kr_arena_meta_first(const struct kr_arena *a)
{
	return a ? a->meta[0].addr : NULL;
}
