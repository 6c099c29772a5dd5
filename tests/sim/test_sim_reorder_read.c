/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reorder_read: a READ completes with the data of its own response.
 *   - two READs in flight, the first one's response held back: the second's
 *     response arriving first makes the requester ask again; each READ gets
 *     its own bytes, and the held response, let go after both completed,
 *     changes no buffer (RC and DC);
 *   - a DCI reset the keeper's way (renewed PSN) with a READ outstanding
 *     when a response to the previous holder's READ arrives: the stale
 *     response is not taken (it would be, were the PSN restarted at 0).
 */
#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim_order.h"

#define X 0x400u
#define Y 0x408u
#define Z 0x410u

static struct ord O;

static void reorder_two_reads(struct kr_devx_qp *qp)
{
	uint64_t r1, r2;

	*ord_remote(&O, X) = 0xa1;
	*ord_remote(&O, Y) = 0xb2;
	*ord_remote(&O, Z) = 0xc3;
	CHECK_OK(sim_fault_capture(O.b.ctx, SIM_CAP_READ_RESPONSE_ONLY, SIM_CAPTURE_TAKE));
	r1 = ord_post_read(&O, qp, X);
	r2 = ord_post_read(&O, qp, Y);
	ord_wait(&O, qp, r1);
	ord_wait(&O, qp, r2);
	CHECK_EQ(*ord_local(&O, r1), 0xa1);
	CHECK_EQ(*ord_local(&O, r2), 0xb2);
	CHECK_OK(sim_fault_replay(O.b.ctx)); /* r1's first response, late */
	CHECK_EQ(ord_read(&O, qp, Z), 0xc3);
	CHECK_EQ(*ord_local(&O, r1), 0xa1);
	CHECK_EQ(*ord_local(&O, r2), 0xb2);
}

static void stale_response_after_reset(void)
{
	uint64_t id;

	*ord_remote(&O, X) = 0x01d;
	*ord_remote(&O, Y) = 0x2e3;
	CHECK_OK(sim_fault_capture(O.b.ctx, SIM_CAP_READ_RESPONSE_ONLY, SIM_CAPTURE_COPY));
	CHECK_EQ(ord_read(&O, &O.dci, X), 0x01d);
	ord_wait_captured(&O.b);
	ord_dci_renew(&O);
	/* the new holder's READ waits on A; the old response comes in first */
	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_READ_REQUEST, SIM_CAPTURE_TAKE));
	id = ord_post_read(&O, &O.dci, Y);
	ord_wait_captured(&O.a);
	CHECK_OK(sim_fault_replay(O.b.ctx));
	CHECK_OK(sim_fault_replay(O.a.ctx));
	ord_wait(&O, &O.dci, id);
	CHECK_EQ(*ord_local(&O, id), 0x2e3);
}

int main(void)
{
	ord_open(&O, "rread_", 12);
	reorder_two_reads(&O.rc_a);
	reorder_two_reads(&O.dci);
	ord_close(&O);

	/* held READ request: no retransmission meanwhile (2^18 * 4 us ~ 1 s) */
	ord_open(&O, "rread2_", 18);
	stale_response_after_reset();
	CHECK_EQ(kr_fx_poll_none(&O.a.scq, 10), 0);
	ord_close(&O);
	KR_PASS("reorder_read");
}
