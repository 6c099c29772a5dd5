/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Firmware commands for the device and its memory: QUERY_HCA_CAP, ALLOC_PD /
 * DEALLOC_PD, CREATE_MKEY / DESTROY_MKEY. sh->lock held; mailboxes already
 * checked for sizes and reserved bits by sim_cmd.c.
 *
 * MKEYs: only MTT mode over a umem (mkey_umem_valid = 1), as krcore creates
 * them. The key covers IO virtual addresses [start_addr, start_addr + len),
 * which map to umem bytes [mkey_umem_offset, mkey_umem_offset + len).
 * Keys are (mkey_index << 8) | mkey_7_0; sim_mem.c translates them.
 */
#include "sim/sim.h"

uint8_t sim_cmd_query_hca_cap(struct sim_cmd *c)
{
	uint16_t op_mod = (uint16_t)KR_PRM_GET(query_hca_cap_in, c->in, op_mod);
	void *cap = KR_PRM_ADDR(query_hca_cap_out, c->out, capability);

	/* op_mod = (capability type << 1) | current; cur and max are the same here. */
	if ((op_mod >> 1) == KR_HCA_CAP_ROCE) {
		KR_PRM_SET(roce_cap, cap, qp_ts_format, KR_TS_CAP_FREE_RUNNING_AND_REAL_TIME);
		KR_PRM_SET(roce_cap, cap, roce_address_table_size, SIM_GID_TABLE_LEN);
		return KR_CMD_STAT_OK;
	}
	if ((op_mod >> 1) != KR_HCA_CAP_GENERAL)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_CAP_TYPE);

	KR_PRM_SET(cmd_hca_cap, cap, log_max_srq_sz, SIM_LOG_MAX_SRQ_SZ);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_qp_sz, SIM_LOG_MAX_QP_SZ);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_qp, SIM_LOG_MAX_QP);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_srq, SIM_LOG_MAX_SRQ);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_cq_sz, SIM_LOG_MAX_CQ_SZ);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_cq, SIM_LOG_MAX_CQ);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_mkey, SIM_LOG_MAX_MKEY);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_ra_req_dc, SIM_LOG_MAX_RA);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_ra_res_dc, SIM_LOG_MAX_RA);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_ra_req_qp, SIM_LOG_MAX_RA);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_ra_res_qp, SIM_LOG_MAX_RA);
	KR_PRM_SET(cmd_hca_cap, cap, gid_table_size, 0); /* 8 entries: sim_port.c */
	KR_PRM_SET(cmd_hca_cap, cap, port_type, KR_PORT_TYPE_ETH);
	KR_PRM_SET(cmd_hca_cap, cap, num_ports, 1);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_msg, SIM_LOG_MAX_MSG);
	KR_PRM_SET(cmd_hca_cap, cap, cqe_version, 1);
	KR_PRM_SET(cmd_hca_cap, cap, dct, 1);
	KR_PRM_SET(cmd_hca_cap, cap, basic_cyclic_rcv_wqe, 1);
	KR_PRM_SET(cmd_hca_cap, cap, roce, 1);
	KR_PRM_SET(cmd_hca_cap, cap, atomic, 1);
	/* BlueFlame, as a ConnectX: two registers of 512 bytes per UAR page
	 * (blueflame=0: a device, or a host, without write-combining) */
	KR_PRM_SET(cmd_hca_cap, cap, bf, !c->dev->cfg.no_blueflame);
	KR_PRM_SET(cmd_hca_cap, cap, log_bf_reg_size, SIM_LOG_BF_REG_SIZE);
	KR_PRM_SET(cmd_hca_cap, cap, rc, 1);
	KR_PRM_SET(cmd_hca_cap, cap, log_max_pd, SIM_LOG_MAX_PD);
	KR_PRM_SET(cmd_hca_cap, cap, max_wqe_sz_sq, SIM_MAX_WQE_SZ_SQ);
	KR_PRM_SET(cmd_hca_cap, cap, max_wqe_sz_rq, SIM_MAX_WQE_SZ_RQ);
	KR_PRM_SET(cmd_hca_cap, cap, max_wqe_sz_sq_dc, SIM_MAX_WQE_SZ_SQ_DC);
	KR_PRM_SET(cmd_hca_cap, cap, log_pg_sz, 12);
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_alloc_pd(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;

	for (uint32_t i = 0; i < SIM_MAX_PD; i++) {
		if (sh->pd[i].in_use)
			continue;
		sh->pd[i] = (struct sim_pd){.in_use = 1};
		c->obj_id = i + 1;
		KR_PRM_SET(alloc_pd_out, c->out, pd, c->obj_id);
		return KR_CMD_STAT_OK;
	}
	return sim_cmd_fail(c, KR_CMD_STAT_NO_RES_ERR, SIM_SYND_PD_TABLE_FULL);
}

uint8_t sim_cmd_dealloc_pd(struct sim_cmd *c)
{
	struct sim_pd *pd = sim_pd_get(c->dev->sh, KR_PRM_GET(dealloc_pd_in, c->in, pd));

	if (!pd)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_PD);
	if (pd->refcnt)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_PD_BUSY);
	pd->in_use = 0;
	return KR_CMD_STAT_OK;
}

/*
 * The key's translation table: translations_octword_size octwords of two
 * 8-byte entries, each a page of 1 << log_page_size bytes, must cover
 * [start_addr, start_addr + len) from start_addr's page (the PRM's mkc; the
 * kernel's get_octo_len, DPDK's mlx5_devx_cmd_mkey_create size it so).
 */
static bool sim_mkey_xlt_covers(const void *mkc, uint64_t len)
{
	uint32_t shift = KR_PRM_GET(mkc, mkc, log_page_size);
	uint64_t start = KR_PRM_GET64(mkc, mkc, start_addr);
	uint64_t page = shift < 64 ? 1ull << shift : 0, npages;

	if (!page || len > UINT64_MAX - page)
		return false;
	npages = ((start & (page - 1)) + len + page - 1) >> shift;
	return (npages + 1) / 2 <= KR_PRM_GET(mkc, mkc, translations_octword_size);
}

uint8_t sim_cmd_create_mkey(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	const void *mkc = KR_PRM_ADDR(create_mkey_in, c->in, memory_key_mkey_entry);
	uint32_t mode =
	    KR_PRM_GET(mkc, mkc, access_mode_1_0) | (KR_PRM_GET(mkc, mkc, access_mode_4_2) << 2);
	uint32_t pdn = KR_PRM_GET(mkc, mkc, pd);
	uint32_t umem_id = KR_PRM_GET(create_mkey_in, c->in, mkey_umem_id);
	uint64_t umem_off = KR_PRM_GET64(create_mkey_in, c->in, mkey_umem_offset);
	uint64_t len = KR_PRM_GET64(mkc, mkc, len);
	struct sim_umem *umem;
	struct sim_pd *pd;
	uint32_t i;

	if (mode != KR_MKC_ACCESS_MODE_MTT)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_MKEY_ACCESS_MODE);
	if (KR_PRM_GET(mkc, mkc, free))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_MKEY_FREE);
	if (KR_PRM_GET(mkc, mkc, umr_en))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_MKEY_UMR);
	if (KR_PRM_GET(mkc, mkc, length64))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_MKEY_LEN64);
	if (KR_PRM_GET(mkc, mkc, qpn) != 0xffffff)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_MKEY_QPN);
	if (!KR_PRM_GET(create_mkey_in, c->in, mkey_umem_valid))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_MKEY_NO_UMEM);
	if (KR_PRM_GET(mkc, mkc, log_page_size) < SIM_ADAPTER_PAGE_SHIFT)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_MKEY_PAGE_SIZE);
	if (!sim_mkey_xlt_covers(mkc, len))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_MKEY_XLT_SIZE);
	pd = sim_pd_get(sh, pdn);
	if (!pd)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_PD);
	umem = sim_umem_get(sh, umem_id);
	if (!umem)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_MKEY_UMEM);
	if (!sim_range_fits(umem_off, len, umem->size))
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_MKEY_RANGE);

	for (i = 0; i < SIM_MAX_MKEY && sh->mkey[i].in_use; i++)
		;
	if (i == SIM_MAX_MKEY)
		return sim_cmd_fail(c, KR_CMD_STAT_NO_RES_ERR, SIM_SYND_MKEY_TABLE_FULL);

	sh->mkey[i] = (struct sim_mkey){
	    .in_use = 1,
	    .variant = (uint8_t)KR_PRM_GET(mkc, mkc, mkey_7_0),
	    .pdn = pdn,
	    .umem_id = umem_id,
	    .umem_offset = umem_off,
	    .start_addr = KR_PRM_GET64(mkc, mkc, start_addr),
	    .len = len,
	    .lr = (uint8_t)KR_PRM_GET(mkc, mkc, lr),
	    .lw = (uint8_t)KR_PRM_GET(mkc, mkc, lw),
	    .rr = (uint8_t)KR_PRM_GET(mkc, mkc, rr),
	    .rw = (uint8_t)KR_PRM_GET(mkc, mkc, rw),
	    .a = (uint8_t)KR_PRM_GET(mkc, mkc, a),
	};
	pd->refcnt++;
	umem->refcnt++;
	c->obj_id = i + 1;
	KR_PRM_SET(create_mkey_out, c->out, mkey_index, c->obj_id);
	return KR_CMD_STAT_OK;
}

uint8_t sim_cmd_destroy_mkey(struct sim_cmd *c)
{
	struct sim_shared *sh = c->dev->sh;
	struct sim_mkey *mkey = sim_mkey_get(sh, KR_PRM_GET(destroy_mkey_in, c->in, mkey_index));
	struct sim_umem *umem;
	struct sim_pd *pd;

	if (!mkey)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_MKEY);
	pd = sim_pd_get(sh, mkey->pdn);
	umem = sim_umem_get(sh, mkey->umem_id);
	if (pd && pd->refcnt)
		pd->refcnt--;
	if (umem && umem->refcnt)
		umem->refcnt--;
	mkey->in_use = 0;
	return KR_CMD_STAT_OK;
}
