/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a fresh process's attach and first connect leave for later (krbench
 * elastic measures the time): the attach makes no kr_malloc arena, the first
 * kr_malloc past the small blocks (test_pool_heap_slabs) makes exactly one
 * even when four threads race for it, an attach
 * that never allocates detaches cleanly and the next attach allocates again;
 * a thread's first kr_connect maps its DCI's request tables as zero pages
 * that become resident only as requests use them (but for the first entry's
 * page, populated for the first post), and every request still
 * completes with the right bytes across the whole ring. What a fresh process
 * touches at once comes mapped in (a page fault each otherwise): the zone's
 * and the heap's hugepages at attach, the first jemalloc metadata pages with
 * the arena.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/kr_populate.h"
#include "job/virtqp/virtqp.h"
#include "kr_test.h"
#include "pool_fixture.h"

#define NTHREADS 4
#define ARENA_BLOCK (KR_SLAB_MAX_BYTES + 1) /* past the slabs: from the arena */

int krje_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

static struct kp_keeper K;
static pthread_barrier_t go;

struct racer {
	struct kr_ctx *ctx;
	void *p;
};

static void *race_malloc(void *arg)
{
	struct racer *r = arg;

	pthread_barrier_wait(&go);
	r->p = kr_malloc(r->ctx, ARENA_BLOCK);
	return NULL;
}

static unsigned int narenas(void)
{
	unsigned int n = 0;
	size_t len = sizeof(n);

	CHECK_OK(krje_mallctl("arenas.narenas", &n, &len, NULL, 0));
	return n;
}

/* Pages of [p, p + len) resident now. */
static size_t resident(const void *p, size_t len)
{
	size_t pages = (len + 4095) / 4096, n = 0;
	unsigned char vec[4096];

	CHECK(pages <= sizeof(vec));
	CHECK_OK(mincore((void *)p, len, vec));
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	return n;
}

/* Pages of [p, p + len) mapped in this process now (/proc/self/pagemap: bit 63). */
static size_t present(const void *p, size_t len)
{
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	CHECK(fd >= 0);
	for (uintptr_t va = (uintptr_t)p & ~4095ul; va < (uintptr_t)p + len; va += 4096) {
		uint64_t e = 0;

		CHECK_EQ(pread(fd, &e, sizeof(e), (off_t)(va / 4096 * sizeof(e))),
			 (ssize_t)sizeof(e));
		n += e >> 63;
	}
	close(fd);
	return n;
}

/* Does madvise(MADV_POPULATE_WRITE) work here (kr_populate.h)? */
static bool populate_works(void)
{
	void *q = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	bool ok;

	CHECK(q != MAP_FAILED);
	ok = kr_populate(q, 4096, 1) == 0;
	munmap(q, 4096);
	return ok;
}

static void test_mapped_in(void)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	const void *meta;
	bool populate;
	size_t head;
	void *p;

	CHECK(ctx != NULL);
	/* the job-writable hugepages (the zone's rings, the heap): not touched by
	 * the attach itself, mapped by it; each page fully */
	for (uint32_t i = 0; i < ctx->nregions; i++) {
		const struct kr_msg_region *r = &ctx->region[i];

		if (r->prot != (PROT_READ | PROT_WRITE))
			continue;
		if (present((void *)(uintptr_t)r->va, r->len) != r->len / 4096)
			KR_FAIL("region %u at %#lx: %zu of %lu pages mapped after the attach", i,
				(unsigned long)r->va, present((void *)(uintptr_t)r->va, r->len),
				(unsigned long)(r->len / 4096));
	}
	/* madvise's populate (Linux 5.14) reads in the zone head's descriptors
	 * and cache header (no hole: the keeper wrote them), not the cache's
	 * entries, and the arena's first metadata */
	populate = populate_works();
	if (!populate)
		printf("note: this kernel has no MADV_POPULATE_* (Linux < 5.14): the zone "
		       "head and the metadata pages fault in as they are used; not checked\n");
	head = ctx->zone->dct_off + sizeof(struct kr_dct_zone);
	if (populate && present(ctx->zone, head) != (head + 4095) / 4096)
		KR_FAIL("%zu of %zu zone head pages mapped after the attach",
			present(ctx->zone, head), (size_t)(head + 4095) / 4096);
	p = kr_malloc(ctx, ARENA_BLOCK);
	CHECK(p != NULL);
	meta = kr_arena_meta_first(ctx->arena);
	CHECK(meta != NULL);
	if (populate && present(meta, KR_ARENA_META_HOT) != KR_ARENA_META_HOT / 4096)
		KR_FAIL("%zu of %u first metadata pages mapped after the first kr_malloc",
			present(meta, KR_ARENA_META_HOT), KR_ARENA_META_HOT / 4096);
	kr_free(ctx, p);
	CHECK_OK(kr_detach(ctx));
}

static void test_lazy_arena(void)
{
	struct racer r[NTHREADS];
	pthread_t th[NTHREADS];
	struct kr_ctx *ctx;
	unsigned int before;

	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	CHECK(ctx->arena == NULL); /* nothing made at attach */
	CHECK_OK(kr_detach(ctx));  /* and nothing to undo */

	ctx = kp_attach(&K, 5000);
	CHECK(ctx != NULL);
	CHECK(ctx->arena == NULL);
	before = narenas();
	CHECK_OK(pthread_barrier_init(&go, NULL, NTHREADS));
	for (int i = 0; i < NTHREADS; i++) {
		r[i] = (struct racer){.ctx = ctx};
		CHECK_OK(pthread_create(&th[i], NULL, race_malloc, &r[i]));
	}
	for (int i = 0; i < NTHREADS; i++)
		CHECK_OK(pthread_join(th[i], NULL));
	pthread_barrier_destroy(&go);
	CHECK(ctx->arena != NULL);
	CHECK_EQ(narenas(), before + 1); /* one arena for all four */
	for (int i = 0; i < NTHREADS; i++) {
		CHECK(r[i].p != NULL);
		CHECK((uintptr_t)r[i].p >= (uintptr_t)ctx->heap &&
		      (uintptr_t)r[i].p < (uintptr_t)ctx->heap + ctx->heap_len);
		for (int j = 0; j < i; j++)
			CHECK(r[i].p != r[j].p);
		memset(r[i].p, i, ARENA_BLOCK);
	}
	for (int i = 0; i < NTHREADS; i++)
		kr_free(ctx, r[i].p);
	CHECK_OK(kr_detach(ctx));
}

static void test_tables_on_touch(void)
{
	struct kr_ctx *ctx = kp_attach(&K, 5000);
	uint64_t *src, *dst;
	struct kr_vqp *v;
	struct kr_vq_dci *d;
	size_t len, before;
	struct kr_mr *mr;
	struct kr_mr_key key;

	CHECK(ctx != NULL);
	src = kr_malloc(ctx, 4096);
	dst = kr_malloc(ctx, 4096);
	CHECK(src && dst);
	mr = kr_reg_mr(ctx, src, 4096, KR_MR_LOCAL_WRITE | KR_MR_REMOTE_READ);
	CHECK(mr != NULL);
	CHECK_OK(kr_mr_key(mr, &key));
	v = kp_connect_wait(ctx, KR_NODE_SELF);
	CHECK(v != NULL);
	d = v->dci;
	len = 2 * (size_t)d->cnt * sizeof(struct kr_vq_ent);
	CHECK(d->redo == d->ent + d->cnt);
	before = resident(d->ent, len);
	/* the page of the entry the first post writes comes mapped (a fault otherwise) */
	if (populate_works() && present(d->ent, sizeof(*d->ent)) != 1)
		KR_FAIL("the request table's first page is not mapped after the first connect");
	/* a fresh DCI's tables: at most the pages a connect touched, not all */
	if (before * 4096 >= len / 2)
		KR_FAIL("%zu of %zu table pages resident after the first connect", before,
			(len + 4095) / 4096);
	/* READs over the whole ring twice: each completes with its bytes */
	for (uint32_t i = 0; i < 2 * d->cnt; i++) {
		struct kr_wc wc;
		int n = 0;

		src[0] = 0x6b72000000000000ull + i;
		CHECK_OK(kr_post_read(v, dst, 8, key.addr, key.rkey, i, 0));
		for (double t0 = kp_now_ms(); n == 0 && kp_now_ms() - t0 < 5000;)
			n = kr_poll(v, &wc, 1);
		CHECK_EQ(n, 1);
		CHECK_EQ(wc.status, KR_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, i);
		CHECK_EQ(dst[0], src[0]);
	}
	CHECK(resident(d->ent, len) > before); /* the ring's pages came as they were used */
	CHECK_OK(kr_disconnect(v));
	CHECK_OK(kr_dereg_mr(mr));
	kr_free(ctx, src);
	kr_free(ctx, dst);
	CHECK_OK(kr_detach(ctx));
}

int main(void)
{
	static const char *const args[] = {"--tenants", "1", "--dcis",	    "4",  "--jobs", "2",
					   "--heap-mb", "4", "--hugepages", "32", NULL};

	kp_require_hugepages(40);
	kp_keeper_init(&K);
	CHECK_OK(kp_keeper_start(&K, args));
	test_lazy_arena();
	test_tables_on_touch();
	test_mapped_in();
	CHECK_OK(kp_keeper_stop(&K, SIGTERM));
	kp_keeper_fini(&K);
	KR_PASS("pool_first_use");
}
