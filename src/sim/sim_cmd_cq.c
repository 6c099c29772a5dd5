/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Firmware commands for completion queues: CREATE_CQ, DESTROY_CQ, QUERY_CQ
 * (the context with the device's producer and the consumer counter). sh->lock
 * held; mailboxes already checked for sizes and reserved bits by sim_cmd.c.
 *
 * A CQ is 2^log_cq_size 64-byte CQEs at cq_umem_offset in its umem, and an
 * 8-byte doorbell record ([0] consumer index, [1] arm) at cqc.dbr_addr in
 * its dbr umem. The engine writes CQEs from pi = 0.
 */
#include "sim/sim.h"

#define SIM_CQE_BYTES 64u

uint8_t sim_cmd_create_cq(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	const void *cqc = KR_PRM_ADDR(create_cq_in, c->in, cq_context);
	uint32_t log_size = KR_PRM_GET(cqc, cqc, log_cq_size);
	uint32_t uar_page = KR_PRM_GET(cqc, cqc, uar_page);
	uint32_t umem_id = KR_PRM_GET(create_cq_in, c->in, cq_umem_id);
	uint64_t umem_off = KR_PRM_GET64(create_cq_in, c->in, cq_umem_offset);
	uint32_t dbr_id = KR_PRM_GET(cqc, cqc, dbr_umem_id);
	uint64_t dbr_off = KR_PRM_GET64(cqc, cqc, dbr_addr);
	struct sim_umem *umem, *dbr;
	struct sim_uar *uar;
	uint32_t i;

	if (log_size > SIM_LOG_MAX_CQ_SZ)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_CQ_SIZE);
	if (KR_PRM_GET(cqc, cqc, cqe_sz) != KR_CQE_SIZE_64)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_CQ_CQE_SZ);
	if (KR_PRM_GET(cqc, cqc, cc))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_CQ_COLLAPSED);
	if (KR_PRM_GET(cqc, cqc, c_eqn_or_apu_element) != 0)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_CQ_EQN);
	if (!KR_PRM_GET(create_cq_in, c->in, cq_umem_valid))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_CQ_NO_UMEM);
	if (!KR_PRM_GET(cqc, cqc, dbr_umem_valid))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_CQ_NO_DBR_UMEM);
	uar = sim_uar_get(sh, uar_page);
	if (!uar)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_UAR);
	umem = sim_umem_get(sh, umem_id);
	if (!umem)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_BUF_UMEM);
	dbr = sim_umem_get(sh, dbr_id);
	if (!dbr)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_DBR_UMEM);
	if (!sim_range_fits(umem_off, (uint64_t)SIM_CQE_BYTES << log_size, umem->size))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_CQ_RANGE);
	if ((dbr_off & 7) || !sim_range_fits(dbr_off, 8, dbr->size))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_CQ_DBR_RANGE);

	for (i = 0; i < SIM_MAX_CQ && sh->cq[i].in_use; i++)
		;
	if (i == SIM_MAX_CQ)
		return sim_cmd_fail(c, KR_CMD_STAT_NO_RES_ERR, SIM_SYND_CQ_TABLE_FULL);

	sh->cq[i] = (struct sim_cq){
	    .in_use = 1,
	    .log_size = (uint8_t)log_size,
	    .uar_page = uar_page,
	    .umem_id = umem_id,
	    .umem_offset = umem_off,
	    .dbr_umem_id = dbr_id,
	    .dbr_offset = dbr_off,
	};
	uar->refcnt++;
	umem->refcnt++;
	dbr->refcnt++;
	c->obj_id = i + 1;
	KR_PRM_SET(create_cq_out, c->out, cqn, c->obj_id);
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_destroy_cq(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	struct sim_cq *cq = sim_cq_get(sh, KR_PRM_GET(destroy_cq_in, c->in, cqn));
	struct sim_umem *umem, *dbr;
	struct sim_uar *uar;

	if (!cq)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_CQ);
	if (cq->refcnt)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_CQ_BUSY);
	umem = sim_umem_get(sh, cq->umem_id);
	dbr = sim_umem_get(sh, cq->dbr_umem_id);
	uar = &sh->uar[cq->uar_page - 1]; /* may be freed but still counted: see free_uar */
	if (umem && umem->refcnt)
		umem->refcnt--;
	if (dbr && dbr->refcnt)
		dbr->refcnt--;
	if (uar->refcnt)
		uar->refcnt--;
	sim_event_cq_gone(c->dev, (uint32_t)(cq - sh->cq));
	cq->in_use = 0;
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_query_cq(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	struct sim_cq *cq = sim_cq_get(sh, KR_PRM_GET(query_cq_in, c->in, cqn));
	void *cqc = KR_PRM_ADDR(query_cq_out, c->out, cq_context);
	volatile uint32_t *dbrec;

	if (!cq)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_CQ);
	KR_PRM_SET(cqc, cqc, cqe_sz, KR_CQE_SIZE_64);
	KR_PRM_SET(cqc, cqc, log_cq_size, cq->log_size);
	KR_PRM_SET(cqc, cqc, uar_page, cq->uar_page);
	KR_PRM_SET(cqc, cqc, dbr_umem_valid, 1);
	KR_PRM_SET(cqc, cqc, dbr_umem_id, cq->dbr_umem_id);
	KR_PRM_SET64(cqc, cqc, dbr_addr, cq->dbr_offset);
	/* the engine moves pi under sh->lock too: this is where it stands */
	KR_PRM_SET(cqc, cqc, producer_counter, cq->pi & 0xffffff);
	dbrec = sim_umem_ptr(c->dev, cq->dbr_umem_id, cq->dbr_offset, 8);
	if (dbrec)
		KR_PRM_SET(cqc, cqc, consumer_counter,
			   be32toh(__atomic_load_n(&dbrec[0], __ATOMIC_ACQUIRE)) & 0xffffff);
	return KR_CMD_STAT_OK;
}
