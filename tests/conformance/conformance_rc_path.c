/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: the primary address path of an RC QP's INIT2RTR mailbox
 * (qpc.primary_address_path, offsets checked against the kernel's
 * mlx5_ifc.h by test_devx_prm_layout), as the kernel's mlx5_set_path fills
 * it. RoCE: the peer's MAC, the UDP source port the kernel would pick for
 * the QP pair, the GID index, ads.grh clear. InfiniBand: the peer's LID in
 * ads.rlid (a path without it reaches no one), ads.grh set, no UDP port.
 */
#include <string.h>

#include "conf_fixture.h"
#include "kr_test.h"

/* conf_qp_init's QP 0x123456 to 0x654321: the kernel's flow-label port is
 * 0xf787 (a vector of conformance_udp_sport, computed outside krcore) */
#define RQPN	   0x654321u
#define RQPN_SPORT 0xf787u

static const void *init2rtr_ads(struct conf_dev *d, struct kr_devx_qp *qp,
				const struct kr_devx_port *local, const struct kr_devx_addr *peer)
{
	struct kr_devx_qp_conn c = {
	    .port = 1, .remote_qpn = RQPN, .mtu = KR_MTU_1K, .min_rnr_nak = 12, .log_rra_max = 4};
	const void *qpc;

	kr_devx_qp_conn_path(&c, local, peer, qp->qpn, RQPN);
	CHECK_OK(kr_devx_qp_modify(qp, KR_QP_INIT2RTR, &c));
	CHECK_EQ(KR_PRM_GET(init2rtr_qp_in, d->last_in, opcode), KR_CMD_OP_INIT2RTR_QP);
	qpc = KR_PRM_ADDR(init2rtr_qp_in, d->last_in, qpc);
	CHECK_EQ(KR_PRM_GET(qpc, qpc, remote_qpn), RQPN);
	return KR_PRM_ADDR(qpc, qpc, primary_address_path);
}

int main(void)
{
	struct kr_devx_port local, peer;
	struct conf_dev d;
	struct kr_devx_qp qp;
	const void *ads;
	uint32_t hi, lo;

	conf_dev_init(&d, true);
	conf_qp_init(&d, &qp, KR_DEVX_QP_RC, 8);
	conf_port_roce(&local, 1);
	conf_port_roce(&peer, 2);
	ads = init2rtr_ads(&d, &qp, &local, &peer.addr);
	hi = KR_PRM_GET(ads, ads, rmac_47_32);
	lo = KR_PRM_GET(ads, ads, rmac_31_0);
	CHECK_EQ(hi, (uint32_t)peer.addr.mac[0] << 8 | peer.addr.mac[1]);
	CHECK_EQ(lo, conf_be32(peer.addr.mac + 2));
	CHECK_EQ(qp.qpn, 0x123456u);
	CHECK_EQ(KR_PRM_GET(ads, ads, udp_sport), RQPN_SPORT);
	CHECK(KR_PRM_GET(ads, ads, udp_sport) >= 0xc000);
	CHECK_EQ(KR_PRM_GET(ads, ads, grh), 0);
	CHECK_EQ(KR_PRM_GET(ads, ads, rlid), 0);
	CHECK_EQ(KR_PRM_GET(ads, ads, src_addr_index), 3);
	CHECK_EQ(KR_PRM_GET(ads, ads, hop_limit), 64);
	CHECK_EQ(KR_PRM_GET(ads, ads, vhca_port_num), 1);
	CHECK(!memcmp(KR_PRM_ADDR(ads, ads, rgid_rip), peer.addr.gid, 16));
	conf_qp_fini(&qp);

	conf_dev_init(&d, false);
	conf_qp_init(&d, &qp, KR_DEVX_QP_RC, 8);
	conf_port_ib(&local, 0x5);
	conf_port_ib(&peer, 0x12);
	ads = init2rtr_ads(&d, &qp, &local, &peer.addr);
	CHECK_EQ(KR_PRM_GET(ads, ads, rlid), 0x12);
	CHECK_EQ(KR_PRM_GET(ads, ads, grh), 1);
	CHECK_EQ(KR_PRM_GET(ads, ads, udp_sport), 0);
	CHECK_EQ(KR_PRM_GET(ads, ads, rmac_47_32), 0);
	CHECK_EQ(KR_PRM_GET(ads, ads, rmac_31_0), 0);
	CHECK_EQ(KR_PRM_GET(ads, ads, src_addr_index), 0);
	CHECK(!memcmp(KR_PRM_ADDR(ads, ads, rgid_rip), peer.addr.gid, 16));
	conf_qp_fini(&qp);
	KR_PASS("conformance_rc_path");
}
