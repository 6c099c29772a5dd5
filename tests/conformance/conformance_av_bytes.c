/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: the 48 bytes of a DC address vector, compared whole with an
 * image built here byte by byte, at the offsets rdma-core's mlx5dv.h gives
 * struct mlx5_wqe_av (checked with offsetof first), not read back through
 * the struct that wrote them: the DC key, the DCT number with the
 * extended-AV bit, stat_rate_sl as mlx5_create_ah fills it (RoCE: priority
 * << 1; InfiniBand: the SL), fl_mlid 0, rlid (RoCE v2: the UDP source port;
 * InfiniBand: the LID), the reserved bytes 0, the peer's MAC (RoCE), the
 * traffic class, hop limit 64, grh_gid_fl (GRH bit 30 on InfiniBand only,
 * the GID index in bits 27:20, flow label 0) and the peer's GID; all
 * multi-byte fields big-endian. The port carries a traffic class and a
 * priority (krpoold --traffic-class, --priority), so a field written in the
 * wrong place, width or order shows. Mutation check: with devx_wqe.c
 * writing hop_limit into tclass's byte, this test fails.
 */
#include <stddef.h>
#include <string.h>

#include "conf_av.h"

enum { /* rdma-core 44 infiniband/mlx5dv.h, struct mlx5_wqe_av */
       AV_KEY = 0,
       AV_DQP_DCT = 8,
       AV_STAT_RATE_SL = 12,
       AV_FL_MLID = 13,
       AV_RLID = 14,
       AV_RSVD0 = 16,
       AV_RMAC = 20,
       AV_TCLASS = 26,
       AV_HOP_LIMIT = 27,
       AV_GRH_GID_FL = 28,
       AV_RGID = 32,
       AV_LEN = 48,
};

static void be(uint8_t *p, uint64_t v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static void check_offsets(void)
{
	CHECK_EQ(offsetof(struct mlx5_wqe_av, key), AV_KEY);
	CHECK_EQ(offsetof(struct mlx5_wqe_av, dqp_dct), AV_DQP_DCT);
	CHECK_EQ(offsetof(struct mlx5_wqe_av, stat_rate_sl), AV_STAT_RATE_SL);
	CHECK_EQ(offsetof(struct mlx5_wqe_av, fl_mlid), AV_FL_MLID);
	CHECK_EQ(offsetof(struct mlx5_wqe_av, rlid), AV_RLID);
	CHECK_EQ(offsetof(struct mlx5_wqe_av, reserved0), AV_RSVD0);
	CHECK_EQ(offsetof(struct mlx5_wqe_av, rmac), AV_RMAC);
	CHECK_EQ(offsetof(struct mlx5_wqe_av, tclass), AV_TCLASS);
	CHECK_EQ(offsetof(struct mlx5_wqe_av, hop_limit), AV_HOP_LIMIT);
	CHECK_EQ(offsetof(struct mlx5_wqe_av, grh_gid_fl), AV_GRH_GID_FL);
	CHECK_EQ(offsetof(struct mlx5_wqe_av, rgid), AV_RGID);
	CHECK_EQ(sizeof(struct mlx5_wqe_av), AV_LEN);
}

/* The AV krcore posts from local to peer, against the image it must be. */
static void check_av(bool roce, uint8_t tclass, uint8_t sl)
{
	struct kr_devx_port local, peer;
	struct kr_devx_dc_av av = {.dctn = 0x8abcde, .dc_key = 0x1122334455667788ull};
	uint8_t want[AV_LEN] = {0};
	const uint8_t *got;
	struct conf_dev *d = calloc(1, sizeof(*d));
	struct kr_devx_qp dci;
	uint16_t rlid;

	CHECK(d != NULL);
	conf_dev_init(d, roce);
	conf_qp_init(d, &dci, KR_DEVX_QP_DCI, 8);
	if (roce) {
		conf_port_roce(&local, 1);
		conf_port_roce(&peer, 2);
	} else {
		conf_port_ib(&local, 0x11);
		conf_port_ib(&peer, 0x22);
	}
	local.tclass = tclass;
	local.sl = sl;
	kr_devx_dc_av_path(&av, &local, &peer.addr, 0x1000, av.dctn);
	got = (const uint8_t *)conf_post_av(&dci, &av);

	/* RoCE: the kernel's flow-label port of (0x1000, 0x8abcde), a vector of
	 * conformance_udp_sport computed outside krcore */
	rlid = roce ? 0xea89 : 0x22;
	be(want + AV_KEY, 0x1122334455667788ull, 8);
	be(want + AV_DQP_DCT, 0x8abcdeu | 0x80000000u, 4); /* MLX5_EXTENDED_UD_AV */
	want[AV_STAT_RATE_SL] = roce ? (uint8_t)((sl & 7) << 1) : (uint8_t)(sl & 0xf);
	want[AV_FL_MLID] = 0;
	be(want + AV_RLID, rlid, 2);
	if (roce)
		memcpy(want + AV_RMAC, peer.addr.mac, 6);
	want[AV_TCLASS] = tclass;
	want[AV_HOP_LIMIT] = 64;
	be(want + AV_GRH_GID_FL, (roce ? 0u : 1u << 30) | (uint32_t)local.gid_index << 20, 4);
	memcpy(want + AV_RGID, peer.addr.gid, 16);
	for (unsigned int i = 0; i < AV_LEN; i++)
		if (got[i] != want[i]) {
			fprintf(stderr, "%s AV byte %u: 0x%02x, want 0x%02x\n",
				roce ? "RoCE" : "IB", i, got[i], want[i]);
			CHECK(got[i] == want[i]);
		}
	conf_qp_fini(&dci);
	free(d);
}

int main(void)
{
	check_offsets();
	check_av(true, 0, 0);
	check_av(true, 26 << 2 | 2, 3); /* DSCP 26 with ECT(0), PFC priority 3 */
	check_av(true, 0xff, 7);
	check_av(false, 0, 0);
	check_av(false, 0x68, 9);
	check_av(false, 0xff, 15);
	KR_PASS("conformance_av_bytes");
}
