/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the virtual QP tests: poll one vQP with a bound (never a
 * pass/fail timing), the two-host tests' peers file.
 */
#ifndef KR_VQ_FIXTURE_H
#define KR_VQ_FIXTURE_H

#include <stdio.h>

#include "kr_test.h"
#include "job/job.h"
#include "keeper/keeper.h"
#include "pool_fixture.h"

/*
 * The CQE ahead of cq's consumer index is written (the device passed its
 * ownership); nothing is consumed: what a test sees before polling.
 */
static inline bool vq_cqe_written(const struct kr_devx_cq *cq, uint32_t ahead)
{
	uint32_t ci = cq->cons_index + ahead;
	const struct mlx5_cqe64 *cqe = &cq->cqes[ci & (cq->ncqe - 1)];
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	return (op_own >> 4) != MLX5_CQE_INVALID &&
	       (op_own & MLX5_CQE_OWNER_MASK) == ((ci >> cq->log_ncqe) & 1);
}

/* Poll vqp until n completions arrived or 10 s passed; returns how many. */
static inline int vq_wait(struct kr_vqp *vqp, struct kr_wc *wc, int n)
{
	int got = 0;

	for (double t0 = kp_now_ms(); got < n && kp_now_ms() - t0 < 10000;) {
		int r = kr_poll(vqp, wc + got, n - got);

		if (r < 0)
			return r;
		got += r;
	}
	return got;
}

/* One request and its completion: 0 or -EIO (bad status or wr_id). */
static inline int vq_wait_ok(struct kr_vqp *vqp, uint64_t wr_id)
{
	struct kr_wc wc;

	if (vq_wait(vqp, &wc, 1) != 1 || wc.wr_id != wr_id || wc.status != KR_WC_SUCCESS)
		return -EIO;
	return 0;
}

/*
 * A keeper's --peers file naming node 2 at 127.0.0.3 (the two-host tests),
 * whose DC target av names, for the tests' launch.
 */
static inline void vq_peers_node2(const char *path, const struct kr_devx_dc_av *av)
{
	struct kr_launch me;
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	CHECK_OK(kr_launch_init(NULL, &me));
	fprintf(f, "# node gid mac tag dctn\n2 127.0.0.3 %02x:%02x:%02x:%02x:%02x:%02x 0x%llx 0x%x\n",
		av->rmac[0], av->rmac[1], av->rmac[2], av->rmac[3], av->rmac[4], av->rmac[5],
		(unsigned long long)me.tag, av->dctn);
	CHECK_OK(fclose(f));
}

#endif
