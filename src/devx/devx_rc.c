/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One RC connection the way an application without krcore makes it: a CQ
 * and an RC QP of its own, brought RST->INIT->RTR->RTS towards one peer
 * whose QP number and address came out of band. The verbs baselines krcore
 * is measured against (krbench, examples/mpi_verbs.c) use it, so they pay
 * exactly the same firmware commands.
 */
#include "devx/devx.h"

int kr_devx_rc_create(struct kr_devx_ctx *ctx, const struct kr_devx_pd *pd, struct kr_devx_uar *uar,
		      uint32_t sq_wqebb, uint32_t rq_wqe, struct kr_devx_rc *rc)
{
	struct kr_devx_cq_attr ca = {.ncqe = sq_wqebb, .uar = uar};
	struct kr_devx_qp_attr qa = {.type = KR_DEVX_QP_RC,
				     .pdn = pd->pdn,
				     .send_cq = &rc->cq,
				     .recv_cq = &rc->cq,
				     .uar = uar,
				     .sq_wqebb = sq_wqebb,
				     .rq_wqe = rq_wqe,
				     .max_recv_sge = 1};
	int err = kr_devx_cq_create(ctx, &ca, &rc->cq);

	if (err)
		return err;
	err = kr_devx_qp_create(ctx, &qa, &rc->qp);
	if (err)
		kr_devx_cq_destroy(&rc->cq);
	return err;
}

int kr_devx_rc_connect(struct kr_devx_rc *rc, const struct kr_devx_addr *peer, uint32_t remote_qpn,
		       uint32_t rq_psn, uint32_t sq_psn)
{
	struct kr_devx_qp_conn c = {.port = 1,
				    .access = KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_WRITE,
				    .remote_qpn = remote_qpn,
				    .mtu = KR_MTU_1K,
				    .rq_psn = rq_psn,
				    .sq_psn = sq_psn,
				    .min_rnr_nak = 12,
				    .ack_timeout = 14,
				    .retry_count = 7,
				    .rnr_retry = 7,
				    .log_sra_max = 4,
				    .log_rra_max = 4};

	kr_devx_qp_conn_path(&c, &rc->qp.ctx->port, peer, rc->qp.qpn, remote_qpn);
	return kr_devx_qp_connect(&rc->qp, &c);
}

void kr_devx_rc_destroy(struct kr_devx_rc *rc)
{
	kr_devx_qp_destroy(&rc->qp);
	kr_devx_cq_destroy(&rc->cq);
}
