/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * stale_dc_connection: a late copy of a request of an earlier DC connection
 * is never executed by the DCT. A DCI starts a new connection each time it
 * goes from idle to busy; the copy (a WRITE, a fetch-and-add, a
 * compare-and-swap) arrives after the DCI moved on:
 *   - in the next connection of the same DCI (the DCT still serves it);
 *   - after the DCT evicted the DCI's context (65 other DCIs came by);
 *   - after the DCI was reset the keeper's way (next life at a renewed PSN).
 * Each time the memory keeps the newer value, the DCT counts the drop, and
 * the DCI goes on working. And the other way round: the first packet of a
 * new connection overtaken by the second (a WRITE, then a fetch-and-add):
 * the DCT opens the connection where it starts, NAKs the early packet, and
 * both requests run once (opening at the early packet's PSN took the first
 * for a duplicate: a WRITE acknowledged and never done, an FAA unanswered).
 */
#include <stdio.h>

#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim_order.h"

#define X	0x100u /* B's words the requests name */
#define Y	0x108u
#define NOTHERS 65u

static struct ord O;

static void stale_write_next_connection(void)
{
	uint64_t drops = ord_stats(&O.b).dc_stale_drops;

	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_WRITE_ONLY, SIM_CAPTURE_COPY));
	ord_write(&O, &O.dci, X, 0x1111);
	ord_wait_captured(&O.a);
	ord_write(&O, &O.dci, X, 0x2222); /* a new connection: the DCI was idle */
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_EQ(ord_read(&O, &O.dci, X), 0x2222);
	CHECK_EQ(*ord_remote(&O, X), 0x2222);
	CHECK(ord_stats(&O.b).dc_stale_drops > drops);
}

static void stale_atomics_next_connection(void)
{
	*ord_remote(&O, Y) = 0;
	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_FETCH_ADD, SIM_CAPTURE_COPY));
	CHECK_EQ(ord_faa(&O, &O.dci, Y, 1), 0);
	ord_wait_captured(&O.a);
	CHECK_EQ(ord_read(&O, &O.dci, Y), 1);
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_EQ(ord_faa(&O, &O.dci, Y, 10), 1);
	CHECK_EQ(*ord_remote(&O, Y), 11);

	/* a CAS run twice would change memory where the FAA test could not see it */
	*ord_remote(&O, Y) = 0;
	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_COMPARE_SWAP, SIM_CAPTURE_COPY));
	CHECK_EQ(ord_cas(&O, &O.dci, Y, 0, 5), 0);
	ord_wait_captured(&O.a);
	ord_write(&O, &O.dci, Y, 0);
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_EQ(ord_read(&O, &O.dci, Y), 0);
}

static void stale_write_after_eviction(void)
{
	struct kr_devx_qp others[NOTHERS];
	uint64_t drops = ord_stats(&O.b).dc_stale_drops;

	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_WRITE_ONLY, SIM_CAPTURE_COPY));
	ord_write(&O, &O.dci, X, 0x3333);
	ord_wait_captured(&O.a);
	ord_write(&O, &O.dci, X, 0x4444);
	/* more DCIs than the DCT keeps contexts for: ours is evicted */
	for (uint32_t i = 0; i < NOTHERS; i++) {
		CHECK_OK(kr_fx_dci_create(&O.a, &others[i], NULL));
		ord_write(&O, &others[i], 0x1000 + 8 * i, i);
	}
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_EQ(ord_read(&O, &O.dci, X), 0x4444);
	CHECK(ord_stats(&O.b).dc_stale_drops > drops);
	for (uint32_t i = 0; i < NOTHERS; i++) {
		CHECK_EQ(*ord_remote(&O, 0x1000 + 8 * i), i);
		kr_fx_qp_destroy(&others[i]);
	}
}

static void stale_write_after_reset(void)
{
	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_WRITE_ONLY, SIM_CAPTURE_COPY));
	ord_write(&O, &O.dci, X, 0x5555);
	ord_wait_captured(&O.a);
	ord_dci_renew(&O);
	ord_write(&O, &O.dci, X, 0x6666);
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_EQ(ord_read(&O, &O.dci, X), 0x6666);
}

static void first_packet_overtaken(void)
{
	uint64_t w1, w2, f1, r;

	*ord_remote(&O, X) = 0;
	*ord_remote(&O, Y) = 0;
	/* the DCI is idle: these two open a new connection, the first is held */
	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_WRITE_ONLY, SIM_CAPTURE_TAKE));
	w1 = ord_post_write(&O, &O.dci, X, 0x7777);
	w2 = ord_post_write(&O, &O.dci, Y, 0x8888);
	ord_wait(&O, &O.dci, w1);
	ord_wait(&O, &O.dci, w2);
	CHECK_OK(sim_fault_replay(O.a.ctx)); /* the held original, late: a duplicate */
	CHECK_EQ(ord_read(&O, &O.dci, X), 0x7777);
	CHECK_EQ(ord_read(&O, &O.dci, Y), 0x8888);

	CHECK_OK(sim_fault_capture(O.a.ctx, SIM_CAP_FETCH_ADD, SIM_CAPTURE_TAKE));
	f1 = ord_post_faa(&O, &O.dci, Y, 1);
	r = ord_post_read(&O, &O.dci, X);
	ord_wait(&O, &O.dci, f1);
	ord_wait(&O, &O.dci, r);
	CHECK_EQ(*ord_local(&O, f1), 0x8888);
	CHECK_EQ(*ord_local(&O, r), 0x7777);
	CHECK_OK(sim_fault_replay(O.a.ctx));
	CHECK_EQ(ord_read(&O, &O.dci, Y), 0x8889);
}

int main(void)
{
	ord_open(&O, "stale_", 14);
	stale_write_next_connection();
	stale_atomics_next_connection();
	stale_write_after_eviction();
	stale_write_after_reset();
	first_packet_overtaken();
	printf("dc_stale_drops %llu\n", (unsigned long long)ord_stats(&O.b).dc_stale_drops);
	CHECK_EQ(kr_fx_poll_none(&O.a.scq, 10), 0);
	ord_close(&O);
	KR_PASS("stale_dc_connection");
}
