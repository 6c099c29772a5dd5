/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: the send doorbell sequence of rdma-core's mlx5 provider
 * (post_send): the WQEs, then the send doorbell record (big-endian 16-bit
 * producer index in dbrec[MLX5_SND_DBR]), then one 8-byte UAR write of the
 * first 8 bytes of the last WQE's control segment. The device reads the
 * record when the UAR write arrives: it must already hold the new index.
 * A ring with nothing new writes nothing; a batch of posts rings once.
 */
#include <endian.h>
#include <string.h>

#include "conf_av.h"

int main(void)
{
	struct kr_devx_port local, peer;
	struct kr_devx_dc_av av = {.dctn = 0x77, .dc_key = 1};
	const struct mlx5_wqe_ctrl_seg *last;
	struct conf_dev d;
	struct kr_devx_qp dci;
	uint64_t want;

	conf_dev_init(&d, true);
	conf_qp_init(&d, &dci, KR_DEVX_QP_DCI, 16);
	conf_port_roce(&local, 1);
	conf_port_roce(&peer, 2);
	kr_devx_dc_av_path(&av, &local, &peer.addr, 1, av.dctn);

	kr_devx_qp_ring(&dci);
	CHECK_EQ(d.doorbells, 0);
	for (int i = 0; i < 3; i++)
		conf_post_av(&dci, &av);
	last = (const struct mlx5_wqe_ctrl_seg *)dci.sq_last_ctrl;
	CHECK((const uint8_t *)last == dci.sq_buf + 2 * 2 * 64); /* 3rd WQE, 2 WQEBBs each */
	CHECK_EQ(be32toh(last->opmod_idx_opcode), (4u << 8) | MLX5_OPCODE_RDMA_READ);
	CHECK_EQ(d.doorbells, 0); /* posting never rings */
	kr_devx_qp_ring(&dci);
	CHECK_EQ(d.doorbells, 1);
	CHECK_EQ(be32toh(d.dbrec_at_doorbell), 6); /* the record before the UAR write */
	memcpy(&want, last, sizeof(want));
	CHECK_EQ(d.doorbell_val, want);
	kr_devx_qp_ring(&dci);
	CHECK_EQ(d.doorbells, 1);
	conf_qp_fini(&dci);
	KR_PASS("conformance_doorbell");
}
