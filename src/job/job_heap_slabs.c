/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The heap's small blocks before jemalloc: kr_malloc of up to
 * KR_SLAB_MAX_BYTES comes from pages after the library's bytes (up to
 * KR_SLAB_PAGES, taken one by one as needed), each page cut into blocks of
 * one power-of-two size, so a process
 * that allocates a few small buffers (a new function or rank: its READ
 * target, a port's scratch words) never makes the jemalloc arena. Making one
 * is most of a fresh process's first kr_malloc: jemalloc's controls and the
 * arena's tables, ~40 pages written the first time (0.5-0.7 ms where the
 * hypervisor traps page faults). Larger blocks, and small ones once the
 * pages are all taken, come from the arena (job_malloc.c), which starts
 * past the pages taken when it is made: from then on the slabs take no
 * new page (sealed), so a small heap loses nothing to pages never used.
 *
 * What a page holds and which blocks are out is kept here, in process
 * memory, never in the heap: the heap is RDMA memory that peers holding its
 * rkey may write, so nothing kr_malloc trusts lies in it (as jemalloc's
 * metadata, job_arena.c). A page whose blocks all came back is free again,
 * for any size. A free of a pointer that is no block handed out (inside a
 * block, a page never used, freed twice) is refused and logged: the pages
 * stay as they were.
 *
 * Locking: slabs->lock for every field but base (set at attach); npages
 * also read without it (kr_heap_slabs_owns: release/acquire), and it only
 * grows, before the seal.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/kr_log.h"
#include "job/job.h"

#define SLAB_PAGE	 4096u
#define SLAB_MIN_SHIFT	 4u /* 16 bytes: kr_malloc's alignment */
#define SLAB_MAX_SHIFT	 12u
#define SLAB_PAGE_BLOCKS (SLAB_PAGE >> SLAB_MIN_SHIFT)

_Static_assert(KR_SLAB_MAX_BYTES == 1u << SLAB_MAX_SHIFT, "largest block");
_Static_assert(sizeof(((struct kr_heap_slabs *)0)->map[0]) * 8 == SLAB_PAGE_BLOCKS,
	       "a page's map has a bit per smallest block");
_Static_assert(KR_HEAP_LIB_BYTES % SLAB_PAGE == 0, "the pages start page aligned");

/* kr_heap_slabs_init() - see job.h. */
void kr_heap_slabs_init(struct kr_ctx *ctx)
{
	struct kr_heap_slabs *s = &ctx->slabs;

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	/* the arena keeps what is left: at least a page past the slabs */
	if (ctx->heap && ctx->heap_len >= KR_HEAP_LIB_BYTES + KR_SLAB_BYTES + SLAB_PAGE)
		s->base = (uint8_t *)ctx->heap + KR_HEAP_LIB_BYTES;
}

/* kr_heap_slabs_fini() - see job.h. */
void kr_heap_slabs_fini(struct kr_ctx *ctx)
{
	pthread_mutex_destroy(&ctx->slabs.lock);
}

/* kr_heap_slabs_seal() - see job.h. */
uint64_t kr_heap_slabs_seal(struct kr_ctx *ctx)
{
	struct kr_heap_slabs *s = &ctx->slabs;
	uint32_t n;

	pthread_mutex_lock(&s->lock);
	s->sealed = true;
	n = s->npages;
	pthread_mutex_unlock(&s->lock);
	return KR_HEAP_LIB_BYTES + (uint64_t)n * SLAB_PAGE;
}

/* The shift of the block size len takes. */
static uint32_t slab_shift(size_t len)
{
	uint32_t s = len <= 1 ? 0 : 64 - (uint32_t)__builtin_clzll((uint64_t)len - 1);

	return s < SLAB_MIN_SHIFT ? SLAB_MIN_SHIFT : s;
}

/*
 * lock held: a page of blocks of 1 << shift with one free, else a free page
 * or a new one (unsealed) made one; -1: none.
 */
static int slab_page_with_room(struct kr_heap_slabs *s, uint32_t shift)
{
	uint32_t blocks = SLAB_PAGE >> shift;
	int spare = -1;

	for (uint32_t i = 0; i < s->npages; i++) {
		if (s->shift[i] == shift && s->used[i] < blocks)
			return (int)i;
		if (!s->shift[i] && spare < 0)
			spare = (int)i;
	}
	if (spare < 0 && !s->sealed && s->npages < KR_SLAB_PAGES) {
		spare = (int)s->npages;
		__atomic_store_n(&s->npages, s->npages + 1, __ATOMIC_RELEASE);
	}
	if (spare >= 0)
		s->shift[spare] = (uint8_t)shift;
	return spare;
}

/* kr_heap_slabs_alloc() - see job.h. */
void *kr_heap_slabs_alloc(struct kr_ctx *ctx, size_t len)
{
	struct kr_heap_slabs *s = &ctx->slabs;
	uint32_t shift, bit = 0;
	uint64_t *map;
	int page;

	if (!s->base || !len || len > KR_SLAB_MAX_BYTES)
		return NULL;
	shift = slab_shift(len);
	pthread_mutex_lock(&s->lock);
	if (s->full & (1u << (shift - SLAB_MIN_SHIFT))) {
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	page = slab_page_with_room(s, shift);
	if (page < 0) {
		s->full |= 1u << (shift - SLAB_MIN_SHIFT); /* until a block or page comes back */
		pthread_mutex_unlock(&s->lock);
		return NULL;
	}
	map = s->map[page];
	for (uint32_t w = 0; w < SLAB_PAGE_BLOCKS / 64; w++) {
		if (~map[w]) {
			bit = w * 64 + (uint32_t)__builtin_ctzll(~map[w]);
			break;
		}
	}
	map[bit / 64] |= 1ull << (bit % 64);
	s->used[page]++;
	s->allocs++;
	pthread_mutex_unlock(&s->lock);
	return s->base + (size_t)page * SLAB_PAGE + ((size_t)bit << shift);
}

/* kr_heap_slabs_owns() - see job.h. */
bool kr_heap_slabs_owns(const struct kr_ctx *ctx, const void *p)
{
	const uint8_t *b = ctx->slabs.base;
	uint32_t n = __atomic_load_n(&ctx->slabs.npages, __ATOMIC_ACQUIRE);

	return b && (const uint8_t *)p >= b && (const uint8_t *)p < b + (size_t)n * SLAB_PAGE;
}

/* kr_heap_slabs_free() - see job.h. */
int kr_heap_slabs_free(struct kr_ctx *ctx, void *p)
{
	struct kr_heap_slabs *s = &ctx->slabs;
	uintptr_t at = (uintptr_t)p, b = (uintptr_t)s->base;
	size_t off = b && at >= b ? at - b : SIZE_MAX;
	uint32_t page = off < KR_SLAB_BYTES ? (uint32_t)(off / SLAB_PAGE) : KR_SLAB_PAGES;
	uint32_t shift, bit;
	const char *why = NULL;

	pthread_mutex_lock(&s->lock);
	shift = page < s->npages ? s->shift[page] : 0;
	if (!shift) {
		why = "a page with no block out";
	} else if (off % SLAB_PAGE & ((1u << shift) - 1)) {
		why = "inside a block, not its start";
	} else {
		bit = (uint32_t)(off % SLAB_PAGE) >> shift;
		if (!(s->map[page][bit / 64] & (1ull << (bit % 64)))) {
			why = "a block not out (freed twice?)";
		} else {
			s->map[page][bit / 64] &= ~(1ull << (bit % 64));
			if (!--s->used[page])
				s->shift[page] = 0; /* free again, for any size */
			s->full = 0;
			s->frees++;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (why) {
		KR_ERR_RATELIMITED("pool", "kr_free(%p): %s; ignored", p, why);
		return -EINVAL;
	}
	return 0;
}
