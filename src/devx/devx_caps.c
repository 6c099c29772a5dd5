/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Device capabilities: QUERY_HCA_CAP for the general capability page, current
 * values, parsed from cmd_hca_cap into struct kr_devx_caps. krcore decides what
 * to use from these fields, never from device IDs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_log.h"

/*
 * kr_devx_caps_query() - read the general capabilities of ctx's device.
 * Returns 0, -EINVAL, -ENOMEM, -EREMOTEIO (ctx->last_err set) or a backend errno.
 */
int kr_devx_caps_query(struct kr_devx_ctx *ctx, struct kr_devx_caps *caps)
{
	uint8_t in[KR_PRM_BYTES(query_hca_cap_in)] = {0};
	uint8_t *out;
	uint32_t v;
	void *cap;
	int rc;

	if (!ctx || !caps)
		return -EINVAL;
	/* 4 KiB capability page: keep it off the stack. */
	out = calloc(1, KR_PRM_BYTES(query_hca_cap_out));
	if (!out)
		return -ENOMEM;
	KR_PRM_SET(query_hca_cap_in, in, opcode, KR_CMD_OP_QUERY_HCA_CAP);
	KR_PRM_SET(query_hca_cap_in, in, op_mod,
		   (KR_HCA_CAP_GENERAL << 1) | KR_HCA_CAP_OPMOD_GET_CUR);
	rc = kr_devx_cmd(ctx, in, sizeof(in), out, KR_PRM_BYTES(query_hca_cap_out));
	if (rc)
		goto out_free;

	cap = KR_PRM_ADDR(query_hca_cap_out, out, capability);
	memset(caps, 0, sizeof(*caps));
	caps->log_max_qp = KR_PRM_GET(cmd_hca_cap, cap, log_max_qp);
	caps->log_max_qp_sz = KR_PRM_GET(cmd_hca_cap, cap, log_max_qp_sz);
	caps->log_max_cq = KR_PRM_GET(cmd_hca_cap, cap, log_max_cq);
	caps->log_max_cq_sz = KR_PRM_GET(cmd_hca_cap, cap, log_max_cq_sz);
	caps->log_max_srq = KR_PRM_GET(cmd_hca_cap, cap, log_max_srq);
	caps->log_max_srq_sz = KR_PRM_GET(cmd_hca_cap, cap, log_max_srq_sz);
	caps->log_max_pd = KR_PRM_GET(cmd_hca_cap, cap, log_max_pd);
	caps->log_max_mkey = KR_PRM_GET(cmd_hca_cap, cap, log_max_mkey);
	caps->log_max_msg = KR_PRM_GET(cmd_hca_cap, cap, log_max_msg);
	caps->log_max_ra_req_dc = KR_PRM_GET(cmd_hca_cap, cap, log_max_ra_req_dc);
	caps->log_max_ra_res_dc = KR_PRM_GET(cmd_hca_cap, cap, log_max_ra_res_dc);
	caps->log_max_ra_req_qp = KR_PRM_GET(cmd_hca_cap, cap, log_max_ra_req_qp);
	caps->log_max_ra_res_qp = KR_PRM_GET(cmd_hca_cap, cap, log_max_ra_res_qp);
	caps->num_ports = KR_PRM_GET(cmd_hca_cap, cap, num_ports);
	caps->port_type = KR_PRM_GET(cmd_hca_cap, cap, port_type);
	caps->cqe_version = KR_PRM_GET(cmd_hca_cap, cap, cqe_version);
	caps->max_wqe_sz_sq = KR_PRM_GET(cmd_hca_cap, cap, max_wqe_sz_sq);
	caps->max_wqe_sz_rq = KR_PRM_GET(cmd_hca_cap, cap, max_wqe_sz_rq);
	caps->max_wqe_sz_sq_dc = KR_PRM_GET(cmd_hca_cap, cap, max_wqe_sz_sq_dc);
	/* encoded as in the kernel's mlx5_get_gid_table_len: 8 << n entries, n <= 4 */
	v = KR_PRM_GET(cmd_hca_cap, cap, gid_table_size);
	caps->gid_table_len = v <= 4 ? (uint16_t)(8u << v) : 0;
	caps->vhca_id = KR_PRM_GET(cmd_hca_cap, cap, vhca_id);
	caps->dct = KR_PRM_GET(cmd_hca_cap, cap, dct);
	caps->basic_cyclic_rcv_wqe = KR_PRM_GET(cmd_hca_cap, cap, basic_cyclic_rcv_wqe);
	/* two buffers of half of it per UAR register, as the kernel's bfregs */
	v = KR_PRM_GET(cmd_hca_cap, cap, log_bf_reg_size);
	caps->bf_reg_size =
	    KR_PRM_GET(cmd_hca_cap, cap, bf) && v >= 7 && v <= 11 ? (uint16_t)(1u << v) : 0;
	caps->roce = KR_PRM_GET(cmd_hca_cap, cap, roce);
	caps->atomic = KR_PRM_GET(cmd_hca_cap, cap, atomic);
	caps->rc = KR_PRM_GET(cmd_hca_cap, cap, rc);
	/* without RoCE the kernel's mlx5_get_qp_default_ts reads the SQ's */
	caps->qp_ts_format = KR_PRM_GET(cmd_hca_cap, cap, sq_ts_format);
	if (!caps->roce) /* no RoCE page: its fields read as 0, as the kernel's do */
		goto out_free;
	/* the RoCE page: the timestamp formats QPs may ask for, and an
	 * Ethernet port's GID table (the kernel's mlx5_query_port_roce) */
	memset(out, 0, KR_PRM_BYTES(query_hca_cap_out));
	KR_PRM_SET(query_hca_cap_in, in, op_mod, (KR_HCA_CAP_ROCE << 1) | KR_HCA_CAP_OPMOD_GET_CUR);
	rc = kr_devx_cmd(ctx, in, sizeof(in), out, KR_PRM_BYTES(query_hca_cap_out));
	if (rc)
		goto out_free;
	caps->qp_ts_format = KR_PRM_GET(roce_cap, cap, qp_ts_format);
	if (caps->port_type == KR_PORT_TYPE_ETH)
		caps->gid_table_len = (uint16_t)KR_PRM_GET(roce_cap, cap, roce_address_table_size);
out_free:
	free(out);
	return rc;
}

int kr_devx_caps_check(const char *name, const struct kr_devx_caps *caps)
{
	if (caps->cqe_version != 1) {
		KR_ERR("devx", "%s: CQE version %u; krcore needs version 1 (user_index in CQEs)",
		       name, caps->cqe_version);
		return -EOPNOTSUPP;
	}
	if (!caps->dct) {
		KR_ERR("devx", "%s: no DC transport (cap.dct 0)", name);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* The kernel's mlx5_get_qp_default_ts: free-running only when that is all
 * the device has, DEFAULT for any other capability. */
uint8_t kr_devx_ts_format(const struct kr_devx_caps *caps)
{
	return caps->qp_ts_format == KR_TS_CAP_FREE_RUNNING ? KR_TS_FORMAT_FREE_RUNNING
							    : KR_TS_FORMAT_DEFAULT;
}
