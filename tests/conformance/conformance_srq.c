/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: the shared receive queue behind a DC target, an RMP with a
 * cyclic work queue, against UCX's DEVX RMP (uct_ib_mlx5_devx_init_rx:
 * rmpc.state RDY; wq_type cyclic; log_wq_stride the log2 of the stride in
 * bytes; log_wq_sz; the PD; the umem and doorbell record by umem id and
 * offset) and the kernel's values (mlx5_ifc.h). krcore's WQEs hold data
 * segments only, the basic cyclic form (rmpc.basic_cyclic_rcv_wqe), which
 * UCX does not use: a device without cap.basic_cyclic_rcv_wqe is refused
 * before any command is sent.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "conf_fixture.h"
#include "kr_test.h"

#ifndef KR_MLX5_IFC_H
int main(void)
{
	KR_SKIP("no kernel mlx5_ifc.h: install linux-headers-amd64");
}
#else
#include "kr_mlx5_ifc.h"

static void check(uint32_t max_sge, uint32_t nwqe, uint32_t log_stride)
{
	struct kr_devx_srq_attr a = {.pdn = 9, .nwqe = nwqe, .max_sge = max_sge};
	struct conf_dev d;
	struct kr_devx_srq srq;
	const void *rmpc, *wq;

	conf_dev_init(&d, true);
	CHECK_OK(kr_devx_srq_create(&d.ctx, &a, &srq));
	CHECK_EQ(KR_PRM_GET(create_rmp_in, d.last_in, opcode), MLX5_CMD_OP_CREATE_RMP);
	rmpc = KR_PRM_ADDR(create_rmp_in, d.last_in, ctx);
	wq = KR_PRM_ADDR(rmpc, rmpc, wq);
	CHECK_EQ(KR_PRM_GET(rmpc, rmpc, state), MLX5_RMPC_STATE_RDY);
	CHECK_EQ(KR_PRM_GET(rmpc, rmpc, basic_cyclic_rcv_wqe), 1);
	CHECK_EQ(KR_PRM_GET(wq, wq, wq_type), MLX5_WQ_TYPE_CYCLIC);
	CHECK_EQ(KR_PRM_GET(wq, wq, log_wq_stride), log_stride);
	CHECK_EQ(1u << log_stride, srq.nwqe ? 1u << srq.log_stride : 0);
	CHECK_EQ(KR_PRM_GET(wq, wq, log_wq_sz), (uint32_t)__builtin_ctz(nwqe));
	CHECK_EQ(KR_PRM_GET(wq, wq, pd), 9);
	CHECK_EQ(KR_PRM_GET(wq, wq, wq_umem_id), 7);
	CHECK_EQ(KR_PRM_GET(wq, wq, dbr_umem_id), 7);
	/* the doorbell record after the WQEs, 8-byte aligned */
	CHECK_EQ(KR_PRM_GET64(wq, wq, dbr_addr), (uint64_t)nwqe << log_stride);
	CHECK_OK(kr_devx_srq_destroy(&srq));
	free(d.ctx.rsc);
}

int main(void)
{
	struct kr_devx_srq_attr a = {.pdn = 9, .nwqe = 64, .max_sge = 1};
	struct conf_dev d;
	struct kr_devx_srq srq;

	check(1, 64, 4);  /* one 16-byte data segment */
	check(3, 256, 6); /* 48 bytes, rounded to a power of two as UCX's stride */
	check(4, 16, 6);

	conf_dev_init(&d, true);
	d.ctx.caps.basic_cyclic_rcv_wqe = false;
	CHECK_ERR(kr_devx_srq_create(&d.ctx, &a, &srq), -EOPNOTSUPP);
	CHECK_EQ(d.last_inlen, 0); /* nothing reached the device */
	KR_PASS("conformance_srq");
}
#endif
