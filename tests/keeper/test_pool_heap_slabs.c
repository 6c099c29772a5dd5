/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kr_malloc's small blocks (job_heap_slabs.c): up to KR_SLAB_MAX_BYTES they
 * come from the heap's first pages and make no jemalloc arena; they are
 * 16-byte aligned, never overlap, are RDMA-ready (a READ lands in one), come
 * back for reuse (a page of one size serves any size once emptied); when the
 * pages are all taken the arena serves, and the slabs again once a block
 * comes back. The slabs take pages only as they need them, and none once
 * the arena is made: it starts past those taken, so a small heap loses
 * nothing to pages never used. A free of a pointer that is no block out (inside a block, in
 * a page never used, twice) is refused and changes nothing. Threads that
 * allocate and free at once get blocks of their own. A detach with blocks
 * out leaves nothing for the next attachment.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/virtqp/virtqp.h"
#include "kr_test.h"
#include "pool_fixture.h"

#define NTHREADS 4
#define ROUNDS	 2000

int krje_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

static struct kp_keeper K;

static unsigned int narenas(void)
{
	unsigned int n = 0;
	size_t len = sizeof(n);

	CHECK_OK(krje_mallctl("arenas.narenas", &n, &len, NULL, 0));
	return n;
}

static bool in_heap(const struct kr_ctx *ctx, const void *p, size_t len)
{
	return (const uint8_t *)p >= (const uint8_t *)ctx->heap &&
	       (const uint8_t *)p + len <= (const uint8_t *)ctx->heap + ctx->heap_len;
}

/* Sizes 1 to 4096, several of each: aligned, in the slabs, no arena, no overlap. */
static void test_small_no_arena(void)
{
	static const size_t sizes[] = {1, 8, 15, 16, 17, 64, 100, 512, 1000, 4095, 4096};
	enum { N = sizeof(sizes) / sizeof(sizes[0]), EACH = 5 };
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	unsigned int before = narenas();
	uint8_t *p[N][EACH];

	CHECK(ctx != NULL);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < EACH; j++) {
			p[i][j] = kr_malloc(ctx, sizes[i]);
			CHECK(p[i][j] != NULL);
			CHECK(((uintptr_t)p[i][j] & 15) == 0);
			CHECK(kr_heap_slabs_owns(ctx, p[i][j]));
			CHECK(in_heap(ctx, p[i][j], sizes[i]));
			memset(p[i][j], i * EACH + j + 1, sizes[i]);
		}
	CHECK(ctx->arena == NULL);
	CHECK_EQ(narenas(), before);
	for (int i = 0; i < N; i++) /* each still holds its own bytes: no two overlap */
		for (int j = 0; j < EACH; j++)
			for (size_t b = 0; b < sizes[i]; b++)
				if (p[i][j][b] != (uint8_t)(i * EACH + j + 1))
					KR_FAIL("block %d/%d (%zu bytes) overwritten at byte %zu",
						i, j, sizes[i], b);
	for (int i = 0; i < N; i++)
		for (int j = 0; j < EACH; j++)
			kr_free(ctx, p[i][j]);
	CHECK_EQ(ctx->slabs.allocs, ctx->slabs.frees);
	for (uint32_t i = 0; i < KR_SLAB_PAGES; i++) /* every page free again */
		CHECK_EQ(ctx->slabs.shift[i], 0);
	CHECK_OK(kr_detach(ctx));
}

/* A slab block is in the heap's MR: a READ through a vQP lands in one. */
static void test_rdma_into_slab(void)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	uint64_t *src, *dst;
	struct kr_mr_key key;
	struct kr_vqp *v;
	struct kr_mr *mr;
	struct kr_wc wc;
	int n = 0;

	CHECK(ctx != NULL);
	src = kr_malloc(ctx, 64);
	dst = kr_malloc(ctx, 8);
	CHECK(src && dst && kr_heap_slabs_owns(ctx, src) && kr_heap_slabs_owns(ctx, dst));
	mr = kr_reg_mr(ctx, src, 64, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	v = kp_connect_wait(ctx, KR_NODE_SELF);
	CHECK(v != NULL);
	src[0] = 0x6b72736c61627321ull;
	*dst = 0;
	CHECK_OK(kr_post_read(v, dst, 8, key.addr, key.rkey, 7, 0));
	for (double t0 = kp_now_ms(); n == 0 && kp_now_ms() - t0 < 5000;)
		n = kr_poll(v, &wc, 1);
	CHECK_EQ(n, 1);
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 7);
	CHECK_EQ(*dst, src[0]);
	CHECK(ctx->arena == NULL); /* the connect's own buffers came from the slabs too */
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_dereg_mr(mr));
	kr_free(ctx, src);
	kr_free(ctx, dst);
	CHECK_OK(kr_detach(ctx));
}

/* A block freed is the next of its size; a page emptied serves another size. */
static void test_reuse(void)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	uint8_t *blk[4096 / 16 + 1], *a, *b, *page;

	CHECK(ctx != NULL);
	a = kr_malloc(ctx, 64);
	kr_free(ctx, a);
	b = kr_malloc(ctx, 50);
	CHECK(a == b);
	kr_free(ctx, b);
	/* one page of 16-byte blocks, then one more from the next page */
	for (int i = 0; i < 4096 / 16 + 1; i++) {
		blk[i] = kr_malloc(ctx, 16);
		CHECK(blk[i] != NULL);
	}
	page = blk[0];
	CHECK(((uintptr_t)page & 4095) == 0);
	for (int i = 1; i < 4096 / 16; i++)
		CHECK(blk[i] == page + 16 * i);
	CHECK(blk[4096 / 16] < page || blk[4096 / 16] >= page + 4096);
	for (int i = 0; i < 4096 / 16; i++)
		kr_free(ctx, blk[i]);
	/* the emptied page takes a 4 KB block (the first free page) */
	a = kr_malloc(ctx, 4096);
	CHECK(a == page);
	kr_free(ctx, a);
	kr_free(ctx, blk[4096 / 16]);
	CHECK(ctx->arena == NULL);
	CHECK_OK(kr_detach(ctx));
}

/* All pages taken: the arena serves; a page back: the slabs serve again. */
static void test_full(void)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	uint8_t *pg[KR_SLAB_PAGES], *big, *over, *small;

	CHECK(ctx != NULL);
	for (uint32_t i = 0; i < KR_SLAB_PAGES; i++) {
		pg[i] = kr_malloc(ctx, 4096);
		CHECK(pg[i] && kr_heap_slabs_owns(ctx, pg[i]));
	}
	CHECK(ctx->arena == NULL);
	over = kr_malloc(ctx, 4096); /* no page left */
	CHECK(over != NULL);
	CHECK(!kr_heap_slabs_owns(ctx, over));
	CHECK(in_heap(ctx, over, 4096));
	CHECK(ctx->arena != NULL);
	small = kr_malloc(ctx, 16); /* no page for any size */
	CHECK(small && !kr_heap_slabs_owns(ctx, small));
	kr_free(ctx, small);
	big = kr_malloc(ctx, KR_SLAB_MAX_BYTES + 1); /* larger: the arena's, always */
	CHECK(big && !kr_heap_slabs_owns(ctx, big) && in_heap(ctx, big, KR_SLAB_MAX_BYTES + 1));
	memset(big, 0xa5, KR_SLAB_MAX_BYTES + 1);
	kr_free(ctx, pg[5]);
	small = kr_malloc(ctx, 16); /* the page that came back */
	CHECK(small == pg[5]);
	kr_free(ctx, small);
	for (uint32_t i = 0; i < KR_SLAB_PAGES; i++)
		if (i != 5)
			kr_free(ctx, pg[i]);
	kr_free(ctx, over);
	kr_free(ctx, big);
	CHECK_EQ(ctx->slabs.allocs, ctx->slabs.frees);
	CHECK_OK(kr_detach(ctx));
}

/* Pages as needed; the arena starts past them and the slabs take no more. */
static void test_sealed_by_arena(void)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	uint8_t *first, *big, *p;

	CHECK(ctx != NULL);
	CHECK_EQ(ctx->slabs.npages, 0);
	first = kr_malloc(ctx, 1024);
	CHECK(first == ctx->slabs.base);
	CHECK_EQ(ctx->slabs.npages, 1);
	big = kr_malloc(ctx, KR_SLAB_MAX_BYTES + 1); /* the arena, from past the one page */
	CHECK(big != NULL && ctx->arena != NULL);
	CHECK(!kr_heap_slabs_owns(ctx, big));
	CHECK(big >= first + 4096);
	/* the page's three other blocks still come from it, a fifth does not */
	for (int i = 1; i < 4; i++)
		CHECK(kr_malloc(ctx, 1024) == first + 1024 * i);
	p = kr_malloc(ctx, 1024);
	CHECK(p != NULL && !kr_heap_slabs_owns(ctx, p) && in_heap(ctx, p, 1024));
	CHECK_EQ(ctx->slabs.npages, 1);
	kr_free(ctx, p);
	kr_free(ctx, first + 1024);
	CHECK(kr_malloc(ctx, 1000) == first + 1024); /* what came back, again */
	kr_free(ctx, big);
	CHECK_OK(kr_detach(ctx));

	/* the arena first: no page ever */
	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	big = kr_malloc(ctx, KR_SLAB_MAX_BYTES + 1);
	CHECK(big != NULL);
	p = kr_malloc(ctx, 16);
	CHECK(p != NULL && !kr_heap_slabs_owns(ctx, p));
	CHECK_EQ(ctx->slabs.npages, 0);
	CHECK_EQ(ctx->slabs.allocs, 0);
	CHECK_OK(kr_detach(ctx));
}

/* Frees of what is no block out: refused, nothing changes. */
static void test_bad_frees(void)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	uint8_t *p, *q, *other;
	uint64_t frees;

	CHECK(ctx != NULL);
	p = kr_malloc(ctx, 64);
	q = kr_malloc(ctx, 64);
	CHECK(p && q && q == p + 64);
	frees = ctx->slabs.frees;
	CHECK_ERR(kr_heap_slabs_free(ctx, p + 16), -EINVAL); /* inside a block */
	kr_free(ctx, p + 16);
	CHECK_ERR(kr_heap_slabs_free(ctx, p + 4096), -EINVAL); /* a page never used */
	CHECK_ERR(kr_heap_slabs_free(ctx, p + 128), -EINVAL);  /* a block never out */
	CHECK_EQ(ctx->slabs.frees, frees);
	CHECK_EQ(ctx->slabs.used[0], 2);
	kr_free(ctx, p);
	CHECK_ERR(kr_heap_slabs_free(ctx, p), -EINVAL); /* twice */
	kr_free(ctx, p);
	CHECK_EQ(ctx->slabs.frees, frees + 1);
	CHECK_EQ(ctx->slabs.used[0], 1);
	other = malloc(64); /* not the heap's at all: ignored */
	CHECK(other != NULL);
	kr_free(ctx, other);
	free(other);
	/* the one block freed is handed out once, q never */
	CHECK(kr_malloc(ctx, 64) == p);
	CHECK(kr_malloc(ctx, 64) == q + 64);
	CHECK_OK(kr_detach(ctx));
}

struct worker {
	struct kr_ctx *ctx;
	unsigned int seed;
	int bad;
};

static void *churn(void *arg)
{
	struct worker *w = arg;
	uint8_t *held[8] = {0};
	size_t len[8] = {0};

	for (int r = 0; r < ROUNDS; r++) {
		int i = (int)(rand_r(&w->seed) % 8);
		uint8_t mark = (uint8_t)(w->seed | 1);

		if (held[i]) {
			for (size_t b = 0; b < len[i]; b++)
				w->bad += held[i][b] != held[i][0];
			kr_free(w->ctx, held[i]);
			held[i] = NULL;
			continue;
		}
		len[i] = 1 + rand_r(&w->seed) % KR_SLAB_MAX_BYTES;
		held[i] = kr_malloc(w->ctx, len[i]);
		if (!held[i]) {
			w->bad++;
			continue;
		}
		memset(held[i], mark, len[i]);
	}
	for (int i = 0; i < 8; i++)
		kr_free(w->ctx, held[i]);
	return NULL;
}

/* Threads allocate and free at once: nobody's block is written by another. */
static void test_threads(void)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	struct worker w[NTHREADS];
	pthread_t th[NTHREADS];

	CHECK(ctx != NULL);
	for (int i = 0; i < NTHREADS; i++) {
		w[i] = (struct worker){.ctx = ctx, .seed = 0x6b72u + (unsigned int)i};
		CHECK_OK(pthread_create(&th[i], NULL, churn, &w[i]));
	}
	for (int i = 0; i < NTHREADS; i++) {
		CHECK_OK(pthread_join(th[i], NULL));
		CHECK_EQ(w[i].bad, 0);
	}
	CHECK_EQ(ctx->slabs.allocs, ctx->slabs.frees);
	CHECK_OK(kr_detach(ctx));
}

/* A detach with blocks out; the next attachment's slabs start empty. */
static void test_detach_with_blocks(void)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	void *p;

	CHECK(ctx != NULL);
	CHECK(kr_malloc(ctx, 32) != NULL);
	CHECK(kr_malloc(ctx, 2000) != NULL);
	CHECK_OK(kr_detach(ctx));
	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	CHECK_EQ(ctx->slabs.allocs, 0);
	p = kr_malloc(ctx, 32);
	CHECK(p == ctx->slabs.base);
	kr_free(ctx, p);
	CHECK_OK(kr_detach(ctx));
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "2",
					   "--heap-mb", "4", "--hugepages", "32", NULL};

	kp_require_hugepages(40);
	kp_keeper_init(&K);
	CHECK_OK(kp_keeper_start(&K, args));
	test_small_no_arena();
	test_rdma_into_slab();
	test_reuse();
	test_full();
	test_sealed_by_arena();
	test_bad_frees();
	test_threads();
	test_detach_with_blocks();
	CHECK_OK(kp_keeper_stop(&K, SIGTERM));
	kp_keeper_fini(&K);
	KR_PASS("pool_heap_slabs");
}
