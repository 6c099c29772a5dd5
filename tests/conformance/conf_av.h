/* SPDX-License-Identifier: BSD-3-Clause */
/* Post one DC READ on a recording DCI and return its 48-byte AV (struct mlx5_wqe_av). */
#ifndef KR_CONF_AV_H
#define KR_CONF_AV_H

#include "conf_fixture.h"
#include "kr_test.h"

static inline const struct mlx5_wqe_av *conf_post_av(struct kr_devx_qp *dci,
						     const struct kr_devx_dc_av *av)
{
	struct kr_devx_sge sge = {.addr = 0x1000, .length = 8, .lkey = 7};
	struct kr_devx_wr wr = {.wr_id = 1,
				.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = 0x2000,
				.rkey = 9,
				.av = av};

	CHECK_OK(kr_devx_qp_post_send(dci, &wr));
	/* the AV follows the 16-byte control segment */
	return (const struct mlx5_wqe_av *)(dci->sq_buf + sizeof(struct mlx5_wqe_ctrl_seg));
}

#endif
