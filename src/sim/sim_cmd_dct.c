/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Firmware commands for DC targets and the shared receive queues they take
 * receives from: CREATE_DCT, DRAIN_DCT, QUERY_DCT, DESTROY_DCT and
 * CREATE_RMP, QUERY_RMP, DESTROY_RMP. sh->lock held; mailboxes already checked
 * for sizes and reserved bits by sim_cmd.c.
 *
 * DCT states: the PRM creates a DCT and moves it to ACTIVE by itself; the sim
 * does that inside CREATE_DCT. DRAIN_DCT moves ACTIVE -> DRAINED at once: the
 * engine finishes every request it has started within the pass that holds
 * sh->lock, so nothing is left in flight to drain.
 *
 * SRQ = RMP with a cyclic WQ (basic_cyclic_rcv_wqe): 2^log_wq_sz WQEs of
 * 2^log_wq_stride bytes from the start of its umem (the wq context has no
 * umem offset), doorbell record (4 bytes, [0] = producer counter) at
 * wq.dbr_addr in its dbr umem.
 */
#include "sim/sim.h"

static bool sim_dct_mtu_ok(uint32_t mtu)
{
	return mtu >= KR_MTU_256 && mtu <= KR_MTU_4K;
}

uint8_t sim_cmd_create_dct(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	const void *dctc = KR_PRM_ADDR(create_dct_in, c->in, dct_context_entry);
	uint32_t pdn = KR_PRM_GET(dctc, dctc, pd);
	uint32_t cqn = KR_PRM_GET(dctc, dctc, cqn);
	uint32_t srqn = KR_PRM_GET(dctc, dctc, srqn_xrqn);
	uint32_t mtu = KR_PRM_GET(dctc, dctc, mtu);
	struct sim_srq *srq;
	struct sim_pd *pd;
	struct sim_cq *cq;
	uint32_t i;

	if (KR_PRM_GET(dctc, dctc, port) != 1)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_DCT_PORT);
	if (!sim_dct_mtu_ok(mtu))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_DCT_MTU);
	if (KR_PRM_GET(dctc, dctc, my_addr_index) >= SIM_GID_TABLE_LEN)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_DCT_GID_INDEX);
	pd = sim_pd_get(sh, pdn);
	if (!pd)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_PD);
	cq = sim_cq_get(sh, cqn);
	if (!cq)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_CQ);
	srq = sim_srq_get(sh, srqn);
	if (!srq)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_SRQ);

	for (i = 0; i < SIM_MAX_DCT && sh->dct[i].in_use; i++)
		;
	if (i == SIM_MAX_DCT)
		return sim_cmd_fail(c, KR_CMD_STAT_NO_RES_ERR, SIM_SYND_DCT_TABLE_FULL);

	sh->dct[i] = (struct sim_dct){
	    .in_use = 1,
	    .state = KR_DCTC_STATE_ACTIVE,
	    .pdn = pdn,
	    .cqn = cqn,
	    .srqn = srqn,
	    .user_index = KR_PRM_GET(dctc, dctc, user_index),
	    .dc_key = KR_PRM_GET64(dctc, dctc, dc_access_key),
	    .rre = (uint8_t)KR_PRM_GET(dctc, dctc, rre),
	    .rwe = (uint8_t)KR_PRM_GET(dctc, dctc, rwe),
	    .rae = (uint8_t)KR_PRM_GET(dctc, dctc, rae),
	    .min_rnr_nak = (uint8_t)KR_PRM_GET(dctc, dctc, min_rnr_nak),
	    .mtu = (uint8_t)mtu,
	    .port = 1,
	    .addr_index = (uint8_t)KR_PRM_GET(dctc, dctc, my_addr_index),
	};
	pd->refcnt++;
	cq->refcnt++;
	srq->refcnt++;
	c->obj_id = SIM_DCTN_BASE + i;
	KR_PRM_SET(create_dct_out, c->out, dctn, c->obj_id);
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_drain_dct(struct sim_cmd *c)
{
	struct sim_dct *dct = sim_dct_get(c->dev->sh, KR_PRM_GET(drain_dct_in, c->in, dctn));

	if (!dct)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_DCT);
	if (dct->state != KR_DCTC_STATE_ACTIVE)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_DCT_NOT_ACTIVE);
	dct->state = KR_DCTC_STATE_DRAINED;
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_query_dct(struct sim_cmd *c)
{
	struct sim_dct *dct = sim_dct_get(c->dev->sh, KR_PRM_GET(query_dct_in, c->in, dctn));
	void *dctc = KR_PRM_ADDR(query_dct_out, c->out, dct_context_entry);

	if (!dct)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_DCT);
	KR_PRM_SET(dctc, dctc, state, dct->state);
	KR_PRM_SET(dctc, dctc, user_index, dct->user_index);
	KR_PRM_SET(dctc, dctc, cqn, dct->cqn);
	KR_PRM_SET(dctc, dctc, rre, dct->rre);
	KR_PRM_SET(dctc, dctc, rwe, dct->rwe);
	KR_PRM_SET(dctc, dctc, rae, dct->rae);
	KR_PRM_SET(dctc, dctc, min_rnr_nak, dct->min_rnr_nak);
	KR_PRM_SET(dctc, dctc, srqn_xrqn, dct->srqn);
	KR_PRM_SET(dctc, dctc, pd, dct->pdn);
	KR_PRM_SET64(dctc, dctc, dc_access_key, dct->dc_key);
	KR_PRM_SET(dctc, dctc, mtu, dct->mtu);
	KR_PRM_SET(dctc, dctc, port, dct->port);
	KR_PRM_SET(dctc, dctc, dc_access_key_violation_count, dct->key_violations);
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_destroy_dct(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	struct sim_dct *dct = sim_dct_get(sh, KR_PRM_GET(destroy_dct_in, c->in, dctn));
	struct sim_srq *srq;
	struct sim_pd *pd;
	struct sim_cq *cq;

	if (!dct)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_DCT);
	pd = sim_pd_get(sh, dct->pdn);
	cq = sim_cq_get(sh, dct->cqn);
	srq = sim_srq_get(sh, dct->srqn);
	if (pd && pd->refcnt)
		pd->refcnt--;
	if (cq && cq->refcnt)
		cq->refcnt--;
	if (srq && srq->refcnt)
		srq->refcnt--;
	dct->in_use = 0;
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_create_rmp(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	const void *rmpc = KR_PRM_ADDR(create_rmp_in, c->in, ctx);
	const void *wq = KR_PRM_ADDR(rmpc, rmpc, wq);
	uint32_t log_sz = KR_PRM_GET(wq, wq, log_wq_sz);
	uint32_t log_stride = KR_PRM_GET(wq, wq, log_wq_stride);
	uint32_t pdn = KR_PRM_GET(wq, wq, pd);
	uint32_t wq_id = KR_PRM_GET(wq, wq, wq_umem_id);
	uint32_t dbr_id = KR_PRM_GET(wq, wq, dbr_umem_id);
	uint64_t dbr_off = KR_PRM_GET64(wq, wq, dbr_addr);
	struct sim_umem *umem, *dbr;
	struct sim_pd *pd;
	uint32_t i;

	if (KR_PRM_GET(rmpc, rmpc, state) != KR_RMPC_STATE_RDY)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RMP_STATE);
	if (!KR_PRM_GET(rmpc, rmpc, basic_cyclic_rcv_wqe))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RMP_NOT_BASIC);
	if (KR_PRM_GET(wq, wq, wq_type) != KR_WQ_TYPE_CYCLIC)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RMP_NOT_CYCLIC);
	if (KR_PRM_GET(wq, wq, wq_signature))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RMP_SIGNATURE);
	if (log_sz > SIM_LOG_MAX_SRQ_SZ)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RMP_SIZE);
	if (log_stride < 4 || (1u << log_stride) > SIM_MAX_WQE_SZ_RQ)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RMP_STRIDE);
	if (!KR_PRM_GET(wq, wq, wq_umem_valid))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RMP_NO_UMEM);
	if (!KR_PRM_GET(wq, wq, dbr_umem_valid))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RMP_NO_DBR_UMEM);
	pd = sim_pd_get(sh, pdn);
	if (!pd)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_PD);
	umem = sim_umem_get(sh, wq_id);
	if (!umem)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_BUF_UMEM);
	dbr = sim_umem_get(sh, dbr_id);
	if (!dbr)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_DBR_UMEM);
	if (!sim_range_fits(0, ((uint64_t)1 << log_sz) << log_stride, umem->size))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RMP_RANGE);
	if ((dbr_off & 7) || !sim_range_fits(dbr_off, 4, dbr->size))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RMP_DBR_RANGE);

	for (i = 0; i < SIM_MAX_SRQ && sh->srq[i].in_use; i++)
		;
	if (i == SIM_MAX_SRQ)
		return sim_cmd_fail(c, KR_CMD_STAT_NO_RES_ERR, SIM_SYND_SRQ_TABLE_FULL);

	sh->srq[i] = (struct sim_srq){
	    .in_use = 1,
	    .state = KR_RMPC_STATE_RDY,
	    .pdn = pdn,
	    .log_size = (uint8_t)log_sz,
	    .log_stride = (uint8_t)log_stride,
	    .umem_id = wq_id,
	    .umem_offset = 0,
	    .dbr_umem_id = dbr_id,
	    .dbr_offset = dbr_off,
	};
	pd->refcnt++;
	umem->refcnt++;
	dbr->refcnt++;
	c->obj_id = i + 1;
	KR_PRM_SET(create_rmp_out, c->out, rmpn, c->obj_id);
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_query_rmp(struct sim_cmd *c)
{
	struct sim_srq *srq = sim_srq_get(c->dev->sh, KR_PRM_GET(query_rmp_in, c->in, rmpn));
	void *rmpc = KR_PRM_ADDR(query_rmp_out, c->out, rmp_context);
	void *wq = KR_PRM_ADDR(rmpc, rmpc, wq);

	if (!srq)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_SRQ);
	KR_PRM_SET(rmpc, rmpc, state, srq->state);
	KR_PRM_SET(rmpc, rmpc, basic_cyclic_rcv_wqe, 1);
	KR_PRM_SET(wq, wq, wq_type, KR_WQ_TYPE_CYCLIC);
	KR_PRM_SET(wq, wq, pd, srq->pdn);
	KR_PRM_SET64(wq, wq, dbr_addr, srq->dbr_offset);
	KR_PRM_SET(wq, wq, hw_counter, srq->ci);
	KR_PRM_SET(wq, wq, log_wq_stride, srq->log_stride);
	KR_PRM_SET(wq, wq, log_wq_sz, srq->log_size);
	KR_PRM_SET(wq, wq, dbr_umem_valid, 1);
	KR_PRM_SET(wq, wq, wq_umem_valid, 1);
	KR_PRM_SET(wq, wq, dbr_umem_id, srq->dbr_umem_id);
	KR_PRM_SET(wq, wq, wq_umem_id, srq->umem_id);
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_destroy_rmp(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	struct sim_srq *srq = sim_srq_get(sh, KR_PRM_GET(destroy_rmp_in, c->in, rmpn));
	struct sim_umem *umem, *dbr;
	struct sim_pd *pd;

	if (!srq)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_SRQ);
	if (srq->refcnt)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_SRQ_BUSY);
	pd = sim_pd_get(sh, srq->pdn);
	umem = sim_umem_get(sh, srq->umem_id);
	dbr = sim_umem_get(sh, srq->dbr_umem_id);
	if (pd && pd->refcnt)
		pd->refcnt--;
	if (umem && umem->refcnt)
		umem->refcnt--;
	if (dbr && dbr->refcnt)
		dbr->refcnt--;
	srq->in_use = 0;
	return KR_CMD_STAT_OK;
}
