/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim hands out UARs as rdma-core 44's mlx5dv_devx_alloc_uar does, so a
 * keeper that would get one page for every DCI on a ConnectX gets it here
 * too. Checked: the host advertises BlueFlame (cap.bf, 512-byte registers);
 * the non-cached type is one page per context, the same on every call; a
 * dedicated non-cached page is refused (EOPNOTSUPP) unless the host models
 * rdma-core 45, where each call gets a page of its own; BlueFlame registers
 * come two to a page, at 0x800 and 0x800 + bf_reg_size, from a free list
 * that a fresh page fills in order and a freed register rejoins at the tail.
 * A QP takes doorbells written at either register of its page (plain and
 * BlueFlame copies), and none written elsewhere in the page.
 * kr_devx_uar_alloc_private gets both registers of one page, also when the
 * list's head is a register whose sibling someone holds.
 * Fails on 042d048's sim: cap.bf 0, a fresh page per call of any type.
 */
#include <errno.h>
#include <stdint.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN (64u << 10)
#define KEY	0x6b72756172626c66ull
#define WORD	0x2000u
#define REG0	0x800u
#define REG1	(0x800u + 512u)

static uint32_t reg_off(const struct kr_devx_uar *u)
{
	return kr_devx_uar_reg_off(u);
}

static struct kr_devx_uar *bf(struct kr_fx_host *h)
{
	struct kr_devx_uar *u;

	CHECK_OK(h->ctx->ops->alloc_uar(h->ctx, KR_DEVX_UAR_BLUEFLAME, &u));
	CHECK_EQ(u->bf_size, 256);
	return u;
}

/* One WRITE of 8 bytes by dci, rung through uar; true when it completed. */
static bool write_through(struct kr_fx_host *A, struct kr_devx_qp *dci, struct kr_devx_uar *uar,
			  struct kr_devx_wr *wr, volatile uint64_t *word, uint64_t id)
{
	struct kr_devx_uar *own = dci->uar;
	struct kr_devx_wc wc;
	int n;

	*word = 7;
	wr->wr_id = id;
	CHECK_OK(kr_devx_qp_post_send(dci, wr));
	dci->uar = uar;
	kr_devx_qp_ring(dci);
	dci->uar = own;
	n = kr_fx_poll_none(&A->scq, 0);
	if (!n && kr_fx_poll_one(&A->scq, &wc, 300) == -ETIMEDOUT)
		return false;
	return true;
}

static void doorbells(struct kr_fx_host *A, struct kr_fx_host *B, struct kr_devx_uar *r0,
		      struct kr_devx_uar *r1)
{
	struct kr_devx_uar *host_uar = A->uar, stray;
	struct kr_devx_qp_conn conn;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_dc_av av;
	struct kr_devx_qp dci;
	struct kr_devx_wc wc;
	struct kr_devx_sge sge;
	struct kr_devx_wr wr;
	volatile uint64_t *word = (volatile uint64_t *)((uint8_t *)B->mem + WORD);

	A->uar = r1; /* the DCI is created on the page of register 1 */
	kr_fx_conn_default(&conn);
	CHECK_OK(kr_fx_dci_create(A, &dci, &conn));
	A->uar = host_uar;
	CHECK_OK(kr_fx_dct_create(B, &srq, &dct, KEY));
	*(uint64_t *)A->mem = 0x1111222233334444ull;
	sge = kr_fx_sge(A, 0, 8);
	kr_fx_dc_av(A, B, &dct, &av);
	wr = kr_fx_dc_write(B, &sge, &av, (uintptr_t)word, 0);

	/* each register, each of its two buffers (a ring flips to the other) */
	for (uint64_t i = 1; i <= 4; i++) {
		CHECK(write_through(A, &dci, i & 1 ? r1 : r0, &wr, word, i));
		CHECK_EQ(*word, 0x1111222233334444ull);
	}
	/* two WQEs in one ring: the plain doorbell, not a BlueFlame copy */
	wr.wr_id = 5;
	CHECK_OK(kr_devx_qp_post_send(&dci, &wr));
	wr.wr_id = 6;
	CHECK_OK(kr_devx_qp_post_send(&dci, &wr));
	kr_devx_qp_ring(&dci);
	kr_fx_expect_wc(&A->scq, 5, KR_WC_SUCCESS, dci.qpn, &wc);
	kr_fx_expect_wc(&A->scq, 6, KR_WC_SUCCESS, dci.qpn, &wc);

	/* a write below the registers rings nothing; the right place then does */
	stray = *r0;
	stray.reg_addr = (uint8_t *)r0->base_addr + 0x100;
	stray.bf_size = 0;
	CHECK(!write_through(A, &dci, &stray, &wr, word, 7));
	CHECK_EQ(*word, 7);
	A->ctx->ops->doorbell(r0, 0);
	kr_fx_expect_wc(&A->scq, 7, KR_WC_SUCCESS, dci.qpn, &wc);
	CHECK_EQ(*word, 0x1111222233334444ull);

	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
}

int main(void)
{
	struct kr_fx_host A, B, C;
	struct kr_devx_uar *nc, *r1, *r2, *r3, *r4, *r5, *lone, *priv, *d1, *d2, *nc45;

	CHECK_OK(kr_fx_host_open(&A, "sim:uar_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:uar_b", MEM_LEN));
	CHECK_EQ(A.ctx->caps.bf_reg_size, 512);

	/* non-cached: the context's one page (the fixture's A.uar is it) */
	CHECK_OK(A.ctx->ops->alloc_uar(A.ctx, 0, &nc));
	CHECK_EQ(nc->page_id, A.uar->page_id);
	CHECK_EQ(reg_off(nc), REG0);
	CHECK_EQ(nc->bf_size, 0);
	CHECK_ERR(A.ctx->ops->alloc_uar(A.ctx, KR_DEVX_UAR_NC_DEDICATED, &d1), -EOPNOTSUPP);
	CHECK_ERR(
	    A.ctx->ops->alloc_uar(A.ctx, KR_DEVX_UAR_BLUEFLAME | KR_DEVX_UAR_NC_DEDICATED, &d1),
	    -EOPNOTSUPP);

	/* BlueFlame: two registers to a page, handed out in turn */
	r1 = bf(&A);
	r2 = bf(&A);
	r3 = bf(&A);
	CHECK_EQ(r1->page_id, r2->page_id);
	CHECK(r1->page_id != nc->page_id);
	CHECK_EQ(reg_off(r1), REG0);
	CHECK_EQ(reg_off(r2), REG1);
	CHECK(r3->page_id != r1->page_id && r3->page_id != nc->page_id);
	CHECK_EQ(reg_off(r3), REG0);
	/* a freed register rejoins at the tail: r3's sibling comes first */
	A.ctx->ops->free_uar(r1);
	r4 = bf(&A);
	CHECK_EQ(r4->page_id, r3->page_id);
	CHECK_EQ(reg_off(r4), REG1);
	r5 = bf(&A);
	CHECK_EQ(r5->page_id, r2->page_id);
	CHECK_EQ(reg_off(r5), REG0);

	doorbells(&A, &B, r5, r2);

	/* a page of its own: both registers of one page, past a lone register
	 * whose sibling is held (lone: the first register of a fresh page) */
	lone = bf(&A);
	CHECK_EQ(reg_off(lone), REG0);
	CHECK_OK(kr_devx_uar_alloc_private(A.ctx, &priv));
	CHECK(priv->sibling != NULL);
	CHECK_EQ(priv->sibling->page_id, priv->page_id);
	CHECK_EQ(reg_off(priv), REG0);
	CHECK_EQ(reg_off(priv->sibling), REG1);
	CHECK(priv->page_id != lone->page_id && priv->page_id != r2->page_id &&
	      priv->page_id != r3->page_id && priv->page_id != nc->page_id);
	kr_devx_uar_free_private(priv);
	/* freed, the pair comes back as a pair */
	CHECK_OK(kr_devx_uar_alloc_private(A.ctx, &d1));
	CHECK_EQ(d1->sibling->page_id, d1->page_id);
	kr_devx_uar_free_private(d1);

	/* rdma-core 45: a dedicated page per call; NC still the one page */
	CHECK_OK(kr_fx_host_open(&C, "sim:uar_c,libmlx5=45", MEM_LEN));
	CHECK_OK(C.ctx->ops->alloc_uar(C.ctx, KR_DEVX_UAR_NC_DEDICATED, &d1));
	CHECK_OK(C.ctx->ops->alloc_uar(C.ctx, KR_DEVX_UAR_NC_DEDICATED, &d2));
	CHECK_OK(C.ctx->ops->alloc_uar(C.ctx, 0, &nc45));
	CHECK(d1->page_id != d2->page_id && d1->page_id != C.uar->page_id &&
	      d2->page_id != C.uar->page_id);
	CHECK_EQ(nc45->page_id, C.uar->page_id);
	CHECK_EQ(reg_off(d1), REG0);
	CHECK_EQ(d1->bf_size, 0);
	C.ctx->ops->free_uar(d1);
	C.ctx->ops->free_uar(d2);
	C.ctx->ops->free_uar(nc45);
	kr_fx_host_close(&C);

	A.ctx->ops->free_uar(lone);
	A.ctx->ops->free_uar(r5);
	A.ctx->ops->free_uar(r4);
	A.ctx->ops->free_uar(r3);
	A.ctx->ops->free_uar(r2);
	A.ctx->ops->free_uar(nc);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_uar_alloc_libmlx5");
}
