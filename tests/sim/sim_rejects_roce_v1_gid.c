/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim refuses what the wire refuses: its network is IPv4/UDP (RoCE v2),
 * so a request sent from a RoCE v1 GID (Ethertype 0x8915, not IP) or from a
 * link-local IPv6 GID never arrives, and a DC target whose answers leave
 * from such an entry (dctc.my_addr_index) is never heard: in both cases the
 * requester's retries run out and no local byte changes. The port's own
 * choice (kr_devx_open: the RoCE v2 IPv4 entry, index 3 on a sim port)
 * works.
 */
#include <stdint.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN (64u << 10)
#define KEY	0x0123456789abcdefull
#define SRC	0x3000u

static struct kr_fx_host A, B;

/* One signalled 8-byte READ from B at SRC into A at 0; its completion status. */
static int read_one(struct kr_devx_qp *dci, const struct kr_devx_dc_av *av, uint64_t id)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, 0, 8);
	struct kr_devx_wr wr = {.wr_id = id,
				.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = (uintptr_t)B.mem + SRC,
				.rkey = B.mr.rkey,
				.av = av};
	int st;

	memset(A.mem, 0, 8);
	st = kr_fx_post_wait(&A, dci, &wr, 10000);
	CHECK(st >= 0); /* posted, and this request completed */
	return st;
}

int main(void)
{
	struct kr_devx_srq_attr sa = {.nwqe = 16, .max_sge = 1};
	struct kr_devx_dct_attr da = {0};
	struct kr_devx_gid_entry e;
	struct kr_devx_qp_conn c;
	struct kr_devx_dc_av av, bad;
	struct kr_devx_srq srq, srq1;
	struct kr_devx_dct dct, dct1;
	struct kr_devx_qp dci;

	CHECK_OK(kr_fx_host_open(&A, "sim:v1_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:v1_b", MEM_LEN));
	CHECK_EQ(A.ctx->port.gid_index, 3);
	CHECK_EQ(A.ctx->port.gid_type, KR_GID_TYPE_ROCE_V2);
	memset((uint8_t *)B.mem + SRC, 0x5a, 8);
	CHECK_OK(kr_fx_dct_create(&B, &srq, &dct, KEY));
	kr_fx_conn_default(&c);
	c.ack_timeout = 14; /* ~67 ms: a loaded machine still answers in time; a failure takes ~270 ms */
	c.retry_count = 3;
	CHECK_OK(kr_fx_dci_create(&A, &dci, &c));
	kr_fx_dc_av(&A, &B, &dct, &av);
	CHECK_EQ(av.sgid_index, 3);
	CHECK_EQ(read_one(&dci, &av, 1), KR_WC_SUCCESS);
	CHECK_EQ(((uint8_t *)A.mem)[0], 0x5a);

	/* from RoCE v1 link-local, RoCE v2 link-local, RoCE v1 IPv4: never arrives */
	for (uint8_t i = 0; i < 3; i++) {
		CHECK_OK(A.ctx->ops->query_gid_entry(A.ctx, 1, i, &e));
		CHECK(e.type == (i & 1 ? KR_GID_TYPE_ROCE_V2 : KR_GID_TYPE_ROCE_V1));
		bad = av;
		bad.sgid_index = i;
		CHECK_EQ(read_one(&dci, &bad, 10 + i), KR_WC_RETRY_EXC_ERR);
		CHECK_EQ(((uint8_t *)A.mem)[0], 0);
		CHECK_OK(kr_devx_qp_modify(&dci, KR_QP_2RST, NULL));
		CHECK_OK(kr_devx_qp_connect(&dci, &c));
	}

	/* a DC target answering from RoCE v1: its READ responses never come back */
	CHECK_OK(kr_devx_srq_create(
	    B.ctx,
	    &(struct kr_devx_srq_attr){.pdn = B.pd.pdn, .nwqe = sa.nwqe, .max_sge = sa.max_sge},
	    &srq1));
	da.pdn = B.pd.pdn;
	da.cq = &B.rcq;
	da.srq = &srq1;
	da.dc_key = KEY;
	da.access = KR_ACCESS_REMOTE_READ;
	da.port = 1;
	da.mtu = KR_MTU_1K;
	da.min_rnr_nak = 12;
	da.hop_limit = 64;
	da.gid_index = 2;
	CHECK_OK(kr_devx_dct_create(B.ctx, &da, &dct1));
	kr_fx_dc_av(&A, &B, &dct1, &bad);
	CHECK_EQ(read_one(&dci, &bad, 20), KR_WC_RETRY_EXC_ERR);
	CHECK_EQ(((uint8_t *)A.mem)[0], 0);
	CHECK_OK(kr_devx_qp_modify(&dci, KR_QP_2RST, NULL));
	CHECK_OK(kr_devx_qp_connect(&dci, &c));
	/* and the one the port chose still works on the same DCI */
	CHECK_EQ(read_one(&dci, &av, 21), KR_WC_SUCCESS);
	CHECK_EQ(((uint8_t *)A.mem)[0], 0x5a);

	CHECK_OK(kr_devx_dct_destroy(&dct1));
	CHECK_OK(kr_devx_srq_destroy(&srq1));
	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_rejects_roce_v1_gid");
}
