/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: the quality of service the keeper's --traffic-class and
 * --priority give every path reaches each place the device reads it, as
 * the kernel's mlx5_set_path, rdma-core's mlx5_create_ah and UCX's DEVX
 * QPs and DCTs write it:
 *  - an RC QP's and a DCI's INIT2RTR path (qpc.primary_address_path):
 *    tclass; on Ethernet eth_prio = priority and, on RoCE v2, dscp =
 *    tclass >> 2 (not on RoCE v1); on InfiniBand sl = the SL;
 *  - a DCT (dctc): tclass; on Ethernet eth_prio and (RoCE v2) dscp;
 *  - a DC address vector's stat_rate_sl and tclass: conformance_av_bytes.
 * Field offsets are the kernel's mlx5_ifc.h ones (test_devx_prm_layout).
 */
#include <string.h>

#include "conf_fixture.h"
#include "kr_test.h"

#define TCLASS (46u << 2 | 1u) /* DSCP 46 (EF) with ECT(1) */

static const void *ads_of(const struct conf_dev *d)
{
	const void *qpc = KR_PRM_ADDR(init2rtr_qp_in, d->last_in, qpc);

	CHECK_EQ(KR_PRM_GET(init2rtr_qp_in, d->last_in, opcode), KR_CMD_OP_INIT2RTR_QP);
	return KR_PRM_ADDR(qpc, qpc, primary_address_path);
}

/* INIT2RTR of a QP of type on d, its path from local to peer; d->last_in holds it. */
static void init2rtr(struct conf_dev *d, enum kr_devx_qp_type type,
		     const struct kr_devx_port *local, const struct kr_devx_port *peer)
{
	struct kr_devx_qp_conn c = {.port = 1, .mtu = KR_MTU_1K, .remote_qpn = 0x99};
	struct kr_devx_qp qp;

	conf_qp_init(d, &qp, type, 8);
	kr_devx_qp_conn_path(&c, local, &peer->addr, 0x123456, 0x99);
	CHECK_OK(kr_devx_qp_modify(&qp, KR_QP_INIT2RTR, &c));
	conf_qp_fini(&qp);
}

static void check_qp(bool roce, uint8_t gid_type, uint8_t sl)
{
	struct conf_dev *d = calloc(1, sizeof(*d));
	struct kr_devx_port local, peer;
	const void *ads;

	CHECK(d != NULL);
	conf_dev_init(d, roce);
	if (roce) {
		conf_port_roce(&local, 1);
		conf_port_roce(&peer, 2);
	} else {
		conf_port_ib(&local, 1);
		conf_port_ib(&peer, 2);
	}
	local.gid_type = gid_type;
	local.tclass = TCLASS;
	local.sl = sl;
	d->ctx.port = local;
	for (int t = 0; t < 2; t++) {
		init2rtr(d, t ? KR_DEVX_QP_DCI : KR_DEVX_QP_RC, &local, &peer);
		ads = ads_of(d);
		CHECK_EQ(KR_PRM_GET(ads, ads, tclass), TCLASS);
		if (!roce) {
			CHECK_EQ(KR_PRM_GET(ads, ads, sl), sl);
			CHECK_EQ(KR_PRM_GET(ads, ads, eth_prio), 0);
			CHECK_EQ(KR_PRM_GET(ads, ads, dscp), 0);
			continue;
		}
		CHECK_EQ(KR_PRM_GET(ads, ads, eth_prio), sl);
		CHECK_EQ(KR_PRM_GET(ads, ads, sl), 0);
		CHECK_EQ(KR_PRM_GET(ads, ads, dscp),
			 gid_type == KR_GID_TYPE_ROCE_V2 ? TCLASS >> 2 : 0);
	}
	free(d);
}

static void check_dct(bool roce, uint8_t sl)
{
	struct conf_dev *d = calloc(1, sizeof(*d));
	struct kr_devx_obj obj = {.id = 5};
	struct kr_devx_cq cq = {.cqn = 5, .obj = &obj};
	struct kr_devx_srq srq = {.srqn = 6, .obj = &obj};
	struct kr_devx_dct_attr a = {.pdn = 1,
				     .cq = &cq,
				     .srq = &srq,
				     .dc_key = 7,
				     .port = 1,
				     .mtu = KR_MTU_1K,
				     .tclass = TCLASS,
				     .sl = sl};
	struct kr_devx_dct dct;
	const void *dctc;

	CHECK(d != NULL);
	conf_dev_init(d, roce);
	if (roce)
		conf_port_roce(&d->ctx.port, 1);
	else
		conf_port_ib(&d->ctx.port, 1);
	CHECK_OK(kr_devx_dct_create(&d->ctx, &a, &dct));
	CHECK_EQ(KR_PRM_GET(create_dct_in, d->last_in, opcode), KR_CMD_OP_CREATE_DCT);
	dctc = KR_PRM_ADDR(create_dct_in, d->last_in, dct_context_entry);
	CHECK_EQ(KR_PRM_GET(dctc, dctc, tclass), TCLASS);
	CHECK_EQ(KR_PRM_GET(dctc, dctc, eth_prio), roce ? sl : 0);
	CHECK_EQ(KR_PRM_GET(dctc, dctc, dscp), roce ? TCLASS >> 2 : 0);
	free(d->ctx.rsc);
	free(d);
}

int main(void)
{
	check_qp(true, KR_GID_TYPE_ROCE_V2, 3);
	check_qp(true, KR_GID_TYPE_ROCE_V1, 5);
	check_qp(false, KR_GID_TYPE_IB, 11);
	check_dct(true, 3);
	check_dct(false, 0);
	KR_PASS("conformance_qos");
}
