/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kr_malloc and kr_free: the job's heap, RDMA-ready memory (the keeper
 * registered it as the job's own MR), from the jemalloc arena over it
 * (job_arena.c). kr_malloc fails at once with ENOTCONN once the keeper is
 * gone, without a syscall while its heartbeat is fresh.
 */
#include <errno.h>
#include <stdlib.h>

#include <krcore/krcore.h>

#include "job/job.h"

void *kr_malloc(struct kr_ctx *ctx, size_t len)
{
	if (!ctx || !len || !ctx->arena) {
		errno = EINVAL;
		return NULL;
	}
	if (kr_job_keeper_gone_fast(ctx)) {
		errno = ENOTCONN;
		return NULL;
	}
	return kr_arena_alloc(ctx->arena, len, 16);
}

/*
 * The heap stays mapped until kr_detach() even when the keeper is gone, so
 * freeing into it is safe then too.
 */
void kr_free(struct kr_ctx *ctx, void *p)
{
	if (!ctx || !p || !ctx->arena)
		return;
	kr_arena_free(ctx->arena, p);
}
