/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim refuses what hardware refuses: a DC target answers only the
 * operations its creation allowed (dctc rre, rwe, rae). A READ to a DCT
 * created without remote read, a WRITE without remote write and a CAS or
 * FAA without remote atomics each end in a remote access error at the
 * requester, and the target's memory keeps its bytes; what the DCT allows
 * still works. The pool's DCTs are created with exactly the rights a launch
 * needs (read, write, atomics: KR_LAUNCH_DCT_ACCESS).
 */
#include <stdint.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN (64u << 10)
#define KEY	0x0123456789abcdefull
#define WORD	0x3000u

static struct kr_fx_host A, B;
static struct kr_devx_qp_conn g_conn;

static void dct_with(uint32_t access, struct kr_devx_srq *srq, struct kr_devx_dct *dct)
{
	struct kr_devx_dct_attr da = {.pdn = B.pd.pdn,
				      .cq = &B.rcq,
				      .srq = srq,
				      .dc_key = KEY,
				      .access = access,
				      .port = 1,
				      .mtu = KR_MTU_1K,
				      .min_rnr_nak = 12,
				      .gid_index = (uint8_t)B.ctx->port.gid_index,
				      .hop_limit = 64};

	CHECK_OK(kr_devx_srq_create(
	    B.ctx, &(struct kr_devx_srq_attr){.pdn = B.pd.pdn, .nwqe = 16, .max_sge = 1}, srq));
	CHECK_OK(kr_devx_dct_create(B.ctx, &da, dct));
}

/* One signalled 8-byte op on B's word through dct; its status. An error resets the DCI. */
static int op(struct kr_devx_qp *dci, const struct kr_devx_dct *dct, enum kr_devx_wr_opcode code,
	      uint64_t id)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, 0, 8);
	struct kr_devx_dc_av av;
	struct kr_devx_wr wr = {.wr_id = id,
				.opcode = code,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = (uintptr_t)B.mem + WORD,
				.rkey = B.mr.rkey,
				.compare_add = 7,
				.swap = 99,
				.av = &av};
	int st;

	kr_fx_dc_av(&A, &B, dct, &av);
	*(uint64_t *)A.mem = 0x1111111111111111ull;
	st = kr_fx_post_wait(&A, dci, &wr, 10000);
	CHECK(st >= 0); /* posted, and this request completed */
	if (st != KR_WC_SUCCESS) {
		CHECK_OK(kr_devx_qp_modify(dci, KR_QP_2RST, NULL));
		CHECK_OK(kr_devx_qp_connect(dci, &g_conn));
	}
	return st;
}

int main(void)
{
	volatile uint64_t *word;
	struct kr_devx_srq s_ro, s_wo, s_rw;
	struct kr_devx_dct ro, wo, rw;
	struct kr_devx_qp dci;

	CHECK_OK(kr_fx_host_open(&A, "sim:acc_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:acc_b", MEM_LEN));
	word = (volatile uint64_t *)((uint8_t *)B.mem + WORD);
	*word = 7;
	kr_fx_conn_default(&g_conn);
	CHECK_OK(kr_fx_dci_create(&A, &dci, &g_conn));
	dct_with(KR_ACCESS_REMOTE_READ, &s_ro, &ro);
	dct_with(KR_ACCESS_REMOTE_WRITE, &s_wo, &wo);
	dct_with(KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_WRITE, &s_rw, &rw);

	/* read-only target: READ yes; WRITE, CAS, FAA no */
	CHECK_EQ(op(&dci, &ro, KR_WR_RDMA_READ, 1), KR_WC_SUCCESS);
	CHECK_EQ(*(uint64_t *)A.mem, 7);
	CHECK_EQ(op(&dci, &ro, KR_WR_RDMA_WRITE, 2), KR_WC_REM_ACCESS_ERR);
	CHECK_EQ(op(&dci, &ro, KR_WR_ATOMIC_CS, 3), KR_WC_REM_ACCESS_ERR);
	CHECK_EQ(op(&dci, &ro, KR_WR_ATOMIC_FA, 4), KR_WC_REM_ACCESS_ERR);
	CHECK_EQ(*word, 7);
	/* write-only target: READ no, and the local buffer keeps its bytes */
	CHECK_EQ(op(&dci, &wo, KR_WR_RDMA_READ, 5), KR_WC_REM_ACCESS_ERR);
	CHECK_EQ(*(uint64_t *)A.mem, 0x1111111111111111ull);
	CHECK_EQ(op(&dci, &wo, KR_WR_RDMA_WRITE, 6), KR_WC_SUCCESS);
	CHECK_EQ(*word, 0x1111111111111111ull);
	*word = 7;
	/* read and write but no atomics: CAS and FAA refused, the word unchanged */
	CHECK_EQ(op(&dci, &rw, KR_WR_ATOMIC_CS, 7), KR_WC_REM_ACCESS_ERR);
	CHECK_EQ(op(&dci, &rw, KR_WR_ATOMIC_FA, 8), KR_WC_REM_ACCESS_ERR);
	CHECK_EQ(*word, 7);
	CHECK_EQ(op(&dci, &rw, KR_WR_RDMA_READ, 9), KR_WC_SUCCESS);

	kr_fx_qp_destroy(&dci);
	CHECK_OK(kr_devx_dct_destroy(&ro));
	CHECK_OK(kr_devx_dct_destroy(&wo));
	CHECK_OK(kr_devx_dct_destroy(&rw));
	CHECK_OK(kr_devx_srq_destroy(&s_ro));
	CHECK_OK(kr_devx_srq_destroy(&s_wo));
	CHECK_OK(kr_devx_srq_destroy(&s_rw));
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_rejects_dct_access");
}
