/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * user_index table: the CQ poller maps a CQE's srqn_uidx (cqe_version 1) to the
 * QP or DCT it belongs to. Process-local, grown on demand; index 0 is never
 * handed out so a zeroed field never names a resource. Control-path only: the
 * caller serialises these calls with its other commands on the same ctx.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"

#define KR_RSC_MIN_CAP	 64u
#define KR_RSC_MAX_INDEX 0xffffffu /* qpc.user_index / dctc.user_index are 24 bits */
#define KR_RSC_STEP	 1024u

/*
 * Room for index need - 1 at least: one new table, twice the old one or,
 * when that is not enough, need rounded up to KR_RSC_STEP entries, zeroed by
 * calloc, which touches no fresh page. A job's first DCI names the keeper's
 * user index, often in the thousands: doubling there with realloc and
 * memset faulted in every page of every step, and a power of two past 4,096
 * (128 KB) is a mapping of its own (1.5 us here), both on a thread's first
 * connect.
 */
static int kr_devx_rsc_grow(struct kr_devx_ctx *ctx, uint64_t need)
{
	uint64_t cap = ctx->rsc_cap ? 2ull * ctx->rsc_cap : KR_RSC_MIN_CAP;
	struct kr_devx_rsc *rsc;

	if (ctx->rsc_cap > KR_RSC_MAX_INDEX || need > KR_RSC_MAX_INDEX + 1ull)
		return -ENOMEM;
	if (cap < need)
		cap = (need + KR_RSC_STEP - 1) / KR_RSC_STEP * KR_RSC_STEP;
	if (cap > KR_RSC_MAX_INDEX + 1ull)
		cap = KR_RSC_MAX_INDEX + 1ull;
	rsc = calloc(cap, sizeof(*rsc));
	if (!rsc)
		return -ENOMEM;
	if (ctx->rsc_cap)
		memcpy(rsc, ctx->rsc, (size_t)ctx->rsc_cap * sizeof(*rsc));
	free(ctx->rsc);
	ctx->rsc = rsc;
	ctx->rsc_cap = (uint32_t)cap;
	return 0;
}

/*
 * kr_devx_rsc_alloc() - register obj for CQE dispatch. Returns the user_index
 * (1..0xffffff), -EINVAL (no ctx/obj, type NONE) or -ENOMEM (table full or
 * allocation failure).
 */
int kr_devx_rsc_alloc(struct kr_devx_ctx *ctx, enum kr_devx_rsc_type type, void *obj)
{
	uint32_t i;
	int rc;

	if (!ctx || !obj || type == KR_DEVX_RSC_NONE)
		return -EINVAL;
	for (i = 1; i < ctx->rsc_cap; i++)
		if (ctx->rsc[i].type == KR_DEVX_RSC_NONE)
			break;
	if (i >= ctx->rsc_cap) {
		rc = kr_devx_rsc_grow(ctx, (uint64_t)i + 1);
		if (rc)
			return rc;
	}
	ctx->rsc[i].type = type;
	ctx->rsc[i].obj = obj;
	return (int)i;
}

/* kr_devx_rsc_free() - release a user_index; unknown or 0 indexes are ignored. */
void kr_devx_rsc_free(struct kr_devx_ctx *ctx, uint32_t user_index)
{
	if (!ctx || user_index == 0 || user_index >= ctx->rsc_cap)
		return;
	ctx->rsc[user_index].type = KR_DEVX_RSC_NONE;
	ctx->rsc[user_index].obj = NULL;
}

int kr_devx_rsc_set(struct kr_devx_ctx *ctx, uint32_t user_index, enum kr_devx_rsc_type type,
		    void *obj)
{
	int rc;

	if (!ctx || !obj || type == KR_DEVX_RSC_NONE || user_index == 0 ||
	    user_index > KR_RSC_MAX_INDEX)
		return -EINVAL;
	if (user_index >= ctx->rsc_cap) {
		rc = kr_devx_rsc_grow(ctx, (uint64_t)user_index + 1);
		if (rc)
			return rc;
	}
	if (ctx->rsc[user_index].type != KR_DEVX_RSC_NONE)
		return -EEXIST;
	ctx->rsc[user_index].type = type;
	ctx->rsc[user_index].obj = obj;
	return 0;
}
