/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim refuses what the wire refuses: on RoCE a frame reaches a peer
 * only when its destination MAC is the peer's. A DCI request whose address
 * vector has no rmac (or another host's) and an RC QP whose path has none
 * never arrive: the requester's retries run out (transport retry counter
 * exceeded), the sender's wire counts the drops, and no remote byte
 * changes. The same requests with the address kr_devx_dc_av_path /
 * kr_devx_qp_conn_path fill in arrive.
 */
#include <stdint.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define MEM_LEN (64u << 10)
#define KEY	0x0123456789abcdefull
#define DST	0x2000u

static struct kr_fx_host A, B, C;

static uint64_t l2_drops(struct kr_fx_host *h)
{
	struct sim_stats st;

	CHECK_OK(sim_stats_query(h->ctx, &st));
	return st.l2_drops;
}

/* One signalled 8-byte WRITE of byte v to B at DST; its completion status. */
static int write_one(struct kr_devx_qp *qp, const struct kr_devx_dc_av *av, uint64_t id, uint8_t v)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, 64, 8);
	struct kr_devx_wr wr = {.wr_id = id,
				.opcode = KR_WR_RDMA_WRITE,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = (uintptr_t)B.mem + DST,
				.rkey = B.mr.rkey,
				.av = av};
	int st;

	memset((uint8_t *)A.mem + 64, v, 8);
	st = kr_fx_post_wait(&A, qp, &wr, 10000);
	CHECK(st >= 0); /* posted, and this request completed */
	return st;
}

int main(void)
{
	struct kr_devx_qp_conn c, cb;
	struct kr_devx_dc_av av, bad;
	struct kr_devx_qp dci, qa, qb;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	uint64_t drops;

	CHECK_OK(kr_fx_host_open(&A, "sim:rmac_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:rmac_b", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&C, "sim:rmac_c", MEM_LEN));
	CHECK_OK(kr_fx_dct_create(&B, &srq, &dct, KEY));
	kr_fx_conn_default(&c);
	c.ack_timeout = 14; /* ~67 ms: a loaded machine still answers in time; a failure takes ~270 ms */
	c.retry_count = 3;
	CHECK_OK(kr_fx_dci_create(&A, &dci, &c));
	kr_fx_dc_av(&A, &B, &dct, &av);
	CHECK(av.rmac[0] == 0x02 && !av.grh && av.rlid >= 0xc000); /* RoCE v2 rules */

	/* the address as the library fills it: delivered */
	CHECK_EQ(write_one(&dci, &av, 1, 0x11), KR_WC_SUCCESS);
	CHECK_EQ(((uint8_t *)B.mem)[DST], 0x11);
	drops = l2_drops(&A);

	/* no rmac, then C's MAC: never arrives, B untouched */
	bad = av;
	memset(bad.rmac, 0, sizeof(bad.rmac));
	CHECK_EQ(write_one(&dci, &bad, 2, 0x22), KR_WC_RETRY_EXC_ERR);
	CHECK(l2_drops(&A) > drops);
	CHECK_EQ(((uint8_t *)B.mem)[DST], 0x11);
	CHECK_OK(kr_devx_qp_modify(&dci, KR_QP_2RST, NULL));
	CHECK_OK(kr_devx_qp_connect(&dci, &c));
	memcpy(bad.rmac, C.ctx->port.addr.mac, sizeof(bad.rmac));
	drops = l2_drops(&A);
	CHECK_EQ(write_one(&dci, &bad, 3, 0x33), KR_WC_RETRY_EXC_ERR);
	CHECK(l2_drops(&A) > drops);
	CHECK_EQ(((uint8_t *)B.mem)[DST], 0x11);
	CHECK_OK(kr_devx_qp_modify(&dci, KR_QP_2RST, NULL));
	CHECK_OK(kr_devx_qp_connect(&dci, &c));
	CHECK_EQ(write_one(&dci, &av, 4, 0x44), KR_WC_SUCCESS);
	CHECK_EQ(((uint8_t *)B.mem)[DST], 0x44);

	/* RC: a path without rmac fails the same way; with the peer's, it works */
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, &c));
	CHECK_EQ(write_one(&qa, NULL, 5, 0x55), KR_WC_SUCCESS);
	CHECK_EQ(((uint8_t *)B.mem)[DST], 0x55);
	CHECK_OK(kr_devx_qp_modify(&qa, KR_QP_2RST, NULL));
	cb = c;
	cb.remote_qpn = qb.qpn;
	kr_devx_qp_conn_path(&cb, &A.ctx->port, &B.ctx->port.addr, qa.qpn, qb.qpn);
	memset(cb.rmac, 0, sizeof(cb.rmac));
	CHECK_OK(kr_devx_qp_connect(&qa, &cb));
	drops = l2_drops(&A);
	CHECK_EQ(write_one(&qa, NULL, 6, 0x66), KR_WC_RETRY_EXC_ERR);
	CHECK(l2_drops(&A) > drops);
	CHECK_EQ(((uint8_t *)B.mem)[DST], 0x55);

	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
	kr_fx_host_close(&C);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_rejects_roce_rmac");
}
