/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the virtual QP tests: poll one vQP with a bound (never a
 * pass/fail timing), the two-host tests' peers file.
 */
#ifndef KR_VQ_FIXTURE_H
#define KR_VQ_FIXTURE_H

#include <stdio.h>

#include "kr_test.h"
#include "pool.h"
#include "pool_fixture.h"

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
