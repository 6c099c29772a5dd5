/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim refuses what hardware refuses: a QP takes new WQEs only when the
 * UAR page it was created on is rung. A WRITE posted on a DCI of page P (its
 * doorbell record advanced) and rung through another page Q, as a job of
 * another tenant rings its own page, is not executed: no completion, the
 * target keeps its bytes, however often Q is rung. Rung through P it runs.
 * Mutation check: with the engine reading every QP's doorbell record on any
 * ring (the gate in sim_req.c removed), the WRITE runs on Q's ring and this
 * test fails.
 */
#include <stdint.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN (64u << 10)
#define KEY	0x6b7266626c6c6b79ull
#define WORD	0x2000u

int main(void)
{
	struct kr_fx_host A, B;
	struct kr_devx_qp_conn conn;
	struct kr_devx_uar *own, *other;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_dc_av av;
	struct kr_devx_qp dci;
	struct kr_devx_wc wc;
	struct kr_devx_sge sge;
	struct kr_devx_wr wr;
	volatile uint64_t *word;

	CHECK_OK(kr_fx_host_open(&A, "sim:bell_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:bell_b", MEM_LEN));
	CHECK_OK(kr_devx_uar_alloc_private(A.ctx, &other)); /* page Q: another DCI's own */
	CHECK(other->page_id != A.uar->page_id);
	kr_fx_conn_default(&conn);
	CHECK_OK(kr_fx_dci_create(&A, &dci, &conn)); /* on page P, A.uar */
	CHECK_OK(kr_fx_dct_create(&B, &srq, &dct, KEY));
	word = (volatile uint64_t *)((uint8_t *)B.mem + WORD);
	*word = 7;
	*(uint64_t *)A.mem = 0x4242424242424242ull;

	sge = kr_fx_sge(&A, 0, 8);
	kr_fx_dc_av(&A, &B, &dct, &av);
	wr = kr_fx_dc_write(&B, &sge, &av, (uintptr_t)word, 0);
	/* first a WRITE rung as it should be: the DCI's send queue is running */
	*word = 0;
	CHECK_EQ(kr_fx_post_wait(&A, &dci, &wr, 10000), KR_WC_SUCCESS);
	CHECK_EQ(*word, 0x4242424242424242ull);
	*word = 7;
	wr.wr_id = 1;
	CHECK_OK(kr_devx_qp_post_send(&dci, &wr));

	/* the doorbell written through page Q: the DCI's WQE stays where it is */
	own = dci.uar;
	dci.uar = other;
	kr_devx_qp_ring(&dci); /* the record, then the write to Q */
	dci.uar = own;
	for (int i = 0; i < 4; i++)
		A.ctx->ops->doorbell(other, 0);
	CHECK_EQ(kr_fx_poll_none(&A.scq, 200), 0);
	CHECK_EQ(*word, 7);

	/* through its own page P: it runs (the engine reads the record, not the value) */
	A.ctx->ops->doorbell(own, 0);
	CHECK_OK(kr_fx_poll_one(&A.scq, &wc, 10000));
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 1);
	CHECK_EQ(*word, 0x4242424242424242ull);

	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
	kr_devx_uar_free_private(other);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_rejects_foreign_bell");
}
