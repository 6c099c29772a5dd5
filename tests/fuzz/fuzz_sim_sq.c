/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer harness: the sim engine reading what a job writes — the send
 * WQEs in its ring, the SQ doorbell record and the CQ's consumer index.
 *
 * Two in-process hosts, an RC pair A -> B. Each input is applied to a valid
 * request so that an all-zero input is a good one:
 *   [0]      the request: WRITE, WRITE_IMM, READ, SEND, CAS, FAA (mod 6)
 *   [1..2]   added to the SQ doorbell record's producer index (int16)
 *   [3..6]   XORed into the CQ doorbell record's consumer index
 *   [7..]    XORed over the WQE as posted (up to 4 WQEBBs)
 * then the doorbell rings and the harness waits until the engine has taken
 * the ring up to the producer index or moved the QP to error; a QP in error
 * is brought back through 2RST. What must hold: no crash, no sanitizer
 * report, the engine answers within a deadline (a hang aborts), and B's
 * memory outside its MR (GUARD..) stays as it was: whatever address or key
 * a mangled WQE names, no byte lands where no key reaches.
 */
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define MEM_LEN	    (64u << 10)
#define TARGET	    0x1000u /* where requests land in B, 64 bytes */
#define GUARD	    0x8000u /* B's bytes that no request may touch */
#define WQE_MAX	    256u
#define DEADLINE_NS 5000000000ull

static struct kr_fx_host A, B;
static struct kr_devx_qp qa, qb;
static struct kr_devx_qp_conn tmpl;
static int ready;
/* completions by status, [32] inputs ending in RTS, [33] in error: for the summary */
static unsigned long outcome[34];

void fuzz_summary(void);

void fuzz_summary(void)
{
	printf("sim_sq: %lu inputs left the QP in RTS, %lu moved it to error; completions:",
	       outcome[32], outcome[33]);
	for (int i = 0; i < 32; i++)
		if (outcome[i])
			printf(" %s %lu", kr_strerror(i), outcome[i]);
	printf("\n");
}

static void conn_to(struct kr_fx_host *from, struct kr_fx_host *ph, struct kr_devx_qp *peer,
		    struct kr_devx_qp_conn *c)
{
	*c = tmpl;
	c->remote_qpn = peer->qpn;
	kr_devx_qp_conn_path(c, &from->ctx->port, &ph->ctx->port.addr, 0, peer->qpn);
}

static void recover(void)
{
	struct kr_devx_qp_conn ca, cb;
	struct kr_devx_wc wc;

	CHECK_OK(kr_devx_qp_modify(&qa, KR_QP_2RST, NULL));
	CHECK_OK(kr_devx_qp_modify(&qb, KR_QP_2RST, NULL));
	while (kr_devx_cq_poll(&A.scq, &wc, 1) > 0)
		;
	conn_to(&A, &B, &qb, &ca);
	conn_to(&B, &A, &qa, &cb);
	CHECK_OK(kr_devx_qp_connect(&qa, &ca));
	CHECK_OK(kr_devx_qp_connect(&qb, &cb));
}

static void setup(void)
{
	CHECK_OK(kr_fx_host_open(&A, "sim:fuzz_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:fuzz_b", MEM_LEN));
	kr_fx_conn_default(&tmpl);
	tmpl.rnr_retry = 0;   /* a SEND without a receive fails at once */
	tmpl.retry_count = 1; /* and so does a request B drops */
	tmpl.ack_timeout = 10;
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, &tmpl));
	/* B's MR covers only [0, GUARD): the rest is memory no key reaches */
	CHECK_OK(kr_devx_mr_dereg(&B.mr));
	CHECK_OK(kr_devx_mr_reg(B.ctx, &B.pd, B.mem, GUARD,
				KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE |
				    KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC,
				&B.mr));
	memset((uint8_t *)B.mem + GUARD, 0xa5, MEM_LEN - GUARD);
	ready = 1;
}

/* The engine's view of qa: its requester index and state (keeper-private). */
static void engine_view(uint32_t *sq_ci, uint8_t *state)
{
	struct sim_dev *dev = sim_dev_of(A.ctx);
	struct sim_qp *q = &dev->sh->qp[qa.qpn - SIM_QPN_BASE];

	sim_lock(dev);
	*sq_ci = q->sq_ci;
	*state = q->state;
	sim_unlock(dev);
}

static void post_base(uint8_t kind, uint64_t wr_id)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, 0, 64);
	struct kr_devx_wr wr = {.wr_id = wr_id,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = (uintptr_t)B.mem + TARGET,
				.rkey = B.mr.rkey};

	switch (kind % 6) {
	case 0:
		wr.opcode = KR_WR_RDMA_WRITE;
		break;
	case 1:
		wr.opcode = KR_WR_RDMA_WRITE_IMM;
		break;
	case 2:
		wr.opcode = KR_WR_RDMA_READ;
		break;
	case 3:
		wr.opcode = KR_WR_SEND;
		break;
	case 4:
		wr.opcode = KR_WR_ATOMIC_CS;
		sge.length = 8;
		break;
	default:
		wr.opcode = KR_WR_ATOMIC_FA;
		sge.length = 8;
		break;
	}
	CHECK_OK(kr_devx_qp_post_send(&qa, &wr));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t wr_id;
	uint8_t in[7 + WQE_MAX] = {0};
	uint32_t pi, sq_ci, cq_ci;
	uint8_t state, *wqe;
	struct kr_devx_wc wc;
	uint16_t delta;
	uint64_t t0;

	if (!ready)
		setup();
	memcpy(in, data, size < sizeof(in) ? size : sizeof(in));

	post_base(in[0], ++wr_id);
	wqe = qa.sq_last_ctrl;
	for (uint32_t i = 0; i < WQE_MAX; i++) {
		/* within the ring buffer: a WQE may wrap, the XOR does not */
		uint8_t *p = wqe + i;

		if (p >= qa.sq_buf + (size_t)qa.sq_wqebb_cnt * 64)
			break;
		*p ^= in[7 + i];
	}
	memcpy(&delta, in + 1, 2);
	qa.sq_pi += delta; /* the producer index the doorbell record will claim */
	memcpy(&cq_ci, in + 3, 4);
	if (cq_ci)
		A.scq.dbrec[0] ^= htobe32(cq_ci);
	kr_devx_qp_ring(&qa);
	pi = qa.sq_pi & 0xffff;

	/* the engine takes the ring up to pi, drops a claim beyond it, or fails the QP */
	t0 = kr_test_now_ns();
	for (;;) {
		engine_view(&sq_ci, &state);
		if ((sq_ci & 0xffff) == pi || state != KR_QPC_STATE_RTS)
			break;
		if (kr_test_now_ns() - t0 > DEADLINE_NS) {
			fprintf(stderr, "engine stuck: sq_ci %u, pi %u, state %u\n", sq_ci, pi,
				state);
			abort();
		}
	}
	/* drain what completed (the CQ itself is parsed as a job would) */
	while (kr_test_now_ns() - t0 < 2000000ull && kr_devx_cq_poll(&A.scq, &wc, 1) > 0)
		outcome[wc.status < 32 ? wc.status : 31]++;
	outcome[state == KR_QPC_STATE_RTS ? 32 : 33]++;
	for (uint32_t i = 0; i < MEM_LEN - GUARD; i++)
		if (((uint8_t *)B.mem)[GUARD + i] != 0xa5) {
			fprintf(stderr, "B's guard byte %u changed\n", i);
			abort();
		}
	/* the next input starts from a clean QP (2RST resets both sides' indexes)
	 * and a consumer index that is the CQ's own again */
	A.scq.dbrec[0] = htobe32(A.scq.cons_index & 0xffffff);
	recover();
	return 0;
}
