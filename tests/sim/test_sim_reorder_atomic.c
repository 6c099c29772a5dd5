/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * reorder_atomic: an atomic is executed once whatever the order its copies
 * and answers travel in.
 *   - a duplicate fetch-and-add after the next one ran (RC; and within one
 *     DC connection held open by a READ whose response is kept back) is
 *     answered from the responder's saved result, not executed;
 *   - the atomic acknowledgement is lost for a while: the requester
 *     retransmits, gets the saved original value, and the late
 *     acknowledgement that then arrives is ignored.
 * The counter ends at the exact sum; every original value is the one before.
 */
#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim_order.h"

#define C 0x300u
#define Y 0x308u

static struct ord O;

static void dup_faa(struct kr_devx_qp *qp)
{
	*ord_remote(&O, C) = 100;
	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_FETCH_ADD, SIM_CAPTURE_COPY));
	CHECK_EQ(ord_faa(&O, qp, C, 1), 100);
	ord_wait_captured(&O.a);
	CHECK_EQ(ord_faa(&O, qp, C, 2), 101);
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_EQ(ord_faa(&O, qp, C, 4), 103);
	CHECK_EQ(*ord_remote(&O, C), 107);
}

static void dup_faa_same_dc_connection(void)
{
	uint64_t f1, f2, rd;

	*ord_remote(&O, C) = 0;
	*ord_remote(&O, Y) = 0x1234;
	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_FETCH_ADD, SIM_CAPTURE_COPY));
	CHECK_OK(sim_fault_capture(O.b.ctx, SIM_CAP_READ_RESPONSE_ONLY, SIM_CAPTURE_TAKE));
	f1 = ord_post_faa(&O, &O.dci, C, 1);
	f2 = ord_post_faa(&O, &O.dci, C, 1);
	rd = ord_post_read(&O, &O.dci, Y);
	ord_wait(&O, &O.dci, f1);
	ord_wait(&O, &O.dci, f2);
	CHECK_EQ(*ord_local(&O, f1), 0);
	CHECK_EQ(*ord_local(&O, f2), 1);
	ord_wait_captured(&O.b);
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_OK(sim_fault_replay(O.b.ctx));
	ord_wait(&O, &O.dci, rd);
	CHECK_EQ(*ord_local(&O, rd), 0x1234);
	CHECK_EQ(ord_read(&O, &O.dci, C), 2);
}

static void late_atomic_ack(struct kr_devx_qp *qp)
{
	uint64_t id, retrans = ord_stats(&O.a).retransmits;

	*ord_remote(&O, C) = 40;
	CHECK_OK(sim_fault_capture(O.b.ctx, SIM_CAP_ATOMIC_ACKNOWLEDGE, SIM_CAPTURE_TAKE));
	id = ord_post_faa(&O, qp, C, 2);
	ord_wait(&O, qp, id); /* after a retransmission answered from the saved result */
	CHECK_EQ(*ord_local(&O, id), 40);
	CHECK(ord_stats(&O.a).retransmits > retrans);
	CHECK_OK(sim_fault_replay(O.b.ctx)); /* the late acknowledgement */
	CHECK_EQ(ord_faa(&O, qp, C, 1), 42);
	CHECK_EQ(*ord_remote(&O, C), 43);
}

int main(void)
{
	ord_open(&O, "ratom_", 18);
	dup_faa(&O.rc_a);
	dup_faa(&O.dci);
	dup_faa_same_dc_connection();
	ord_close(&O);

	/* the acknowledgement tests want a quick retransmission (2^12 * 4 us) */
	ord_open(&O, "ratom2_", 12);
	late_atomic_ack(&O.rc_a);
	late_atomic_ack(&O.dci);
	CHECK_EQ(kr_fx_poll_none(&O.a.scq, 10), 0);
	ord_close(&O);
	KR_PASS("reorder_atomic");
}
