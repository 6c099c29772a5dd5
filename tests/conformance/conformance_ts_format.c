/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Conformance: the timestamp format a QP asks for (qpc.ts_format), against
 * the installed kernel's mlx5_ifc.h values and the rule of its
 * mlx5_get_qp_default_ts (include/linux/mlx5/qp.h, 6.1): free-running (0)
 * only when the capability is FREE_RUNNING (0), DEFAULT (1) for any other
 * (REAL_TIME, FREE_RUNNING_AND_REAL_TIME), never REAL_TIME unasked; the
 * capability is the RoCE page's qp_ts_format, the general page's
 * sq_ts_format without RoCE (conformance_caps). A ConnectX-7 set to
 * real-time only refuses a QP that asks for free-running: krcore used to
 * ask for it always, and then for any capability offering it. The
 * CREATE_QP mailbox carries the choice.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf_fixture.h"
#include "kr_test.h"

#ifndef KR_MLX5_IFC_H
int main(void)
{
	KR_SKIP("no kernel mlx5_ifc.h: install linux-headers-amd64");
}
#else
#include "kr_mlx5_ifc.h"

/* qpc.ts_format of the CREATE_QP mailbox for a DCI on a device with qp_ts_format cap */
static uint32_t created_ts_format(uint8_t cap)
{
	struct conf_dev d;
	struct kr_devx_cq cq = {.cqn = 5};
	struct kr_devx_obj cq_obj = {.id = 5};
	struct kr_devx_qp_attr a = {
	    .type = KR_DEVX_QP_DCI, .pdn = 1, .send_cq = &cq, .sq_wqebb = 8};
	struct kr_devx_qp qp;
	uint32_t ts;

	conf_dev_init(&d, true);
	cq.obj = &cq_obj;
	d.ctx.caps.qp_ts_format = cap;
	a.uar = &d.uar;
	CHECK_OK(kr_devx_qp_create(&d.ctx, &a, &qp));
	CHECK_EQ(KR_PRM_GET(create_qp_in, d.last_in, opcode), KR_CMD_OP_CREATE_QP);
	ts = KR_PRM_GET(qpc, KR_PRM_ADDR(create_qp_in, d.last_in, qpc), ts_format);
	CHECK_OK(kr_devx_qp_destroy(&qp));
	free(d.ctx.rsc);
	return ts;
}

int main(void)
{
	struct kr_devx_caps caps = {0};

	CHECK_EQ(KR_TS_CAP_FREE_RUNNING, MLX5_TIMESTAMP_FORMAT_CAP_FREE_RUNNING);
	CHECK_EQ(KR_TS_CAP_REAL_TIME, MLX5_TIMESTAMP_FORMAT_CAP_REAL_TIME);
	CHECK_EQ(KR_TS_CAP_FREE_RUNNING_AND_REAL_TIME,
		 MLX5_TIMESTAMP_FORMAT_CAP_FREE_RUNNING_AND_REAL_TIME);
	CHECK_EQ(KR_TS_FORMAT_FREE_RUNNING, MLX5_TIMESTAMP_FORMAT_FREE_RUNNING);
	CHECK_EQ(KR_TS_FORMAT_DEFAULT, MLX5_TIMESTAMP_FORMAT_DEFAULT);
	CHECK_EQ(KR_TS_FORMAT_REAL_TIME, MLX5_TIMESTAMP_FORMAT_REAL_TIME);

	/* the kernel's rule, cap ? DEFAULT : FREE_RUNNING, for every 2-bit value */
	for (uint8_t cap = 0; cap < 4; cap++) {
		uint32_t want =
		    cap ? MLX5_TIMESTAMP_FORMAT_DEFAULT : MLX5_TIMESTAMP_FORMAT_FREE_RUNNING;

		caps.qp_ts_format = cap;
		CHECK_EQ(kr_devx_ts_format(&caps), want);
		CHECK_EQ(created_ts_format(cap), want);
	}
	KR_PASS("conformance_ts_format");
}
#endif
