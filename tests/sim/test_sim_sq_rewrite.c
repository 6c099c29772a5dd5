/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sq_rewrite: a WQE rewritten in the ring before its completion is seen.
 * A ConnectX reads a WQE from the ring again to resend it, so software that
 * rewrites a slot early (a request it gave up on, a slot reused too soon)
 * would have the new bytes go out under the old PSN. The sim resends from
 * its own copy; it checks the ring at every retransmission and completion
 * and counts what changed (sim_stats.sq_rewrites).
 *   - a READ whose request is taken off the wire is resent after the
 *     timeout: with its WQE left alone nothing is counted;
 *   - the same with the WQE's remote address rewritten while it waits:
 *     counted (and the READ still completes from the copy);
 *   - both on the DCI and on the RC QP.
 */
#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim_order.h"

static struct ord O;

/* One READ whose request is lost, so that it is resent; rewrite: touch its WQE meanwhile. */
static uint64_t lost_read(struct kr_devx_qp *qp, bool rewrite)
{
	uint64_t before = ord_stats(&O.a).sq_rewrites, id;
	uint8_t *wqe = qp->sq_buf + (size_t)(qp->sq_pi & (qp->sq_wqebb_cnt - 1)) * 64;

	*ord_remote(&O, 0x100) = 0x5ca1ab1e;
	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_READ_REQUEST, SIM_CAPTURE_TAKE));
	id = ord_post_read(&O, qp, 0x100);
	ord_wait_captured(&O.a);
	if (rewrite)
		wqe[16 + (qp->type == KR_DEVX_QP_DCI ? 48 : 0)] ^= 0x40; /* the raddr segment */
	ord_wait(&O, qp, id); /* resent after the timeout, answered */
	CHECK_EQ(*ord_local(&O, id), 0x5ca1ab1e);
	return ord_stats(&O.a).sq_rewrites - before;
}

int main(void)
{
	ord_open(&O, "sqrw_", 8); /* 1 ms timeout: the lost request is resent soon */
	CHECK_EQ(lost_read(&O.dci, false), 0);
	CHECK(ord_stats(&O.a).retransmits > 0);
	CHECK(lost_read(&O.dci, true) > 0);
	CHECK_EQ(lost_read(&O.rc_a, false), 0);
	CHECK(lost_read(&O.rc_a, true) > 0);
	ord_close(&O);
	KR_PASS("sq_rewrite");
}
