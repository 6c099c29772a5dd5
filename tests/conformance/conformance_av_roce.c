/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: a DC address vector on RoCE v2, as rdma-core's mlx5_create_ah
 * builds one, read back through rdma-core's own struct mlx5_wqe_av
 * (infiniband/mlx5dv.h): the peer's MAC in rmac, the UDP source port in
 * rlid (0xc000..0xffff), the GRH bit (grh_gid_fl bit 30) clear because
 * every RoCE packet carries a GRH, the local GID index in bits 27:20, the
 * peer's GID, hop limit 64, the DC key and the extended-AV bit with the DCT
 * number.
 */
#include <endian.h>
#include <string.h>

#include "conf_av.h"

int main(void)
{
	struct kr_devx_port local, peer;
	struct kr_devx_dc_av av = {.dctn = 0x8abcde, .dc_key = 0x1122334455667788ull};
	const struct mlx5_wqe_av *w;
	struct conf_dev d;
	struct kr_devx_qp dci;
	uint32_t fl;

	conf_dev_init(&d, true);
	conf_qp_init(&d, &dci, KR_DEVX_QP_DCI, 8);
	conf_port_roce(&local, 1);
	conf_port_roce(&peer, 2);
	kr_devx_dc_av_path(&av, &local, &peer.addr, 0x1000, av.dctn);
	w = conf_post_av(&dci, &av);

	CHECK_EQ(be64toh(w->key.dc_key), 0x1122334455667788ull);
	CHECK_EQ(be32toh(w->dqp_dct), 0x8abcdeu | MLX5_EXTENDED_UD_AV);
	CHECK(!memcmp(w->rmac, peer.addr.mac, sizeof(w->rmac)));
	/* the kernel's flow-label port of (0x1000, 0x8abcde), a vector of
	 * conformance_udp_sport computed outside krcore */
	CHECK_EQ(be16toh(w->rlid), 0xea89);
	CHECK(be16toh(w->rlid) >= 0xc000);
	fl = be32toh(w->grh_gid_fl);
	CHECK_EQ((fl >> 30) & 1, 0);
	CHECK_EQ((fl >> 20) & 0xff, 3);
	CHECK(!memcmp(w->rgid, peer.addr.gid, 16));
	CHECK_EQ(w->hop_limit, 64);
	CHECK_EQ(w->stat_rate_sl, 0);
	CHECK_EQ(w->fl_mlid, 0);

	/* a GID index above 255 cannot be named in an AV: the port keeps it 8 bits */
	CHECK(local.gid_index <= 0xff);
	conf_qp_fini(&dci);
	KR_PASS("conformance_av_roce");
}
