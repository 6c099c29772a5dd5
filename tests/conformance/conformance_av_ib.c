/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: a DC address vector on InfiniBand, read back through
 * rdma-core's struct mlx5_wqe_av: the target's LID in rlid (no UDP on IB),
 * no MAC, and the GRH bit set with the GID index, the peer's GID and hop
 * limit (krcore routes globally so that subnets can be crossed; rdma-core
 * sets the bit for any global IB address handle).
 */
#include <endian.h>
#include <string.h>

#include "conf_av.h"

int main(void)
{
	static const uint8_t zero[6];
	struct kr_devx_port local, peer;
	struct kr_devx_dc_av av = {.dctn = 0x000123, .dc_key = 42};
	const struct mlx5_wqe_av *w;
	struct conf_dev d;
	struct kr_devx_qp dci;
	uint32_t fl;

	conf_dev_init(&d, false);
	conf_qp_init(&d, &dci, KR_DEVX_QP_DCI, 8);
	conf_port_ib(&local, 0x5);
	conf_port_ib(&peer, 0x12);
	kr_devx_dc_av_path(&av, &local, &peer.addr, 0x77, av.dctn);
	w = conf_post_av(&dci, &av);

	CHECK_EQ(be16toh(w->rlid), 0x12);
	CHECK(!memcmp(w->rmac, zero, sizeof(zero)));
	fl = be32toh(w->grh_gid_fl);
	CHECK_EQ((fl >> 30) & 1, 1);
	CHECK_EQ((fl >> 20) & 0xff, 0);
	CHECK(!memcmp(w->rgid, peer.addr.gid, 16));
	CHECK_EQ(w->hop_limit, 64);
	CHECK_EQ(be32toh(w->dqp_dct), 0x123u | MLX5_EXTENDED_UD_AV);
	CHECK_EQ(be64toh(w->key.dc_key), 42);
	conf_qp_fini(&dci);
	KR_PASS("conformance_av_ib");
}
