/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The firmware commands of the keeper's QPs, and nothing else: create a QP
 * and its CQ, bring a DCI to RTS, park a spare RC QP in INIT, connect it,
 * quiesce one a job held, destroy. Which slot, which UAR page, what the
 * zone descriptors and the segment say, and kmod-min's registration are the
 * bookkeeping of keeper_dci.c (as UCX keeps dc_mlx5_devx.c to commands).
 *
 * Quiesce of a QP a job held (it may have died mid-post, left CQEs unread or
 * put the QP in error): read where its send PSN stands, 2RST (the device
 * stops; no CQE for this QP is written after the command returns; the
 * software rings and doorbell record are zeroed, so nothing stale runs
 * again), take the CQ back at the device's producer counter. The caller then
 * brings it up at a send PSN past the old life's (KR_PSN_RENEW_GAP: a late
 * response to the old holder is never taken for one of the new).
 */
#include <errno.h>
#include <string.h>

#include "devx/devx.h"
#include "keeper/keeper.h"

/*
 * The connection a pooled DCI (and a parked RC QP) is brought up with. A
 * DCI's requester atomics are enabled at INIT2RTR (rae, IB-spec atomic mode),
 * as UCX's DEVX DCIs are, when the device has atomics: without it hardware
 * refuses a CAS or FAA posted on the DCI.
 */
static void qp_conn(const struct kr_keeper *k, struct kr_devx_qp_conn *c)
{
	memset(c, 0, sizeof(*c));
	if (k->ctx->caps.atomic)
		c->access = KR_ACCESS_REMOTE_ATOMIC;
	c->port = 1;
	c->mtu = KR_MTU_1K;
	c->hop_limit = 64;
	c->sgid_index = (uint8_t)k->ctx->port.gid_index;
	c->tclass = k->ctx->port.tclass; /* --traffic-class, --priority */
	c->sl = k->ctx->port.sl;
	c->ack_timeout = 12;
	c->retry_count = 7;
	c->rnr_retry = 7;
	c->min_rnr_nak = 12;
	c->log_sra_max = 4;
	c->log_rra_max = 4;
}

/* kr_keeper_qp_create() - see keeper.h. */
int kr_keeper_qp_create(struct kr_keeper *k, struct kr_keeper_qp *q, enum kr_devx_qp_type type,
			uint32_t pdn, struct kr_devx_uar *uar, uint8_t *qbuf, uint8_t *cqbuf)
{
	struct kr_devx_cq_attr ca = {.ncqe = KR_POOL_DCI_CQE, .uar = uar};
	struct kr_devx_qp_attr qa;
	int rc;

	ca.buf = cqbuf;
	ca.buf_len = kr_devx_cq_buf_size(ca.ncqe);
	rc = kr_devx_cq_create(k->ctx, &ca, &q->cq);
	if (rc)
		return rc;
	memset(&qa, 0, sizeof(qa));
	qa.type = type;
	qa.pdn = pdn;
	qa.send_cq = &q->cq;
	qa.uar = uar;
	qa.sq_wqebb = KR_POOL_DCI_WQEBB;
	if (type == KR_DEVX_QP_RC) {
		qa.recv_cq = &q->cq;
		qa.rq_wqe = KR_POOL_RC_RQ_WQE;
		qa.max_recv_sge = 1;
	}
	qa.buf = qbuf;
	qa.buf_len = kr_devx_qp_buf_size(&qa);
	rc = kr_devx_qp_create(k->ctx, &qa, &q->qp);
	if (rc) {
		kr_devx_cq_destroy(&q->cq);
		return rc;
	}
	q->built = true;
	return 0;
}

/* kr_keeper_dci_up() - see keeper.h. */
int kr_keeper_dci_up(const struct kr_keeper *k, struct kr_keeper_qp *q, uint32_t sq_psn)
{
	struct kr_devx_qp_conn c;

	qp_conn(k, &c);
	c.sq_psn = sq_psn;
	return kr_devx_qp_connect(&q->qp, &c);
}

/* kr_keeper_rc_park() - see keeper.h. */
int kr_keeper_rc_park(const struct kr_keeper *k, struct kr_keeper_qp *q)
{
	struct kr_devx_qp_conn c;

	qp_conn(k, &c);
	c.access = KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC;
	return kr_devx_qp_modify(&q->qp, KR_QP_RST2INIT, &c);
}

/* kr_keeper_rc_connect() - see keeper.h: the connection a DCI gets, plus the peer. */
int kr_keeper_rc_connect(struct kr_keeper *k, struct kr_keeper_qp *q,
			 const struct kr_devx_addr *peer, uint32_t peer_qpn, uint32_t rq_psn,
			 uint32_t sq_psn)
{
	struct kr_devx_qp_conn c;
	int rc;

	qp_conn(k, &c);
	c.access |= KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ;
	c.remote_qpn = peer_qpn;
	c.rq_psn = rq_psn;
	c.sq_psn = sq_psn;
	kr_devx_qp_conn_path(&c, &k->ctx->port, peer, q->qp.qpn, peer_qpn);
	rc = kr_devx_qp_modify(&q->qp, KR_QP_INIT2RTR, &c);
	if (!rc)
		rc = kr_devx_qp_modify(&q->qp, KR_QP_RTR2RTS, &c);
	return rc;
}

/*
 * Take a CQ back empty, its QP in RST (the device writes no more CQEs for
 * it). Every CQE up to the device's producer counter is the old holder's,
 * read or not: the consumer index continues from there, which is also the
 * counter the device checks for overrun. What the holder published in the
 * doorbell record is not used: a holder may write anything there, and one
 * that consumed more than a ring's worth is not ahead of the device.
 * *seen: CQEs the device wrote over the lease. 0 or the QUERY_CQ error.
 */
static int qp_cq_take_back(struct kr_devx_cq *cq, uint32_t *seen)
{
	struct kr_devx_cq_info info;
	uint32_t n;
	int rc;

	rc = kr_devx_cq_query(cq, &info);
	if (rc)
		return rc;
	n = (info.producer_counter - cq->cons_index) & 0xffffff;
	kr_devx_cq_set_ci(cq, cq->cons_index + n);
	*seen = n;
	return 0;
}

/* kr_keeper_qp_quiesce() - see keeper.h. */
int kr_keeper_qp_quiesce(struct kr_keeper_qp *q, uint32_t *psn, struct kr_devx_qp_info *info,
			 uint32_t *seen)
{
	int rc = psn ? kr_devx_qp_renew_psn(&q->qp, psn, info) : kr_devx_qp_query(&q->qp, info);

	if (rc)
		return rc;
	q->came_back_err = info->state == KR_QPC_STATE_ERR || info->state == KR_QPC_STATE_SQER;
	rc = kr_devx_qp_modify(&q->qp, KR_QP_2RST, NULL);
	if (rc)
		return rc;
	return qp_cq_take_back(&q->cq, seen);
}

/* kr_keeper_qp_cmd_destroy() - see keeper.h. */
void kr_keeper_qp_cmd_destroy(struct kr_keeper_qp *q)
{
	kr_devx_qp_destroy(&q->qp);
	kr_devx_cq_destroy(&q->cq);
}
