/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A UAR page of its own for a QP whose holder maps the page.
 *
 * A doorbell names a QP, and the device takes it for any QP created on the
 * page it is written to: whoever can write a page can ring every QP on it,
 * and with BlueFlame post a whole WQE to one. libmlx5 44 has no call that
 * returns a page of its own: the non-cached type is one page per context,
 * and a BlueFlame allocation pops one of a page's two registers from a free
 * list (a fresh page puts both at its tail; a freed register goes back to
 * the tail). So a private page is both registers of one page, taken from
 * the list in turn: a register whose sibling is not next (someone holds it,
 * or it sits elsewhere in the list) goes back to the tail, and the walk
 * goes on until a page's two registers come one after the other, at the
 * latest when the list runs out and a fresh page is split. Without
 * BlueFlame only a dedicated non-cached page (libmlx5 >= 45) will do.
 */
#include <errno.h>

#include "devx/devx.h"

/* Registers taken before giving up: far more than a keeper holds unpaired. */
#define KR_UAR_PAIR_TRIES 64

static void uar_free(struct kr_devx_uar *uar)
{
	uar->ctx->ops->free_uar(uar);
}

int kr_devx_uar_alloc_private(struct kr_devx_ctx *ctx, struct kr_devx_uar **uarp)
{
	struct kr_devx_uar *a, *b;
	int rc;

	if (!ctx || !uarp)
		return -EINVAL;
	if (!ctx->caps.bf_reg_size)
		return ctx->ops->alloc_uar(ctx, KR_DEVX_UAR_NC_DEDICATED, uarp);
	rc = ctx->ops->alloc_uar(ctx, KR_DEVX_UAR_BLUEFLAME, &a);
	if (rc)
		return rc;
	for (int i = 0; i < KR_UAR_PAIR_TRIES; i++) {
		rc = ctx->ops->alloc_uar(ctx, KR_DEVX_UAR_BLUEFLAME, &b);
		if (rc) {
			uar_free(a);
			return rc;
		}
		if (b->page_id == a->page_id) {
			/* the lower register rings: every private page has it at 0x800 */
			struct kr_devx_uar *lo = a->reg_addr < b->reg_addr ? a : b;

			lo->sibling = lo == a ? b : a;
			*uarp = lo;
			return 0;
		}
		uar_free(a);
		a = b;
	}
	uar_free(a);
	return -EAGAIN;
}

void kr_devx_uar_free_private(struct kr_devx_uar *uar)
{
	struct kr_devx_uar *sibling;

	if (!uar)
		return;
	sibling = uar->sibling;
	uar->sibling = NULL;
	/* in this order, the two go back to the list's tail one after the other */
	uar_free(uar);
	if (sibling)
		uar_free(sibling);
}
