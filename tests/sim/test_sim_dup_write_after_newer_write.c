/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dup_write_after_newer_write: a duplicate of a WRITE that arrives after a
 * newer WRITE to the same address was executed is acknowledged, not executed
 * again (IBA 9.7.5.1.4), on an RC QP and within one DC connection: the
 * memory keeps the newer value. The DC connection is held open by a READ
 * whose response the responder's host keeps back until the duplicate is in.
 */
#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim_order.h"

#define X 0x200u
#define Y 0x208u

static struct ord O;

static void rc_dup_write(void)
{
	uint64_t dups = ord_stats(&O.b).dup_requests;

	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_WRITE_ONLY, SIM_CAPTURE_COPY));
	ord_write(&O, &O.rc_a, X, 0xaaaa);
	ord_wait_captured(&O.a);
	ord_write(&O, &O.rc_a, X, 0xbbbb);
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_EQ(ord_read(&O, &O.rc_a, X), 0xbbbb);
	CHECK(ord_stats(&O.b).dup_requests > dups);
}

static void dc_dup_write_same_connection(void)
{
	uint64_t dups = ord_stats(&O.b).dup_requests;
	uint64_t w1, w2, rd;

	*ord_remote(&O, Y) = 0x7777;
	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_WRITE_ONLY, SIM_CAPTURE_COPY));
	CHECK_OK(sim_fault_capture(O.b.ctx, SIM_CAP_READ_RESPONSE_ONLY, SIM_CAPTURE_TAKE));
	w1 = ord_post_write(&O, &O.dci, X, 0xcccc);
	w2 = ord_post_write(&O, &O.dci, X, 0xdddd);
	rd = ord_post_read(&O, &O.dci, Y);
	ord_wait(&O, &O.dci, w1);
	ord_wait(&O, &O.dci, w2);
	ord_wait_captured(&O.b); /* the READ is outstanding: the connection is open */
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_OK(sim_fault_replay(O.b.ctx));
	ord_wait(&O, &O.dci, rd);
	CHECK_EQ(*ord_local(&O, rd), 0x7777);
	CHECK_EQ(ord_read(&O, &O.dci, X), 0xdddd);
	CHECK(ord_stats(&O.b).dup_requests > dups);
}

int main(void)
{
	/* 2^18 * 4.096 us ~ 1 s: the held READ is not retransmitted meanwhile */
	ord_open(&O, "dupw_", 18);
	rc_dup_write();
	dc_dup_write_same_connection();
	CHECK_EQ(kr_fx_poll_none(&O.a.scq, 10), 0);
	ord_close(&O);
	KR_PASS("dup_write_after_newer_write");
}
