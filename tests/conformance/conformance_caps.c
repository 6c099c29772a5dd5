/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: what krcore reads from QUERY_HCA_CAP and what it refuses.
 *  - gid_table_size is encoded: 8 << n entries for n <= 4, anything else
 *    invalid (the kernel's mlx5_get_gid_table_len); that is an InfiniBand
 *    port's table. An Ethernet port's is the RoCE page's
 *    roce_address_table_size (the kernel's mlx5_query_port_roce), which can
 *    be far longer: hosts with many addresses or VLANs have RoCE v2 entries
 *    past 8 << gid_table_size.
 *  - cqe_version: the CQ poller dispatches on the CQE's user_index, which
 *    only version 1 carries; a device (or, on hardware, a user context)
 *    without it is refused at open instead of misrouting completions.
 *  - no DC (cap.dct 0): refused.
 *  - basic_cyclic_rcv_wqe: what krcore's SRQs need (conformance_srq).
 *  - BlueFlame: cap.bf and a register of 1 << log_bf_reg_size bytes
 *    (128 B .. 2 KiB, two buffers of half), else none.
 *  - the RoCE page (capability type 4) is read only on a RoCE device, for
 *    qp_ts_format (conformance_ts_format); without RoCE the timestamp
 *    capability is the general page's sq_ts_format, as the kernel's
 *    mlx5_get_qp_default_ts reads it.
 * The capability page comes from a recording device that answers the
 * command with the fields set at the offsets test_devx_prm_layout checks
 * against the kernel's mlx5_ifc.h.
 */
#include <errno.h>
#include <string.h>

#include "conf_fixture.h"
#include "kr_test.h"

static struct {
	uint32_t gid_table_size, cqe_version, dct, roce, qp_ts, bf, log_bf, roce_gids, eth, sq_ts;
	int roce_queries;
} g_cap;

static void answer(struct conf_dev *d, const void *in, void *out, size_t outlen)
{
	void *cap = KR_PRM_ADDR(query_hca_cap_out, out, capability);

	(void)d;
	CHECK_EQ(KR_PRM_GET(query_hca_cap_in, in, opcode), KR_CMD_OP_QUERY_HCA_CAP);
	CHECK(outlen >= KR_PRM_BYTES(query_hca_cap_out));
	if (KR_PRM_GET(query_hca_cap_in, in, op_mod) == ((KR_HCA_CAP_ROCE << 1) | 1)) {
		g_cap.roce_queries++;
		KR_PRM_SET(roce_cap, cap, qp_ts_format, g_cap.qp_ts);
		KR_PRM_SET(roce_cap, cap, roce_address_table_size, g_cap.roce_gids);
		return;
	}
	CHECK_EQ(KR_PRM_GET(query_hca_cap_in, in, op_mod), (KR_HCA_CAP_GENERAL << 1) | 1);
	KR_PRM_SET(cmd_hca_cap, cap, gid_table_size, g_cap.gid_table_size);
	KR_PRM_SET(cmd_hca_cap, cap, cqe_version, g_cap.cqe_version);
	KR_PRM_SET(cmd_hca_cap, cap, dct, g_cap.dct);
	KR_PRM_SET(cmd_hca_cap, cap, roce, g_cap.roce);
	KR_PRM_SET(cmd_hca_cap, cap, basic_cyclic_rcv_wqe, 1);
	KR_PRM_SET(cmd_hca_cap, cap, bf, g_cap.bf);
	KR_PRM_SET(cmd_hca_cap, cap, log_bf_reg_size, g_cap.log_bf);
	KR_PRM_SET(cmd_hca_cap, cap, port_type, g_cap.eth ? KR_PORT_TYPE_ETH : KR_PORT_TYPE_IB);
	KR_PRM_SET(cmd_hca_cap, cap, sq_ts_format, g_cap.sq_ts);
}

int main(void)
{
	struct kr_devx_caps caps;
	struct conf_dev d;

	conf_dev_init(&d, true);
	d.answer = answer;
	g_cap.cqe_version = 1;
	g_cap.dct = 1;
	for (uint32_t n = 0; n <= 6; n++) {
		g_cap.gid_table_size = n;
		CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
		CHECK_EQ(caps.gid_table_len, n <= 4 ? 8u << n : 0);
	}
	CHECK_EQ(g_cap.roce_queries, 0); /* an InfiniBand device has no RoCE page */
	g_cap.sq_ts = KR_TS_CAP_REAL_TIME;
	CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
	CHECK_EQ(caps.qp_ts_format, KR_TS_CAP_REAL_TIME); /* the SQ's, without RoCE */
	g_cap.sq_ts = 0;
	CHECK(caps.basic_cyclic_rcv_wqe);
	CHECK_EQ(caps.bf_reg_size, 0); /* cap.bf 0 */
	g_cap.bf = 1;
	g_cap.log_bf = 9;
	CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
	CHECK_EQ(caps.bf_reg_size, 512);
	g_cap.log_bf = 31; /* nothing a UAR page holds */
	CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
	CHECK_EQ(caps.bf_reg_size, 0);
	g_cap.bf = 0;
	g_cap.log_bf = 9;
	CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
	CHECK_EQ(caps.bf_reg_size, 0);
	g_cap.roce = 1;
	g_cap.qp_ts = KR_TS_CAP_REAL_TIME;
	CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
	CHECK_EQ(g_cap.roce_queries, 1);
	CHECK_EQ(caps.qp_ts_format, KR_TS_CAP_REAL_TIME);
	CHECK_OK(kr_devx_caps_check("conf", &caps));
	/* an Ethernet port's GID table is the RoCE page's, past 8 << n */
	g_cap.gid_table_size = 0;
	g_cap.roce_gids = 255;
	CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
	CHECK_EQ(caps.gid_table_len, 8); /* a RoCE-capable device with an IB port */
	g_cap.eth = 1;
	CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
	CHECK_EQ(caps.gid_table_len, 255);

	g_cap.cqe_version = 0;
	CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
	CHECK_EQ(caps.cqe_version, 0);
	CHECK_ERR(kr_devx_caps_check("conf", &caps), -EOPNOTSUPP);
	g_cap.cqe_version = 2; /* not a version this poller parses either */
	CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
	CHECK_ERR(kr_devx_caps_check("conf", &caps), -EOPNOTSUPP);
	g_cap.cqe_version = 1;
	g_cap.dct = 0;
	CHECK_OK(kr_devx_caps_query(&d.ctx, &caps));
	CHECK_ERR(kr_devx_caps_check("conf", &caps), -EOPNOTSUPP);
	KR_PASS("conformance_caps");
}
