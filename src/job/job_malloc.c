/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kr_malloc and kr_free: the job's heap, RDMA-ready memory (the keeper
 * registered it as the job's own MR). Blocks of up to KR_SLAB_MAX_BYTES come
 * from the heap's first pages (job_heap_slabs.c) while they have room; the
 * rest from the jemalloc arena over the heap (job_arena.c), made when first
 * needed: creating a jemalloc arena is most of what a fresh process's attach
 * would cost otherwise (its first mallctl sets up jemalloc's control
 * tables), and a job that allocates only a few small buffers, or posts only
 * from registered files, never needs one. kr_malloc fails at once with
 * ENOTCONN once the keeper is gone, without a syscall while its heartbeat
 * is fresh.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <krcore/krcore.h>

#include "job/job.h"

/* ctx's arena, made on first use. NULL with errno set when it cannot be. */
static struct kr_arena *job_arena(struct kr_ctx *ctx)
{
	struct kr_arena *a = __atomic_load_n(&ctx->arena, __ATOMIC_ACQUIRE);
	int rc = 0;

	if (a)
		return a;
	pthread_mutex_lock(&ctx->arena_lock);
	a = ctx->arena;
	if (!a)
		rc = kr_arena_create(ctx->heap, ctx->heap_len, ctx->heap_max,
				     kr_heap_slabs_seal(ctx), kr_job_heap_grow, ctx, &a);
	if (!rc)
		__atomic_store_n(&ctx->arena, a, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ctx->arena_lock);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	return a;
}

void *kr_malloc(struct kr_ctx *ctx, size_t len)
{
	struct kr_arena *a;
	void *p;

	if (!ctx || !len || !ctx->heap) {
		errno = EINVAL;
		return NULL;
	}
	if (kr_job_keeper_gone_fast(ctx)) {
		errno = ENOTCONN;
		return NULL;
	}
	p = kr_heap_slabs_alloc(ctx, len); /* NULL past its sizes or when full */
	if (p)
		return p;
	a = job_arena(ctx);
	return a ? kr_arena_alloc(a, len, 16) : NULL;
}

/*
 * The heap stays mapped until kr_detach() even when the keeper is gone, so
 * freeing into it is safe then too.
 */
void kr_free(struct kr_ctx *ctx, void *p)
{
	if (!ctx || !p)
		return;
	if (kr_heap_slabs_owns(ctx, p))
		(void)kr_heap_slabs_free(ctx, p);
	else if (ctx->arena)
		kr_arena_free(ctx->arena, p);
}
