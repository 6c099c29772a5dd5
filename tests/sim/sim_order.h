/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Packet-order tests (test_sim_reorder_*, test_sim_dup_*, test_sim_stale_*):
 * host A requests, host B responds, in this process, over a DCI to a DCT and
 * over an RC pair. Each request is one 8-byte operation on B's memory at a
 * byte offset, waited for and checked; the captures of sim.h put a
 * packet back on the wire when a test wants it.
 */
#ifndef KR_SIM_ORDER_H
#define KR_SIM_ORDER_H

#include <stdint.h>

#include "devx_fixture.h"
#include "sim/sim.h"

#define ORD_DC_KEY 0x5eedc0ffee123457ull

struct ord {
	struct kr_fx_host a, b;
	struct kr_devx_qp dci;	      /* A's DCI to B's DCT */
	struct kr_devx_qp rc_a, rc_b; /* an RC pair, A's end requests */
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_dc_av av;
	uint64_t next_id;
};

/* Hosts "sim:<tag>a" and "sim:<tag>b", the DCI (ack_timeout ack_timeout), DCT and RC pair. */
void ord_open(struct ord *o, const char *tag, uint8_t ack_timeout);
void ord_close(struct ord *o);

/* Where A's local 8-byte buffer of request id lies (one slot per id, 512 slots). */
uint64_t *ord_local(struct ord *o, uint64_t id);
/* B's memory at off, as an 8-byte word. */
uint64_t *ord_remote(struct ord *o, size_t off);

/* Post without waiting (one doorbell per call); returns the request id. */
uint64_t ord_post_write(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t value);
uint64_t ord_post_read(struct ord *o, struct kr_devx_qp *qp, size_t off);
uint64_t ord_post_faa(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t add);
uint64_t ord_post_cas(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t cmp,
		      uint64_t swap);
/* The next completion on A's send CQ must be id's, successful. */
void ord_wait(struct ord *o, struct kr_devx_qp *qp, uint64_t id);

/* Post, wait; READ and atomics return what landed in the local buffer. */
void ord_write(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t value);
uint64_t ord_read(struct ord *o, struct kr_devx_qp *qp, size_t off);
uint64_t ord_faa(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t add);
uint64_t ord_cas(struct ord *o, struct kr_devx_qp *qp, size_t off, uint64_t cmp, uint64_t swap);

/* Wait (up to 5 s) until host h's armed capture holds its packet. */
void ord_wait_captured(struct kr_fx_host *h);

/*
 * Give the DCI its next life as the keeper does (keeper_dci.c): the send PSN
 * past the old one (kr_devx_qp_renew_psn), 2RST, RST..RTS at that PSN.
 */
void ord_dci_renew(struct ord *o);

struct sim_stats ord_stats(struct kr_fx_host *h);

#endif /* KR_SIM_ORDER_H */
