/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control path on the sim: device open errors, caps, argument checks before any
 * command, object create/query/destroy, QP state transitions and what they do
 * to the software rings, firmware errors surfacing as -EREMOTEIO with status,
 * user_index slots, memory key variants.
 */
#include <errno.h>
#include <string.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define MEM_LEN (1u << 20)

static struct kr_fx_host A, B;

static void test_open_errors(void)
{
	struct kr_devx_ctx *ctx = (void *)1;

	CHECK_ERR(kr_devx_open("mlx5_does_not_exist", &ctx), -ENODEV);
	CHECK(ctx == NULL);
	CHECK_ERR(kr_devx_open(NULL, &ctx), -EINVAL);
	CHECK_ERR(kr_devx_open("sim:", &ctx), -EINVAL);
	CHECK_ERR(kr_devx_open("", &ctx), -EINVAL);
	CHECK_ERR(kr_devx_open("sim:x", NULL), -EINVAL);
}

/* A program that links a backend's doorbells only (a job's view) cannot open its devices. */
static const struct kr_devx_backend view_only = {
    .name = "view", .prefix = "viewonly:", .import = sim_view_import};
static const struct kr_devx_backend extra[3] = {
    {.name = "x1", .prefix = "x1:", .import = sim_view_import},
    {.name = "x2", .prefix = "x2:", .import = sim_view_import},
    {.name = "x3", .prefix = "x3:", .import = sim_view_import},
};

static void test_backends(void)
{
	static const struct kr_devx_backend no_prefix = {.name = "none"};
	struct kr_devx_ctx *ctx = (void *)1;

	CHECK_ERR(kr_devx_backend_add(NULL), -EINVAL);
	CHECK_ERR(kr_devx_backend_add(&no_prefix), -EINVAL);
	CHECK_OK(kr_devx_backend_add(&view_only));
	CHECK_ERR(kr_devx_open("viewonly:h", &ctx), -ENODEV);
	CHECK(ctx == NULL);
	/* the job's sim after the full one: the full one stays, hosts still open */
	CHECK_OK(kr_devx_backend_add(&kr_sim_view_backend));
	CHECK_OK(kr_devx_open("sim:ctl_backends", &ctx));
	CHECK(ctx->backend == &kr_sim_backend);
	CHECK(kr_devx_has(ctx, KR_DEVX_BE_UAR_FD | KR_DEVX_BE_WAKE_PAGE));
	CHECK(!kr_devx_has(ctx, KR_DEVX_BE_UAR_MMIO));
	kr_devx_close(ctx);
	/* room for 4: sim, viewonly, x1, x2; x3 is one too many */
	CHECK_OK(kr_devx_backend_add(&extra[0]));
	CHECK_OK(kr_devx_backend_add(&extra[1]));
	CHECK_ERR(kr_devx_backend_add(&extra[2]), -ENOSPC);
	CHECK_OK(kr_devx_backend_add(&extra[0])); /* again: already served */
}

static void test_caps_and_list(void)
{
	struct kr_devx_dev_info info[16];
	int n, found = 0;

	CHECK(A.ctx->backend == &kr_sim_backend);
	CHECK(strcmp(A.ctx->name, "sim:ctl_a") == 0);
	CHECK(A.ctx->caps.log_max_qp > 0);
	CHECK(A.ctx->caps.log_max_qp_sz > 0);
	CHECK(A.ctx->caps.log_max_cq_sz > 0);
	CHECK(A.ctx->caps.num_ports >= 1);
	CHECK(A.ctx->caps.dct);
	CHECK(A.ctx->caps.rc);
	CHECK_EQ(A.ctx->caps.port_type, KR_PORT_TYPE_ETH);
	n = kr_devx_list(info, 16);
	for (int i = 0; i < n; i++)
		if (info[i].backend == &kr_sim_backend &&
		    (!strcmp(info[i].name, "sim:ctl_a") || !strcmp(info[i].name, "sim:ctl_b")))
			found++;
	CHECK_EQ(found, 2);
	CHECK_EQ(kr_devx_list(NULL, 0), 0);
}

static void test_bad_input(void)
{
	struct kr_devx_cq cq;
	struct kr_devx_cq_attr cattr = {.ncqe = 100, .uar = A.uar};
	struct kr_devx_qp qp;
	struct kr_devx_qp_attr qattr = {.type = KR_DEVX_QP_RC,
					.pdn = A.pd.pdn,
					.send_cq = &A.scq,
					.recv_cq = &A.rcq,
					.uar = A.uar,
					.sq_wqebb = 64,
					.rq_wqe = 16,
					.max_recv_sge = 1};
	struct kr_devx_srq srq;
	struct kr_devx_srq_attr sattr = {.pdn = A.pd.pdn, .nwqe = 64, .max_sge = 1};
	struct kr_devx_mr mr;
	char unaligned[8192];

	/* CQ: not a power of two, too big, no UAR, short buffer */
	CHECK_ERR(kr_devx_cq_create(A.ctx, &cattr, &cq), -EINVAL);
	cattr.ncqe = 1u << (A.ctx->caps.log_max_cq_sz + 1);
	CHECK_ERR(kr_devx_cq_create(A.ctx, &cattr, &cq), -EINVAL);
	cattr.ncqe = 64;
	cattr.uar = NULL;
	CHECK_ERR(kr_devx_cq_create(A.ctx, &cattr, &cq), -EINVAL);
	cattr.uar = A.uar;
	cattr.buf = A.mem;
	cattr.buf_len = 100;
	CHECK_ERR(kr_devx_cq_create(A.ctx, &cattr, &cq), -EINVAL);
	CHECK_ERR(kr_devx_cq_create(A.ctx, NULL, &cq), -EINVAL);
	CHECK_ERR(kr_devx_cq_create(NULL, &cattr, &cq), -EINVAL);

	/* QP: sizes, RQ on a DCI, missing CQ, misaligned buffer */
	qattr.sq_wqebb = 100;
	CHECK_ERR(kr_devx_qp_create(A.ctx, &qattr, &qp), -EINVAL);
	qattr.sq_wqebb = 1u << (A.ctx->caps.log_max_qp_sz + 1);
	CHECK_ERR(kr_devx_qp_create(A.ctx, &qattr, &qp), -EINVAL);
	qattr.sq_wqebb = 64;
	qattr.rq_wqe = 3;
	CHECK_ERR(kr_devx_qp_create(A.ctx, &qattr, &qp), -EINVAL);
	qattr.rq_wqe = 16;
	qattr.max_recv_sge = 0;
	CHECK_ERR(kr_devx_qp_create(A.ctx, &qattr, &qp), -EINVAL);
	qattr.max_recv_sge = 1;
	qattr.type = KR_DEVX_QP_DCI;
	CHECK_ERR(kr_devx_qp_create(A.ctx, &qattr, &qp), -EINVAL);
	qattr.type = KR_DEVX_QP_RC;
	qattr.send_cq = NULL;
	CHECK_ERR(kr_devx_qp_create(A.ctx, &qattr, &qp), -EINVAL);
	qattr.send_cq = &A.scq;
	qattr.buf = unaligned + 1;
	qattr.buf_len = sizeof(unaligned) - 1;
	CHECK_ERR(kr_devx_qp_create(A.ctx, &qattr, &qp), -EINVAL);

	/* SRQ and MR */
	sattr.nwqe = 65;
	CHECK_ERR(kr_devx_srq_create(A.ctx, &sattr, &srq), -EINVAL);
	sattr.nwqe = 64;
	sattr.max_sge = 0;
	CHECK_ERR(kr_devx_srq_create(A.ctx, &sattr, &srq), -EINVAL);
	CHECK_ERR(kr_devx_mr_reg(A.ctx, &A.pd, A.mem, 0, KR_ACCESS_LOCAL_WRITE, &mr), -EINVAL);
	CHECK_ERR(kr_devx_mr_reg(A.ctx, &A.pd, A.mem, 4096, KR_ACCESS_REMOTE_WRITE, &mr), -EINVAL);
	CHECK_ERR(kr_devx_mr_reg(A.ctx, &A.pd, A.mem, 4096, 1u << 7, &mr), -EINVAL);
}

static void test_rc_states(void)
{
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_conn c;
	struct kr_devx_qp_info info;

	kr_fx_conn_default(&c);
	c.sq_psn = 0x111111;
	c.rq_psn = 0x222222;
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, &c));
	CHECK(qa.qpn != 0 && qb.qpn != 0);
	CHECK(qa.user_index != 0);
	CHECK(A.ctx->rsc[qa.user_index].obj == &qa);
	CHECK_EQ(A.ctx->rsc[qa.user_index].type, KR_DEVX_RSC_QP);
	CHECK_EQ(qa.rq_wqe_cnt, 64);
	CHECK_EQ(qa.rq_log_stride, 6); /* 4 SGEs */
	CHECK_EQ(qa.sq_wqebb_cnt, 256);
	CHECK((uint8_t *)qa.sq_buf == (uint8_t *)qa.buf + 64 * 64);
	CHECK((uint8_t *)qa.dbrec == (uint8_t *)qa.sq_buf + 256 * 64);

	CHECK_OK(kr_devx_qp_query(&qa, &info));
	CHECK_EQ(info.state, KR_QPC_STATE_RTS);
	CHECK_EQ(info.next_send_psn, 0x111111);
	CHECK_EQ(info.next_rcv_psn, 0x222222);
	CHECK_OK(kr_devx_qp_query(&qb, &info));
	CHECK_EQ(info.state, KR_QPC_STATE_RTS);
	CHECK_EQ(info.next_send_psn, 0x222222);
	CHECK_EQ(info.next_rcv_psn, 0x111111);

	/* Illegal transition: the firmware says no, with a status. */
	memset(&A.ctx->last_err, 0, sizeof(A.ctx->last_err));
	CHECK_ERR(kr_devx_qp_modify(&qa, KR_QP_INIT2RTR, &c), -EREMOTEIO);
	CHECK_EQ(A.ctx->last_err.opcode, KR_CMD_OP_INIT2RTR_QP);
	CHECK(A.ctx->last_err.status != KR_CMD_STAT_OK);

	/* Out-of-range values never reach the firmware. */
	c.retry_count = 8;
	CHECK_ERR(kr_devx_qp_modify(&qa, KR_QP_RTR2RTS, &c), -EINVAL);
	c.retry_count = 7;
	CHECK_ERR(kr_devx_qp_modify(&qa, KR_QP_RST2INIT, NULL), -EINVAL);
	CHECK_ERR(kr_devx_qp_modify(&qa, (enum kr_devx_qp_transition)99, &c), -EINVAL);

	CHECK_OK(kr_devx_qp_modify(&qa, KR_QP_2ERR, NULL));
	CHECK_OK(kr_devx_qp_query(&qa, &info));
	CHECK_EQ(info.state, KR_QPC_STATE_ERR);

	qa.sq_pi = 7;
	qa.sq_ci = 3;
	qa.sq_db_pi = 7;
	qa.rq_pi = 5;
	qa.rq_ci = 2;
	qa.dbrec[MLX5_RCV_DBR] = htobe32(5);
	qa.dbrec[MLX5_SND_DBR] = htobe32(7);
	CHECK_OK(kr_devx_qp_modify(&qa, KR_QP_2RST, NULL));
	CHECK_OK(kr_devx_qp_query(&qa, &info));
	CHECK_EQ(info.state, KR_QPC_STATE_RST);
	CHECK_EQ(qa.sq_pi, 0);
	CHECK_EQ(qa.sq_ci, 0);
	CHECK_EQ(qa.sq_db_pi, 0);
	CHECK_EQ(qa.rq_pi, 0);
	CHECK_EQ(qa.rq_ci, 0);
	CHECK_EQ(qa.dbrec[MLX5_RCV_DBR], 0);
	CHECK_EQ(qa.dbrec[MLX5_SND_DBR], 0);

	/* Reconnect from RST. */
	c.remote_qpn = qb.qpn;
	kr_devx_qp_conn_path(&c, &A.ctx->port, &B.ctx->port.addr, qa.qpn, qb.qpn);
	CHECK_OK(kr_devx_qp_connect(&qa, &c));
	CHECK_OK(kr_devx_qp_query(&qa, &info));
	CHECK_EQ(info.state, KR_QPC_STATE_RTS);

	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
}

static void test_own_buffers_and_slots(void)
{
	struct kr_devx_qp_attr qattr = {.type = KR_DEVX_QP_RC,
					.pdn = A.pd.pdn,
					.send_cq = &A.scq,
					.recv_cq = &A.rcq,
					.uar = A.uar,
					.sq_wqebb = 64,
					.rq_wqe = 2,
					.max_recv_sge = 1};
	struct kr_devx_qp q1, q2, q3;
	struct kr_devx_cq cq;
	struct kr_devx_cq_attr cattr = {.ncqe = 8, .uar = A.uar};
	uint32_t slot;

	/* Own buffers; a 2 x 16-byte RQ grows to one WQEBB. */
	CHECK_OK(kr_devx_qp_create(A.ctx, &qattr, &q1));
	CHECK(q1.own_buf);
	CHECK_EQ(q1.rq_wqe_cnt, 4);
	CHECK((uint8_t *)q1.sq_buf == (uint8_t *)q1.buf + 64);
	CHECK_OK(kr_devx_qp_create(A.ctx, &qattr, &q2));
	CHECK(q1.user_index != q2.user_index);
	slot = q1.user_index;
	CHECK_OK(kr_devx_qp_destroy(&q1));
	CHECK_EQ(A.ctx->rsc[slot].type, KR_DEVX_RSC_NONE);
	CHECK_OK(kr_devx_qp_create(A.ctx, &qattr, &q3));
	CHECK_EQ(q3.user_index, slot); /* freed slot reused */
	CHECK_OK(kr_devx_qp_destroy(&q2));
	CHECK_OK(kr_devx_qp_destroy(&q3));

	CHECK_OK(kr_devx_cq_create(A.ctx, &cattr, &cq));
	CHECK(cq.own_buf);
	CHECK_EQ(cq.log_ncqe, 3);
	for (uint32_t i = 0; i < 8; i++)
		CHECK_EQ(cq.cqes[i].op_own, (MLX5_CQE_INVALID << 4) | 1);
	CHECK((uint8_t *)cq.dbrec == (uint8_t *)cq.buf + 8 * 64);
	CHECK_OK(kr_devx_cq_destroy(&cq));
	CHECK_ERR(kr_devx_cq_destroy(NULL), -EINVAL);
}

static void test_dc_objects(void)
{
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_qp dci;
	struct kr_devx_qp_info info;
	uint8_t state = 0xff;

	CHECK_OK(kr_fx_dct_create(&B, &srq, &dct, 0x1234567890abcdefull));
	CHECK(dct.dctn != 0);
	CHECK_EQ(dct.dc_key, 0x1234567890abcdefull);
	CHECK(B.ctx->rsc[dct.user_index].obj == &dct);
	CHECK_EQ(B.ctx->rsc[dct.user_index].type, KR_DEVX_RSC_DCT);
	CHECK_EQ(srq.nwqe, 256);
	CHECK_EQ(srq.log_stride, 6);
	CHECK((uint8_t *)srq.dbrec == (uint8_t *)srq.buf + 256 * 64);
	CHECK_OK(kr_devx_dct_query(&dct, &state));
	CHECK_EQ(state, KR_DCTC_STATE_ACTIVE);

	CHECK_OK(kr_fx_dci_create(&A, &dci, NULL));
	CHECK_OK(kr_devx_qp_query(&dci, &info));
	CHECK_EQ(info.state, KR_QPC_STATE_RTS);
	CHECK(dci.rq_wqe_cnt == 0 && dci.rq_buf == NULL);
	kr_fx_qp_destroy(&dci);

	CHECK_OK(kr_devx_dct_drain(&dct));
	CHECK_OK(kr_devx_dct_query(&dct, &state));
	CHECK(state == KR_DCTC_STATE_DRAINING || state == KR_DCTC_STATE_DRAINED);
	kr_fx_dct_destroy(&dct, &srq);
}

static void test_mr_keys(void)
{
	struct kr_devx_mr m1, m2;

	CHECK_OK(kr_devx_mr_reg(A.ctx, &A.pd, A.mem, 4096, KR_ACCESS_LOCAL_WRITE, &m1));
	CHECK_OK(kr_devx_mr_reg(A.ctx, &A.pd, (uint8_t *)A.mem + 100, 5000,
				KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_READ, &m2));
	CHECK_EQ(m1.lkey, m1.rkey);
	CHECK(m1.lkey != m2.lkey);
	/* the variant byte is never 0 (0x100 is MLX5_INVALID_LKEY) */
	CHECK((m1.lkey & 0xff) != 0 && (m2.lkey & 0xff) != 0);
	CHECK(A.mr.lkey != MLX5_INVALID_LKEY && B.mr.lkey != MLX5_INVALID_LKEY);
	CHECK_OK(kr_devx_mr_dereg(&m2));
	CHECK_OK(kr_devx_mr_dereg(&m1));
}

/*
 * A region registered again and again (the index comes back each time):
 * the key never repeats the one before at its index, its variant byte is
 * random (not a counter a guesser can follow) and never 0.
 */
static void test_mr_key_variants(void)
{
	bool seen[256] = {false};
	uint32_t prev = 0, distinct = 0, next_of_prev = 0, same_index = 0;

	for (int i = 0; i < 2000; i++) {
		struct kr_devx_mr m;

		CHECK_OK(kr_devx_mr_reg(A.ctx, &A.pd, A.mem, 4096, KR_ACCESS_LOCAL_WRITE, &m));
		CHECK((m.lkey & 0xff) != 0);
		if (prev && (m.lkey >> 8) == (prev >> 8)) {
			same_index++;
			CHECK(m.lkey != prev);
		}
		next_of_prev += (m.lkey & 0xff) == ((prev + 1) & 0xff);
		distinct += !seen[m.lkey & 0xff];
		seen[m.lkey & 0xff] = true;
		prev = m.lkey;
		CHECK_OK(kr_devx_mr_dereg(&m));
	}
	CHECK(same_index > 1000); /* the sim gives the index back: the case that matters */
	/* a counter would give 255 distinct and ~2,000 successors; random, ~8 successors */
	CHECK(distinct > 200);
	CHECK(next_of_prev < 100);
	printf("mr keys: %u distinct variants in 2000, %u successors of the last, %u on the same "
	       "index\n",
	       distinct, next_of_prev, same_index);
}

int main(void)
{
	CHECK_OK(kr_devx_backend_add(&kr_sim_backend));
	test_open_errors();
	test_backends();
	CHECK_OK(kr_fx_host_open(&A, "sim:ctl_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:ctl_b", MEM_LEN));
	test_caps_and_list();
	test_bad_input();
	test_rc_states();
	test_own_buffers_and_slots();
	test_dc_objects();
	test_mr_keys();
	test_mr_key_variants();
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("devx_ctrl_objects");
}
