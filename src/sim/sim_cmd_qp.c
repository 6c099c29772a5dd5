/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Firmware commands for RC QPs and DC initiators: CREATE_QP, DESTROY_QP, the
 * state transitions and QUERY_QP. sh->lock held; mailboxes already checked
 * for sizes and reserved bits by sim_cmd.c.
 *
 * State machine (the transitions krcore uses; anything else is
 * BAD_RES_STATE with SIM_SYND_QP_BAD_TRANSITION and no change):
 *
 *   create -> RST --RST2INIT--> INIT --INIT2RTR--> RTR --RTR2RTS--> RTS
 *   any state --2ERR--> ERR        any state --2RST--> RST
 *
 * Entering RST (create, 2RST, destroy) calls sim_engine_qp_reset(); 2ERR calls
 * sim_engine_qp_error() so the engine flushes outstanding WQEs.
 *
 * Buffer (one umem, from wq_umem_offset): RQ (2^log_rq_size WQEs of
 * 16 << log_rq_stride bytes, regular RQ only), then SQ (2^log_sq_size 64-byte
 * WQEBBs) at the next 64-byte boundary. Doorbell record: 8 bytes at
 * qpc.dbr_addr in the dbr umem ([0] receive, [1] send).
 */
#include <string.h>

#include "sim/sim.h"

#define SIM_WQEBB_BYTES 64u

static inline uint64_t sim_align64(uint64_t v)
{
	return (v + 63) & ~(uint64_t)63;
}

static bool sim_mtu_ok(uint32_t mtu)
{
	return mtu >= KR_MTU_256 && mtu <= KR_MTU_4K;
}

uint8_t sim_cmd_create_qp(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	const void *qpc = KR_PRM_ADDR(create_qp_in, c->in, qpc);
	uint32_t st = KR_PRM_GET(qpc, qpc, st);
	uint32_t rq_type = KR_PRM_GET(qpc, qpc, rq_type);
	uint32_t no_sq = KR_PRM_GET(qpc, qpc, no_sq);
	uint32_t log_sq = KR_PRM_GET(qpc, qpc, log_sq_size);
	uint32_t log_rq = KR_PRM_GET(qpc, qpc, log_rq_size);
	uint32_t log_rq_stride = KR_PRM_GET(qpc, qpc, log_rq_stride);
	uint32_t pdn = KR_PRM_GET(qpc, qpc, pd);
	uint32_t cqn_snd = KR_PRM_GET(qpc, qpc, cqn_snd);
	uint32_t cqn_rcv = KR_PRM_GET(qpc, qpc, cqn_rcv);
	uint32_t uar_page = KR_PRM_GET(qpc, qpc, uar_page);
	uint32_t srqn = KR_PRM_GET(qpc, qpc, srqn_rmpn_xrqn);
	uint32_t wq_id = KR_PRM_GET(create_qp_in, c->in, wq_umem_id);
	uint64_t wq_off = KR_PRM_GET64(create_qp_in, c->in, wq_umem_offset);
	uint32_t dbr_id = KR_PRM_GET(qpc, qpc, dbr_umem_id);
	uint64_t dbr_off = KR_PRM_GET64(qpc, qpc, dbr_addr);
	struct sim_cq *scq = NULL, *rcq = NULL;
	struct sim_umem *wq, *dbr;
	struct sim_srq *srq = NULL;
	struct sim_uar *uar;
	struct sim_pd *pd;
	uint64_t rq_bytes = 0, sq_bytes = 0;
	uint32_t i;

	/* parameters */
	if (st != KR_QPC_ST_RC && st != KR_QPC_ST_DCI)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_BAD_ST);
	if (KR_PRM_GET(qpc, qpc, ts_format) > KR_TS_FORMAT_REAL_TIME)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_TS_FORMAT);
	if (st == KR_QPC_ST_DCI) {
		if (rq_type != KR_QPC_RQ_TYPE_ZERO_SIZE_RQ)
			return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_DCI_RQ);
		if (no_sq)
			return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_DCI_NO_SQ);
	} else if (rq_type != KR_QPC_RQ_TYPE_REGULAR && rq_type != KR_QPC_RQ_TYPE_SRQ_RMP_XRC &&
		   rq_type != KR_QPC_RQ_TYPE_ZERO_SIZE_RQ) {
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_BAD_RQ_TYPE);
	}
	if (log_sq > SIM_LOG_MAX_QP_SZ)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_SQ_SIZE);
	if (rq_type == KR_QPC_RQ_TYPE_REGULAR) {
		if (log_rq > SIM_LOG_MAX_QP_SZ)
			return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_RQ_SIZE);
		if ((16u << log_rq_stride) > SIM_MAX_WQE_SZ_RQ)
			return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_RQ_STRIDE);
		rq_bytes = ((uint64_t)1 << log_rq) << (log_rq_stride + 4);
	}
	if (!no_sq)
		sq_bytes = (uint64_t)SIM_WQEBB_BYTES << log_sq;
	if (KR_PRM_GET(qpc, qpc, log_msg_max) > SIM_LOG_MAX_MSG)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_MSG_MAX);
	if (!KR_PRM_GET(create_qp_in, c->in, wq_umem_valid))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_NO_WQ_UMEM);
	if (!KR_PRM_GET(qpc, qpc, dbr_umem_valid))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_NO_DBR_UMEM);

	/* objects it names */
	pd = sim_pd_get(sh, pdn);
	if (!pd)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_PD);
	if (!no_sq || cqn_snd) {
		scq = sim_cq_get(sh, cqn_snd);
		if (!scq)
			return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_CQ_SND);
	}
	if (st == KR_QPC_ST_RC || cqn_rcv) {
		rcq = sim_cq_get(sh, cqn_rcv);
		if (!rcq)
			return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_CQ_RCV);
	}
	uar = sim_uar_get(sh, uar_page);
	if (!uar)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_UAR);
	if (rq_type == KR_QPC_RQ_TYPE_SRQ_RMP_XRC) {
		srq = sim_srq_get(sh, srqn);
		if (!srq)
			return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_SRQ);
	}
	wq = sim_umem_get(sh, wq_id);
	if (!wq)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_BUF_UMEM);
	dbr = sim_umem_get(sh, dbr_id);
	if (!dbr)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_DBR_UMEM);
	if (!sim_range_fits(wq_off, sim_align64(rq_bytes) + sq_bytes, wq->size))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_WQ_RANGE);
	if ((dbr_off & 7) || !sim_range_fits(dbr_off, 8, dbr->size))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_DBR_RANGE);

	for (i = 0; i < SIM_MAX_QP && sh->qp[i].in_use; i++)
		;
	if (i == SIM_MAX_QP)
		return sim_cmd_fail(c, KR_CMD_STAT_NO_RES_ERR, SIM_SYND_QP_TABLE_FULL);

	/* valid: take references, fill the entry */
	sh->qp[i] = (struct sim_qp){
	    .in_use = 1,
	    .st = (uint8_t)st,
	    .state = KR_QPC_STATE_RST,
	    .pdn = pdn,
	    .cqn_snd = scq ? cqn_snd : 0,
	    .cqn_rcv = rcq ? cqn_rcv : 0,
	    .rq_type = (uint8_t)rq_type,
	    .srqn = srq ? srqn : 0,
	    .uar_page = uar_page,
	    .user_index = KR_PRM_GET(qpc, qpc, user_index),
	    .log_sq_size = (uint8_t)log_sq,
	    .log_rq_size = rq_type == KR_QPC_RQ_TYPE_REGULAR ? (uint8_t)log_rq : 0,
	    .log_rq_stride = rq_type == KR_QPC_RQ_TYPE_REGULAR ? (uint8_t)log_rq_stride : 0,
	    .no_sq = (uint8_t)no_sq,
	    .wq_umem_id = wq_id,
	    .wq_umem_offset = wq_off,
	    .dbr_umem_id = dbr_id,
	    .dbr_offset = dbr_off,
	};
	pd->refcnt++;
	if (scq)
		scq->refcnt++;
	if (rcq)
		rcq->refcnt++;
	uar->refcnt++;
	if (srq)
		srq->refcnt++;
	wq->refcnt++;
	dbr->refcnt++;
	sim_engine_qp_reset(c->dev, i);

	c->obj_id = SIM_QPN_BASE + i;
	KR_PRM_SET(create_qp_out, c->out, qpn, c->obj_id);
	return KR_CMD_STAT_OK;
}

static void sim_ref_put_umem(struct sim_shared *sh, uint32_t id)
{
	struct sim_umem *u = sim_umem_get(sh, id);

	if (u && u->refcnt)
		u->refcnt--;
}

uint8_t sim_cmd_destroy_qp(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	uint32_t qpn = KR_PRM_GET(destroy_qp_in, c->in, qpn);
	struct sim_qp *qp = sim_qp_get(sh, qpn);
	struct sim_pd *pd;
	struct sim_cq *cq;
	struct sim_srq *srq;
	uint32_t idx;

	if (!qp)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_QP);
	idx = qpn - SIM_QPN_BASE;
	sim_engine_qp_reset(c->dev, idx);

	pd = sim_pd_get(sh, qp->pdn);
	if (pd && pd->refcnt)
		pd->refcnt--;
	cq = qp->cqn_snd ? sim_cq_get(sh, qp->cqn_snd) : NULL;
	if (cq && cq->refcnt)
		cq->refcnt--;
	cq = qp->cqn_rcv ? sim_cq_get(sh, qp->cqn_rcv) : NULL;
	if (cq && cq->refcnt)
		cq->refcnt--;
	srq = qp->srqn ? sim_srq_get(sh, qp->srqn) : NULL;
	if (srq && srq->refcnt)
		srq->refcnt--;
	if (sh->uar[qp->uar_page - 1].refcnt) /* counted even if freed: see free_uar */
		sh->uar[qp->uar_page - 1].refcnt--;
	sim_ref_put_umem(sh, qp->wq_umem_id);
	sim_ref_put_umem(sh, qp->dbr_umem_id);
	qp->in_use = 0;
	return KR_CMD_STAT_OK;
}

/* Forget what the transitions set; the creation attributes stay. */
static void sim_qp_clear_path(struct sim_qp *qp)
{
	qp->port = 0;
	qp->remote_qpn = 0;
	qp->mtu = 0;
	memset(qp->rgid, 0, sizeof(qp->rgid));
	memset(qp->rmac, 0, sizeof(qp->rmac));
	qp->sgid_index = 0;
	qp->hop_limit = 0;
	qp->ack_timeout = 0;
	qp->retry_count = 0;
	qp->rnr_retry = 0;
	qp->min_rnr_nak = 0;
	qp->log_sra_max = 0;
	qp->log_rra_max = 0;
	qp->rre = qp->rwe = qp->rae = 0;
	qp->next_send_psn = 0;
	qp->next_rcv_psn = 0;
}

static uint8_t sim_qp_rst2init(struct sim_cmd *c, struct sim_qp *qp)
{
	const void *qpc = KR_PRM_ADDR(rst2init_qp_in, c->in, qpc);
	const void *ads = KR_PRM_ADDR(qpc, qpc, primary_address_path);

	if (qp->state != KR_QPC_STATE_RST)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_QP_BAD_TRANSITION);
	if (KR_PRM_GET(ads, ads, vhca_port_num) != 1)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_PORT);

	qp->port = 1;
	qp->rre = (uint8_t)KR_PRM_GET(qpc, qpc, rre);
	qp->rwe = (uint8_t)KR_PRM_GET(qpc, qpc, rwe);
	qp->rae = (uint8_t)KR_PRM_GET(qpc, qpc, rae);
	qp->state = KR_QPC_STATE_INIT;
	return KR_CMD_STAT_OK;
}

static uint8_t sim_qp_init2rtr(struct sim_cmd *c, struct sim_qp *qp)
{
	const void *qpc = KR_PRM_ADDR(init2rtr_qp_in, c->in, qpc);
	const void *ads = KR_PRM_ADDR(qpc, qpc, primary_address_path);
	uint32_t port = KR_PRM_GET(ads, ads, vhca_port_num);
	uint32_t mtu = KR_PRM_GET(qpc, qpc, mtu);

	if (qp->state != KR_QPC_STATE_INIT)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_QP_BAD_TRANSITION);
	if (port != 0 && port != 1)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_PORT);
	if (!sim_mtu_ok(mtu))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_MTU);
	if (KR_PRM_GET(ads, ads, src_addr_index) >= SIM_GID_TABLE_LEN)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_GID_INDEX);
	if (KR_PRM_GET(qpc, qpc, log_rra_max) > SIM_LOG_MAX_RA)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_RA);
	if (KR_PRM_GET(qpc, qpc, log_msg_max) > SIM_LOG_MAX_MSG)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_MSG_MAX);

	qp->mtu = (uint8_t)mtu;
	if (qp->st == KR_QPC_ST_RC)
		qp->remote_qpn = KR_PRM_GET(qpc, qpc, remote_qpn);
	/* a DCI sends atomics only when INIT2RTR enabled them (rae, as UCX's DEVX DCIs) */
	if (qp->st == KR_QPC_ST_DCI &&
	    (KR_PRM_GET(init2rtr_qp_in, c->in, opt_param_mask) & KR_QP_OPTPAR_RAE))
		qp->rae = KR_PRM_GET(qpc, qpc, rae) &&
			  KR_PRM_GET(qpc, qpc, atomic_mode) == KR_QPC_ATOMIC_MODE_IB_SPEC;
	memcpy(qp->rgid, KR_PRM_ADDR(ads, ads, rgid_rip), sizeof(qp->rgid));
	qp->sgid_index = (uint8_t)KR_PRM_GET(ads, ads, src_addr_index);
	memcpy(qp->rmac, KR_PRM_ADS_RMAC(ads), sizeof(qp->rmac));
	qp->hop_limit = (uint8_t)KR_PRM_GET(ads, ads, hop_limit);
	qp->min_rnr_nak = (uint8_t)KR_PRM_GET(qpc, qpc, min_rnr_nak);
	qp->log_rra_max = (uint8_t)KR_PRM_GET(qpc, qpc, log_rra_max);
	qp->next_rcv_psn = KR_PRM_GET(qpc, qpc, next_rcv_psn);
	qp->state = KR_QPC_STATE_RTR;
	return KR_CMD_STAT_OK;
}

static uint8_t sim_qp_rtr2rts(struct sim_cmd *c, struct sim_qp *qp)
{
	const void *qpc = KR_PRM_ADDR(rtr2rts_qp_in, c->in, qpc);
	const void *ads = KR_PRM_ADDR(qpc, qpc, primary_address_path);

	if (qp->state != KR_QPC_STATE_RTR)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_QP_BAD_TRANSITION);
	if (KR_PRM_GET(qpc, qpc, log_sra_max) > SIM_LOG_MAX_RA)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_QP_RA);

	qp->ack_timeout = (uint8_t)KR_PRM_GET(ads, ads, ack_timeout);
	qp->retry_count = (uint8_t)KR_PRM_GET(qpc, qpc, retry_count);
	qp->rnr_retry = (uint8_t)KR_PRM_GET(qpc, qpc, rnr_retry);
	qp->log_sra_max = (uint8_t)KR_PRM_GET(qpc, qpc, log_sra_max);
	qp->next_send_psn = KR_PRM_GET(qpc, qpc, next_send_psn);
	qp->state = KR_QPC_STATE_RTS;
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_modify_qp(struct sim_cmd *c)
{
	uint16_t opcode = (uint16_t)KR_PRM_GET(mbox_in, c->in, opcode);
	/* every transition mailbox has qpn at the same place */
	uint32_t qpn = KR_PRM_GET(qp_2rst_in, c->in, qpn);
	struct sim_qp *qp = sim_qp_get(c->dev->sh, qpn);

	_Static_assert(KR_PRM_OFF(rst2init_qp_in, qpn) == KR_PRM_OFF(qp_2rst_in, qpn) &&
			   KR_PRM_OFF(init2rtr_qp_in, qpn) == KR_PRM_OFF(qp_2rst_in, qpn) &&
			   KR_PRM_OFF(rtr2rts_qp_in, qpn) == KR_PRM_OFF(qp_2rst_in, qpn) &&
			   KR_PRM_OFF(qp_2err_in, qpn) == KR_PRM_OFF(qp_2rst_in, qpn),
		       "transition mailboxes disagree on qpn");

	if (!qp)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_QP);

	switch (opcode) {
	case KR_CMD_OP_RST2INIT_QP:
		return sim_qp_rst2init(c, qp);
	case KR_CMD_OP_INIT2RTR_QP:
		return sim_qp_init2rtr(c, qp);
	case KR_CMD_OP_RTR2RTS_QP:
		return sim_qp_rtr2rts(c, qp);
	case KR_CMD_OP_2ERR_QP:
		qp->state = KR_QPC_STATE_ERR;
		sim_engine_qp_error(c->dev, qpn - SIM_QPN_BASE);
		return KR_CMD_STAT_OK;
	case KR_CMD_OP_2RST_QP:
		sim_qp_clear_path(qp);
		qp->state = KR_QPC_STATE_RST;
		sim_engine_qp_reset(c->dev, qpn - SIM_QPN_BASE);
		return KR_CMD_STAT_OK;
	default:
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_OP_ERR, SIM_SYND_UNSUPPORTED_OP);
	}
}

uint8_t sim_cmd_query_qp(struct sim_cmd *c)
{
	struct sim_qp *qp = sim_qp_get(c->dev->sh, KR_PRM_GET(query_qp_in, c->in, qpn));
	void *qpc = KR_PRM_ADDR(query_qp_out, c->out, qpc);
	void *ads = KR_PRM_ADDR(qpc, qpc, primary_address_path);

	if (!qp)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_QP);

	KR_PRM_SET(qpc, qpc, state, qp->state);
	KR_PRM_SET(qpc, qpc, st, qp->st);
	KR_PRM_SET(qpc, qpc, pm_state, KR_QPC_PM_STATE_MIGRATED);
	KR_PRM_SET(qpc, qpc, pd, qp->pdn);
	KR_PRM_SET(qpc, qpc, mtu, qp->mtu);
	KR_PRM_SET(qpc, qpc, log_rq_size, qp->log_rq_size);
	KR_PRM_SET(qpc, qpc, log_rq_stride, qp->log_rq_stride);
	KR_PRM_SET(qpc, qpc, no_sq, qp->no_sq);
	KR_PRM_SET(qpc, qpc, log_sq_size, qp->log_sq_size);
	KR_PRM_SET(qpc, qpc, uar_page, qp->uar_page);
	KR_PRM_SET(qpc, qpc, user_index, qp->user_index);
	KR_PRM_SET(qpc, qpc, remote_qpn, qp->remote_qpn);
	KR_PRM_SET(ads, ads, ack_timeout, qp->ack_timeout);
	KR_PRM_SET(ads, ads, src_addr_index, qp->sgid_index);
	KR_PRM_SET(ads, ads, hop_limit, qp->hop_limit);
	KR_PRM_SET(ads, ads, vhca_port_num, qp->port);
	memcpy(KR_PRM_ADDR(ads, ads, rgid_rip), qp->rgid, sizeof(qp->rgid));
	memcpy(KR_PRM_ADS_RMAC(ads), qp->rmac, sizeof(qp->rmac));
	KR_PRM_SET(qpc, qpc, log_sra_max, qp->log_sra_max);
	KR_PRM_SET(qpc, qpc, retry_count, qp->retry_count);
	KR_PRM_SET(qpc, qpc, rnr_retry, qp->rnr_retry);
	KR_PRM_SET(qpc, qpc, next_send_psn, qp->next_send_psn & 0xffffff);
	KR_PRM_SET(qpc, qpc, cqn_snd, qp->cqn_snd);
	KR_PRM_SET(qpc, qpc, log_rra_max, qp->log_rra_max);
	KR_PRM_SET(qpc, qpc, rre, qp->rre);
	KR_PRM_SET(qpc, qpc, rwe, qp->rwe);
	KR_PRM_SET(qpc, qpc, rae, qp->rae);
	KR_PRM_SET(qpc, qpc, min_rnr_nak, qp->min_rnr_nak);
	KR_PRM_SET(qpc, qpc, next_rcv_psn, qp->next_rcv_psn & 0xffffff);
	KR_PRM_SET(qpc, qpc, cqn_rcv, qp->cqn_rcv);
	KR_PRM_SET64(qpc, qpc, dbr_addr, qp->dbr_offset);
	KR_PRM_SET(qpc, qpc, rq_type, qp->rq_type);
	KR_PRM_SET(qpc, qpc, srqn_rmpn_xrqn, qp->srqn);
	KR_PRM_SET(qpc, qpc, dbr_umem_valid, 1);
	KR_PRM_SET(qpc, qpc, dbr_umem_id, qp->dbr_umem_id);
	KR_PRM_SET(qpc, qpc, hw_sq_wqebb_counter, qp->sq_ci & 0xffff);
	KR_PRM_SET(qpc, qpc, hw_rq_counter, qp->rq_ci);
	return KR_CMD_STAT_OK;
}
