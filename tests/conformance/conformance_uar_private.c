/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: the UAR page a fenced keeper gives each DCI
 * (kr_devx_uar_alloc_private) is a page of its own under rdma-core 44's
 * mlx5dv_devx_alloc_uar, which the recording device follows from its source
 * (providers/mlx5/verbs.c: the NC type returns the context's singleton page;
 * BlueFlame pops a register of dyn_uar_bf_list, a fresh page adding its two
 * registers at 0x800 and 0x800 + bf_reg_size to the tail, a freed register
 * going back to the tail). Checked: both registers of one page, the lower
 * one ringing; a lone register at the list's head (its sibling held by
 * someone else) is passed over and stays free for the next caller; two
 * private pages differ and differ from the NC page; without BlueFlame only
 * rdma-core 45's dedicated type will do, and libmlx5 44 gets EOPNOTSUPP;
 * when the device runs out of pages the error comes back and nothing stays
 * held.
 */
#include <errno.h>

#include "conf_fixture.h"
#include "kr_test.h"

static uint32_t off(const struct kr_devx_uar *u)
{
	return kr_devx_uar_reg_off(u);
}

int main(void)
{
	struct kr_devx_uar *nc, *lone, *p1, *p2, *next, *ded, *all[CONF_UAR_PAGES];
	struct conf_dev *d = calloc(1, sizeof(*d));
	uint32_t n;

	CHECK(d != NULL);
	conf_dev_init(d, true);
	CHECK_OK(d->ctx.ops->alloc_uar(&d->ctx, 0, &nc));

	/* a lone register heads the list: its page is not this caller's */
	CHECK_OK(d->ctx.ops->alloc_uar(&d->ctx, KR_DEVX_UAR_BLUEFLAME, &lone));
	CHECK_OK(kr_devx_uar_alloc_private(&d->ctx, &p1));
	CHECK(p1->sibling != NULL);
	CHECK_EQ(p1->sibling->page_id, p1->page_id);
	CHECK_EQ(off(p1), 0x800);
	CHECK_EQ(off(p1->sibling), 0x800 + CONF_BF_REG);
	CHECK_EQ(p1->bf_size, CONF_BF_REG / 2);
	CHECK(p1->page_id != lone->page_id && p1->page_id != nc->page_id);
	/* the lone register's sibling went back to the list, for the next caller */
	CHECK_OK(d->ctx.ops->alloc_uar(&d->ctx, KR_DEVX_UAR_BLUEFLAME, &next));
	CHECK_EQ(next->page_id, lone->page_id);
	CHECK_EQ(off(next), 0x800 + CONF_BF_REG);
	CHECK_OK(kr_devx_uar_alloc_private(&d->ctx, &p2));
	CHECK(p2->page_id != p1->page_id && p2->page_id != lone->page_id);
	CHECK_EQ(p2->sibling->page_id, p2->page_id);
	/* freed, a private page comes back whole */
	n = p1->page_id;
	kr_devx_uar_free_private(p1);
	CHECK_OK(kr_devx_uar_alloc_private(&d->ctx, &p1));
	CHECK_EQ(p1->page_id, n);
	CHECK_EQ(p1->sibling->page_id, n);

	/* out of pages: the error, and every register it took is free again */
	n = 0;
	while (n < CONF_UAR_PAGES && !kr_devx_uar_alloc_private(&d->ctx, &all[n]))
		n++;
	CHECK(n < CONF_UAR_PAGES);
	CHECK_ERR(kr_devx_uar_alloc_private(&d->ctx, &ded), -ENOMEM);
	CHECK_EQ(d->bf_len, 0);
	while (n)
		kr_devx_uar_free_private(all[--n]);
	kr_devx_uar_free_private(p2);
	kr_devx_uar_free_private(p1);
	d->ctx.ops->free_uar(next);
	d->ctx.ops->free_uar(lone);
	d->ctx.ops->free_uar(nc);

	/* no BlueFlame: rdma-core 44 has no page of its own to give */
	conf_dev_init(d, true);
	CHECK_OK(d->ctx.ops->alloc_uar(&d->ctx, 0, &nc));
	d->ctx.caps.bf_reg_size = 0;
	CHECK_ERR(kr_devx_uar_alloc_private(&d->ctx, &ded), -EOPNOTSUPP);
	d->libmlx5 = 45;
	CHECK_OK(kr_devx_uar_alloc_private(&d->ctx, &ded));
	CHECK(ded->sibling == NULL);
	CHECK(ded->page_id != nc->page_id);
	CHECK_EQ(off(ded), 0x800);
	CHECK_EQ(ded->bf_size, 0);
	CHECK_OK(kr_devx_uar_alloc_private(&d->ctx, &p1));
	CHECK(p1->page_id != ded->page_id);
	kr_devx_uar_free_private(p1);
	kr_devx_uar_free_private(ded);
	d->ctx.ops->free_uar(nc);
	free(d);
	KR_PASS("conformance_uar_private");
}
