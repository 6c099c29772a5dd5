/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The user_index table (devx_rsc.c) without a device: a job registers its
 * first DCI at the keeper's index, often in the thousands, in one step of
 * growth; entries survive every growth; alloc hands out the lowest free
 * index from 1 and grows when full; a taken index is refused, bad indexes
 * and types too, with the table unchanged.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "kr_test.h"

int main(void)
{
	struct kr_devx_ctx *ctx = calloc(1, sizeof(*ctx));
	int objs[4];
	uint32_t cap;

	CHECK(ctx != NULL);
	/* a far index first: the table grows once, to a whole step past it */
	CHECK_OK(kr_devx_rsc_set(ctx, 5000, KR_DEVX_RSC_QP, &objs[0]));
	CHECK_EQ(ctx->rsc_cap, 5120);
	CHECK(ctx->rsc[5000].obj == &objs[0]);
	CHECK_EQ(ctx->rsc[5000].type, KR_DEVX_RSC_QP);
	for (uint32_t i = 0; i < ctx->rsc_cap; i++)
		if (i != 5000)
			CHECK_EQ(ctx->rsc[i].type, KR_DEVX_RSC_NONE);
	/* taken, zero, past 24 bits, no object, no type: refused, nothing changed */
	cap = ctx->rsc_cap;
	CHECK_ERR(kr_devx_rsc_set(ctx, 5000, KR_DEVX_RSC_QP, &objs[1]), -EEXIST);
	CHECK_ERR(kr_devx_rsc_set(ctx, 0, KR_DEVX_RSC_QP, &objs[1]), -EINVAL);
	CHECK_ERR(kr_devx_rsc_set(ctx, 1u << 24, KR_DEVX_RSC_QP, &objs[1]), -EINVAL);
	CHECK_ERR(kr_devx_rsc_set(ctx, 7, KR_DEVX_RSC_QP, NULL), -EINVAL);
	CHECK_ERR(kr_devx_rsc_set(ctx, 7, KR_DEVX_RSC_NONE, &objs[1]), -EINVAL);
	CHECK_EQ(ctx->rsc_cap, cap);
	CHECK(ctx->rsc[5000].obj == &objs[0]);
	/* alloc: the lowest free index from 1 */
	CHECK_EQ(kr_devx_rsc_alloc(ctx, KR_DEVX_RSC_DCT, &objs[1]), 1);
	CHECK_EQ(kr_devx_rsc_alloc(ctx, KR_DEVX_RSC_QP, &objs[2]), 2);
	kr_devx_rsc_free(ctx, 1);
	CHECK_EQ(ctx->rsc[1].type, KR_DEVX_RSC_NONE);
	CHECK_EQ(kr_devx_rsc_alloc(ctx, KR_DEVX_RSC_QP, &objs[3]), 1);
	/* a farther index: grows again, the entries stay */
	CHECK_OK(kr_devx_rsc_set(ctx, 100000, KR_DEVX_RSC_QP, &objs[1]));
	CHECK(ctx->rsc_cap > 100000 && ctx->rsc_cap > cap);
	CHECK(ctx->rsc[5000].obj == &objs[0] && ctx->rsc[1].obj == &objs[3] &&
	      ctx->rsc[2].obj == &objs[2] && ctx->rsc[100000].obj == &objs[1]);
	CHECK_EQ(ctx->rsc[99999].type, KR_DEVX_RSC_NONE);
	/* alloc when every index is taken grows by one step */
	{
		struct kr_devx_ctx *small = calloc(1, sizeof(*small));

		CHECK(small != NULL);
		for (int i = 1; i < 64; i++)
			CHECK_EQ(kr_devx_rsc_alloc(small, KR_DEVX_RSC_QP, &objs[0]), i);
		CHECK_EQ(small->rsc_cap, 64);
		CHECK_EQ(kr_devx_rsc_alloc(small, KR_DEVX_RSC_QP, &objs[1]), 64);
		CHECK_EQ(small->rsc_cap, 128);
		CHECK(small->rsc[63].obj == &objs[0] && small->rsc[64].obj == &objs[1]);
		free(small->rsc);
		free(small);
	}
	free(ctx->rsc);
	free(ctx);
	KR_PASS("devx_rsc");
}
