/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim refuses what hardware refuses: an atomic posted on a DCI whose
 * INIT2RTR did not enable requester atomics (rae with the IB-spec atomic
 * mode, as UCX's DEVX DCIs set them) ends in a local QP operation error and
 * touches no remote byte, while WRITEs on the same DCI work. The same DCI
 * brought up again with atomics enabled swaps the word. A DCI of the pool
 * (krpoold) is built the second way.
 */
#include <stdint.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN (64u << 10)
#define KEY	0x0123456789abcdefull

static struct kr_fx_host A, B;

static void post(struct kr_devx_qp *dci, struct kr_devx_wr *wr)
{
	CHECK_OK(kr_devx_qp_post_send(dci, wr));
	kr_devx_qp_ring(dci);
}

int main(void)
{
	struct kr_devx_qp_conn c;
	struct kr_devx_dc_av av;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_qp dci;
	struct kr_devx_sge sge;
	struct kr_devx_wr wr;
	uint64_t *word, *old;

	CHECK_OK(kr_fx_host_open(&A, "sim:rej_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:rej_b", MEM_LEN));
	CHECK_OK(kr_fx_dct_create(&B, &srq, &dct, KEY));
	kr_fx_dc_av(&A, &B, &dct, &av);
	word = (uint64_t *)((uint8_t *)B.mem + 0x1000);
	old = (uint64_t *)A.mem;
	*word = 41;

	/* no requester atomics: a WRITE works, a CAS is refused locally */
	kr_fx_conn_default(&c);
	c.access = 0;
	CHECK_OK(kr_fx_dci_create(&A, &dci, &c));
	sge = kr_fx_sge(&A, 64, 8);
	memset((uint8_t *)A.mem + 64, 0x5c, 8);
	wr = (struct kr_devx_wr){.wr_id = 1,
				 .opcode = KR_WR_RDMA_WRITE,
				 .flags = KR_WR_SIGNALED,
				 .sge = &sge,
				 .num_sge = 1,
				 .remote_addr = (uintptr_t)B.mem + 0x2000,
				 .rkey = B.mr.rkey,
				 .av = &av};
	post(&dci, &wr);
	kr_fx_expect_wc(&A.scq, 1, KR_WC_SUCCESS, dci.qpn, NULL);
	CHECK_EQ(((uint8_t *)B.mem)[0x2000], 0x5c);
	sge = kr_fx_sge(&A, 0, 8);
	wr = (struct kr_devx_wr){.wr_id = 2,
				 .opcode = KR_WR_ATOMIC_CS,
				 .flags = KR_WR_SIGNALED,
				 .sge = &sge,
				 .num_sge = 1,
				 .remote_addr = (uintptr_t)word,
				 .rkey = B.mr.rkey,
				 .compare_add = 41,
				 .swap = 42,
				 .av = &av};
	post(&dci, &wr);
	kr_fx_expect_wc(&A.scq, 2, KR_WC_LOC_QP_OP_ERR, dci.qpn, NULL);
	CHECK_EQ(*word, 41);

	/* atomics enabled at INIT2RTR: the same CAS swaps */
	kr_fx_conn_default(&c);
	CHECK(c.access & KR_ACCESS_REMOTE_ATOMIC);
	CHECK_OK(kr_devx_qp_modify(&dci, KR_QP_2RST, NULL));
	CHECK_OK(kr_devx_qp_connect(&dci, &c));
	*old = 0;
	wr.wr_id = 3;
	post(&dci, &wr);
	kr_fx_expect_wc(&A.scq, 3, KR_WC_SUCCESS, dci.qpn, NULL);
	CHECK_EQ(*old, 41);
	CHECK_EQ(*word, 42);

	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_rejects_dci_atomic");
}
