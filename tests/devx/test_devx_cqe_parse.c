/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQE parsing without a device: CQEs written by hand at their PRM byte
 * offsets into a CQ buffer, the way the device writes them (op_own last),
 * then kr_devx_cq_poll's output checked: requester and responder successes,
 * immediates, error CQEs with every syndrome, owner-bit wrap, the consumer
 * record, dispatch to RQ / SRQ / DCT, unknown user_index, and the status
 * strings.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx/devx.h"
#include "kr_test.h"

#define NCQE	 4
#define LOG_NCQE 2

enum { UIDX_RC = 1, UIDX_DCT = 2, UIDX_RC_SRQ = 3, UIDX_FREE = 4, RSC_CAP = 8 };

#define QPN_RC	   0x101u
#define QPN_RC_SRQ 0x102u
#define DCTN	   0x8001u

struct fake {
	struct kr_devx_ctx ctx;
	struct kr_devx_rsc rsc[RSC_CAP];
	struct kr_devx_cq cq;
	uint32_t cq_dbrec[2];
	struct kr_devx_qp rc, rc_srq;
	struct kr_devx_srq srq_dct, srq_rc;
	struct kr_devx_dct dct;
	uint64_t sq_wrid[16];
	uint32_t sq_wqe_next[16];
	uint64_t rq_wrid[4];
	uint64_t srq_dct_wrid[8];
	uint64_t srq_rc_wrid[8];
	uint32_t dev_pi; /* the "device" producer index */
};

static struct fake F;

static void fake_init(void)
{
	memset(&F, 0, sizeof(F));
	F.ctx.rsc = F.rsc;
	F.ctx.rsc_cap = RSC_CAP;
	F.cq.ctx = &F.ctx;
	F.cq.cqn = 7;
	F.cq.ncqe = NCQE;
	F.cq.log_ncqe = LOG_NCQE;
	F.cq.cqes = aligned_alloc(64, NCQE * 64);
	CHECK(F.cq.cqes);
	for (int i = 0; i < NCQE; i++) {
		memset(&F.cq.cqes[i], 0x5a, 64);
		F.cq.cqes[i].op_own = (MLX5_CQE_INVALID << 4) | 1;
	}
	F.cq.dbrec = F.cq_dbrec;

	F.rc.ctx = &F.ctx;
	F.rc.qpn = QPN_RC;
	F.rc.sq_wqebb_cnt = 16;
	F.rc.sq_wrid = F.sq_wrid;
	F.rc.sq_wqe_next = F.sq_wqe_next;
	F.rc.rq_wqe_cnt = 4;
	F.rc.rq_wrid = F.rq_wrid;
	F.rc.user_index = UIDX_RC;
	F.rsc[UIDX_RC] = (struct kr_devx_rsc){KR_DEVX_RSC_QP, &F.rc};

	F.srq_dct.nwqe = 8;
	F.srq_dct.wrid = F.srq_dct_wrid;
	F.dct.dctn = DCTN;
	F.dct.srq = &F.srq_dct;
	F.dct.user_index = UIDX_DCT;
	F.rsc[UIDX_DCT] = (struct kr_devx_rsc){KR_DEVX_RSC_DCT, &F.dct};

	F.srq_rc.nwqe = 8;
	F.srq_rc.wrid = F.srq_rc_wrid;
	F.rc_srq.ctx = &F.ctx;
	F.rc_srq.qpn = QPN_RC_SRQ;
	F.rc_srq.sq_wqebb_cnt = 16;
	F.rc_srq.sq_wrid = F.sq_wrid;
	F.rc_srq.sq_wqe_next = F.sq_wqe_next;
	F.rc_srq.srq = &F.srq_rc;
	F.rsc[UIDX_RC_SRQ] = (struct kr_devx_rsc){KR_DEVX_RSC_QP, &F.rc_srq};
}

/* ---- the device side: write a CQE at its producer index ---- */

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Fields of a CQE as a device fills them; offsets from the PRM cqe64 layout. */
struct cqe_desc {
	uint8_t opcode;
	uint32_t flags_rqpn;   /* 24 */
	uint32_t uidx;	       /* 32 */
	uint32_t imm_be_value; /* 36: written big-endian */
	uint32_t byte_cnt;     /* 44 */
	uint32_t sop_drop_qpn; /* 56: (wqe opcode << 24) | qpn; err: s_wqe_opcode_qpn */
	uint16_t wqe_counter;  /* 60 */
	uint8_t vendor;	       /* 54, error CQE */
	uint8_t syndrome;      /* 55, error CQE */
};

static void dev_put(const struct cqe_desc *d)
{
	uint8_t *c = (uint8_t *)&F.cq.cqes[F.dev_pi & (NCQE - 1)];
	bool err = d->opcode == MLX5_CQE_REQ_ERR || d->opcode == MLX5_CQE_RESP_ERR;

	memset(c, 0, 63);
	put_be32(c + 32, d->uidx);
	if (err) {
		c[54] = d->vendor;
		c[55] = d->syndrome;
	} else {
		put_be32(c + 24, d->flags_rqpn);
		put_be32(c + 36, d->imm_be_value);
		put_be32(c + 44, d->byte_cnt);
	}
	put_be32(c + 56, d->sop_drop_qpn);
	put_be16(c + 60, d->wqe_counter);
	__atomic_store_n(&c[63], (uint8_t)((d->opcode << 4) | ((F.dev_pi >> LOG_NCQE) & 1)),
			 __ATOMIC_RELEASE);
	F.dev_pi++;
}

static void check_dbrec(void)
{
	CHECK_EQ(F.cq_dbrec[0], htobe32(F.cq.cons_index & 0xffffff));
}

/* ---- requester successes ---- */

static void test_requester(void)
{
	static const struct {
		uint8_t wqe_op;
		enum kr_devx_wc_opcode wc_op;
		uint32_t bytes;
	} ops[] = {
	    {MLX5_OPCODE_RDMA_WRITE, KR_WC_RDMA_WRITE, 0},
	    {MLX5_OPCODE_RDMA_WRITE_IMM, KR_WC_RDMA_WRITE, 0},
	    {MLX5_OPCODE_SEND, KR_WC_SEND, 0},
	    {MLX5_OPCODE_SEND_IMM, KR_WC_SEND, 0},
	    {MLX5_OPCODE_RDMA_READ, KR_WC_RDMA_READ, 4096},
	    {MLX5_OPCODE_ATOMIC_CS, KR_WC_COMP_SWAP, 8},
	    {MLX5_OPCODE_ATOMIC_FA, KR_WC_FETCH_ADD, 8},
	};
	struct kr_devx_wc wc;
	unsigned int i;

	fake_init();
	CHECK_EQ(kr_devx_cq_poll(&F.cq, &wc, 1), 0); /* empty: nothing, no record update */
	CHECK_EQ(F.cq.cons_index, 0);
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		/* WQE at a wrapping counter: index (i * 3 + 0x1fff0) & 15 */
		uint16_t ctr = (uint16_t)(0xfff0 + i * 3);
		uint32_t idx = ctr & 15;

		F.sq_wrid[idx] = 0x1000 + i;
		F.sq_wqe_next[idx] = 0x70000 + i * 3 + 2;
		dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_REQ,
					   .uidx = UIDX_RC,
					   .byte_cnt = ops[i].bytes,
					   .sop_drop_qpn = (uint32_t)ops[i].wqe_op << 24 | QPN_RC,
					   .wqe_counter = ctr});
		memset(&wc, 0xee, sizeof(wc));
		CHECK_EQ(kr_devx_cq_poll(&F.cq, &wc, 4), 1);
		CHECK_EQ(wc.wr_id, 0x1000 + i);
		CHECK_EQ(wc.status, KR_WC_SUCCESS);
		CHECK_EQ(wc.opcode, ops[i].wc_op);
		CHECK_EQ(wc.byte_len, ops[i].bytes);
		CHECK_EQ(wc.qpn, QPN_RC);
		CHECK(!wc.has_imm);
		CHECK_EQ(wc.syndrome, 0);
		CHECK_EQ(F.rc.sq_ci, 0x70000 + i * 3 + 2);
		CHECK_EQ(F.cq.cons_index, i + 1);
		check_dbrec();
	}
	free(F.cq.cqes);
}

/* ---- responder successes: RQ, SRQ, DCT ---- */

static void test_responder(void)
{
	struct kr_devx_wc wc[4];

	fake_init();
	F.rq_wrid[0] = 0xa0;
	F.rq_wrid[1] = 0xa1;
	F.rq_wrid[2] = 0xa2;

	/* SEND with immediate on the RC QP's own RQ; flags bits above the QPN ignored */
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_SEND_IMM,
				   .uidx = UIDX_RC,
				   .flags_rqpn = 0x2a000000u | 0x345678,
				   .imm_be_value = 0xdeadbeef,
				   .byte_cnt = 1000,
				   .sop_drop_qpn = QPN_RC,
				   .wqe_counter = 0});
	/* plain SEND */
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_SEND,
				   .uidx = UIDX_RC,
				   .flags_rqpn = 0x345678,
				   .imm_be_value = 0x11111111,
				   .byte_cnt = 0,
				   .sop_drop_qpn = QPN_RC,
				   .wqe_counter = 1});
	/* WRITE with immediate: consumes a receive, byte_cnt is the write length */
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_WR_IMM,
				   .uidx = UIDX_RC,
				   .flags_rqpn = 0x345678,
				   .imm_be_value = 0x01020304,
				   .byte_cnt = 65536,
				   .sop_drop_qpn = QPN_RC,
				   .wqe_counter = 2});
	CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 4), 3);
	CHECK_EQ(wc[0].wr_id, 0xa0);
	CHECK_EQ(wc[0].opcode, KR_WC_RECV);
	CHECK_EQ(wc[0].status, KR_WC_SUCCESS);
	CHECK_EQ(wc[0].byte_len, 1000);
	CHECK(wc[0].has_imm);
	CHECK_EQ(wc[0].imm, 0xdeadbeef);
	CHECK_EQ(wc[0].src_qpn, 0x345678);
	CHECK_EQ(wc[0].qpn, QPN_RC);
	CHECK_EQ(wc[1].wr_id, 0xa1);
	CHECK_EQ(wc[1].opcode, KR_WC_RECV);
	CHECK(!wc[1].has_imm);
	CHECK_EQ(wc[1].byte_len, 0);
	CHECK_EQ(wc[2].wr_id, 0xa2);
	CHECK_EQ(wc[2].opcode, KR_WC_RECV_RDMA_WITH_IMM);
	CHECK(wc[2].has_imm);
	CHECK_EQ(wc[2].imm, 0x01020304);
	CHECK_EQ(wc[2].byte_len, 65536);
	CHECK_EQ(F.rc.rq_ci, 3);
	CHECK_EQ(F.cq.cons_index, 3);
	check_dbrec();

	/* DCT: wr_id from its SRQ at the CQE's counter, the SRQ consumer follows */
	F.srq_dct.ci = 0x2fffd;
	F.srq_dct_wrid[(0xfffd) & 7] = 0xd0;
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_SEND,
				   .uidx = UIDX_DCT,
				   .flags_rqpn = 0x1ab,
				   .byte_cnt = 12,
				   .sop_drop_qpn = DCTN,
				   .wqe_counter = 0xfffd});
	CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 0xd0);
	CHECK_EQ(wc[0].qpn, DCTN);
	CHECK_EQ(wc[0].src_qpn, 0x1ab);
	CHECK_EQ(wc[0].byte_len, 12);
	CHECK_EQ(F.srq_dct.ci, 0x2fffe);
	/* the counter wraps 16 bits: 0xffff then 0x0000 */
	F.srq_dct_wrid[(0xfffe) & 7] = 0xd1;
	F.srq_dct_wrid[(0xffff) & 7] = 0xd2;
	F.srq_dct_wrid[0] = 0xd3;
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_SEND_IMM,
				   .uidx = UIDX_DCT,
				   .imm_be_value = 42,
				   .sop_drop_qpn = DCTN,
				   .wqe_counter = 0xfffe});
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_SEND,
				   .uidx = UIDX_DCT,
				   .sop_drop_qpn = DCTN,
				   .wqe_counter = 0xffff});
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_SEND,
				   .uidx = UIDX_DCT,
				   .sop_drop_qpn = DCTN,
				   .wqe_counter = 0x0000});
	CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 4), 3);
	CHECK_EQ(wc[0].wr_id, 0xd1);
	CHECK(wc[0].has_imm);
	CHECK_EQ(wc[0].imm, 42);
	CHECK_EQ(wc[1].wr_id, 0xd2);
	CHECK_EQ(wc[2].wr_id, 0xd3);
	CHECK_EQ(F.srq_dct.ci, 0x30001);
	/*
	 * Two senders' messages complete out of ring order (the one in WQE 2
	 * ends before the one in WQE 1): each CQE finds its own wr_id and the
	 * consumer advances by one per completion, never a 16-bit lap (which
	 * made every later post fail -EAGAIN: the SRQ looked full).
	 */
	F.srq_dct_wrid[1] = 0xe1;
	F.srq_dct_wrid[2] = 0xe2;
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_SEND,
				   .uidx = UIDX_DCT,
				   .sop_drop_qpn = DCTN,
				   .wqe_counter = 0x0002});
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_SEND,
				   .uidx = UIDX_DCT,
				   .sop_drop_qpn = DCTN,
				   .wqe_counter = 0x0001});
	CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 4), 2);
	CHECK_EQ(wc[0].wr_id, 0xe2);
	CHECK_EQ(wc[1].wr_id, 0xe1);
	CHECK_EQ(F.srq_dct.ci, 0x30003);

	/* RC QP with an SRQ: from the SRQ, not the QP's (absent) RQ */
	F.srq_rc_wrid[3] = 0x53;
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_SEND,
				   .uidx = UIDX_RC_SRQ,
				   .flags_rqpn = 0x999,
				   .byte_cnt = 4,
				   .sop_drop_qpn = QPN_RC_SRQ,
				   .wqe_counter = 3});
	CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 0x53);
	CHECK_EQ(wc[0].qpn, QPN_RC_SRQ);
	CHECK_EQ(F.srq_rc.ci, 1);
	CHECK_EQ(F.rc_srq.rq_ci, 0);
	CHECK_EQ(F.cq.cons_index, 10);
	check_dbrec();
	free(F.cq.cqes);
}

/* ---- error CQEs: every syndrome ---- */

static void test_errors(void)
{
	static const struct {
		uint8_t syndrome;
		int status;
	} syn[] = {
	    {MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR, KR_WC_LOC_LEN_ERR},
	    {MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, KR_WC_LOC_QP_OP_ERR},
	    {MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, KR_WC_LOC_PROT_ERR},
	    {MLX5_CQE_SYNDROME_WR_FLUSH_ERR, KR_WC_WR_FLUSH_ERR},
	    {MLX5_CQE_SYNDROME_MW_BIND_ERR, KR_WC_MW_BIND_ERR},
	    {MLX5_CQE_SYNDROME_BAD_RESP_ERR, KR_WC_BAD_RESP_ERR},
	    {MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR, KR_WC_LOC_ACCESS_ERR},
	    {MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, KR_WC_REM_INV_REQ_ERR},
	    {MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, KR_WC_REM_ACCESS_ERR},
	    {MLX5_CQE_SYNDROME_REMOTE_OP_ERR, KR_WC_REM_OP_ERR},
	    {MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, KR_WC_RETRY_EXC_ERR},
	    {MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR, KR_WC_RNR_RETRY_EXC_ERR},
	    {MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR, KR_WC_REM_ABORT_ERR},
	    {0x00, KR_WC_GENERAL_ERR},
	    {0x7f, KR_WC_GENERAL_ERR},
	};
	struct kr_devx_wc wc;
	unsigned int i;

	fake_init();
	for (i = 0; i < sizeof(syn) / sizeof(syn[0]); i++) {
		CHECK_EQ(kr_devx_syndrome_to_status(syn[i].syndrome), syn[i].status);
		/* requester error on an unsignaled READ at index 9 */
		F.sq_wrid[9] = 0xe000 + i;
		F.sq_wqe_next[9] = 100 + i;
		dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_REQ_ERR,
					   .uidx = UIDX_RC,
					   .sop_drop_qpn =
					       (uint32_t)MLX5_OPCODE_RDMA_READ << 24 | QPN_RC,
					   .wqe_counter = 9 + 16 * i,
					   .syndrome = syn[i].syndrome,
					   .vendor = (uint8_t)(0x80 + i)});
		memset(&wc, 0, sizeof(wc));
		CHECK_EQ(kr_devx_cq_poll(&F.cq, &wc, 1), 1);
		CHECK_EQ(wc.wr_id, 0xe000 + i);
		CHECK_EQ(wc.status, syn[i].status);
		CHECK(wc.status != KR_WC_SUCCESS);
		CHECK_EQ(wc.syndrome, syn[i].syndrome);
		CHECK_EQ(wc.vendor_syndrome, 0x80 + i);
		CHECK_EQ(wc.opcode, KR_WC_RDMA_READ);
		CHECK_EQ(wc.qpn, QPN_RC);
		CHECK_EQ(F.rc.sq_ci, 100 + i);
		check_dbrec();
	}

	/* responder error (flush) consumes the RQ head */
	F.rq_wrid[0] = 0xf0;
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_ERR,
				   .uidx = UIDX_RC,
				   .sop_drop_qpn = QPN_RC,
				   .wqe_counter = 0,
				   .syndrome = MLX5_CQE_SYNDROME_WR_FLUSH_ERR});
	CHECK_EQ(kr_devx_cq_poll(&F.cq, &wc, 1), 1);
	CHECK_EQ(wc.wr_id, 0xf0);
	CHECK_EQ(wc.opcode, KR_WC_RECV);
	CHECK_EQ(wc.status, KR_WC_WR_FLUSH_ERR);
	CHECK_EQ(wc.qpn, QPN_RC);
	CHECK_EQ(F.rc.rq_ci, 1);

	/* flushes of a DCI batch: CAS then FAA then WRITE, one CQE each */
	F.sq_wrid[0] = 1;
	F.sq_wrid[2] = 2;
	F.sq_wrid[4] = 3;
	F.sq_wqe_next[0] = 2;
	F.sq_wqe_next[2] = 4;
	F.sq_wqe_next[4] = 6;
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_REQ_ERR,
				   .uidx = UIDX_RC,
				   .sop_drop_qpn = (uint32_t)MLX5_OPCODE_ATOMIC_CS << 24 | QPN_RC,
				   .wqe_counter = 0,
				   .syndrome = 0x15});
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_REQ_ERR,
				   .uidx = UIDX_RC,
				   .sop_drop_qpn = (uint32_t)MLX5_OPCODE_ATOMIC_FA << 24 | QPN_RC,
				   .wqe_counter = 2,
				   .syndrome = 0x05});
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_REQ_ERR,
				   .uidx = UIDX_RC,
				   .sop_drop_qpn = (uint32_t)MLX5_OPCODE_RDMA_WRITE << 24 | QPN_RC,
				   .wqe_counter = 4,
				   .syndrome = 0x05});
	{
		struct kr_devx_wc w3[3];

		CHECK_EQ(kr_devx_cq_poll(&F.cq, w3, 3), 3);
		CHECK_EQ(w3[0].opcode, KR_WC_COMP_SWAP);
		CHECK_EQ(w3[0].status, KR_WC_RETRY_EXC_ERR);
		CHECK_EQ(w3[1].opcode, KR_WC_FETCH_ADD);
		CHECK_EQ(w3[1].status, KR_WC_WR_FLUSH_ERR);
		CHECK_EQ(w3[2].opcode, KR_WC_RDMA_WRITE);
		CHECK_EQ(w3[2].wr_id, 3);
		CHECK_EQ(F.rc.sq_ci, 6);
	}
	free(F.cq.cqes);
}

/* ---- owner bit across passes, n limit, consumer record wrap ---- */

static void put_req(uint16_t ctr)
{
	F.sq_wrid[ctr & 15] = ctr;
	F.sq_wqe_next[ctr & 15] = ctr + 1u;
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_REQ,
				   .uidx = UIDX_RC,
				   .sop_drop_qpn = (uint32_t)MLX5_OPCODE_SEND << 24 | QPN_RC,
				   .wqe_counter = ctr});
}

static void test_owner_wrap(void)
{
	struct kr_devx_wc wc[8];
	uint16_t ctr = 0;
	int i, pass;

	fake_init();
	for (pass = 0; pass < 3; pass++) {
		/* fill the whole CQ, then reap in two calls (n limit) */
		for (i = 0; i < NCQE; i++)
			put_req(ctr++);
		CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 3), 3);
		CHECK_EQ(kr_devx_cq_poll(&F.cq, wc + 3, 8), 1);
		for (i = 0; i < NCQE; i++)
			CHECK_EQ(wc[i].wr_id, (uint64_t)(ctr - NCQE + i));
		check_dbrec();
		/* every slot still holds last pass's valid CQE: none looks ready */
		CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 8), 0);
		CHECK_EQ(F.cq.cons_index, (uint32_t)(2 * pass + 1) * NCQE);
		/* half a pass so the next one starts mid-ring */
		put_req(ctr++);
		CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 8), 1);
		CHECK_EQ(wc[0].wr_id, (uint64_t)(ctr - 1));
		CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 8), 0);
		/* back to a pass boundary */
		for (i = 0; i < NCQE - 1; i++)
			put_req(ctr++);
		CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 8), NCQE - 1);
	}

	/* the record holds 24 bits of the consumer index */
	F.cq.cons_index = F.dev_pi = 0xfffffe;
	put_req(ctr++);
	put_req(ctr++);
	put_req(ctr++);
	CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 8), 3);
	CHECK_EQ(F.cq.cons_index, 0x1000001);
	CHECK_EQ(F.cq_dbrec[0], htobe32(1));
	free(F.cq.cqes);
}

/* ---- unknown user_index: consumed, -EIO; a good CQE before it is not lost ---- */

static void test_unknown(void)
{
	struct kr_devx_wc wc[4];

	fake_init();
	put_req(1);
	dev_put(&(struct cqe_desc){
	    .opcode = MLX5_CQE_REQ, .uidx = RSC_CAP + 5, .sop_drop_qpn = QPN_RC});
	put_req(2);
	CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 1);
	CHECK_EQ(F.cq.cons_index, 1);
	CHECK_ERR(kr_devx_cq_poll(&F.cq, wc, 4), -EIO);
	CHECK_EQ(F.cq.cons_index, 2);
	check_dbrec();
	CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 2);

	/* index 0, a free slot, a DCT named by a requester CQE, a receive on nothing */
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESP_SEND, .uidx = 0});
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_REQ_ERR, .uidx = UIDX_FREE, .syndrome = 5});
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_REQ, .uidx = UIDX_DCT});
	CHECK_ERR(kr_devx_cq_poll(&F.cq, wc, 4), -EIO);
	CHECK_ERR(kr_devx_cq_poll(&F.cq, wc, 4), -EIO);
	CHECK_ERR(kr_devx_cq_poll(&F.cq, wc, 4), -EIO);
	CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 4), 0);
	CHECK_EQ(F.cq.cons_index, 6);
	/* an opcode the driver never asks for (resize) */
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_RESIZE_CQ, .uidx = UIDX_RC});
	CHECK_ERR(kr_devx_cq_poll(&F.cq, wc, 4), -EIO);
	CHECK_EQ(F.cq.cons_index, 7);
	check_dbrec();
	/* the stale high 24 bits of user_index are ignored (srqn_uidx bits 31:24) */
	F.sq_wrid[3] = 33;
	F.sq_wqe_next[3] = 4;
	dev_put(&(struct cqe_desc){.opcode = MLX5_CQE_REQ,
				   .uidx = 0xff000000u | UIDX_RC,
				   .sop_drop_qpn = QPN_RC,
				   .wqe_counter = 3});
	CHECK_EQ(kr_devx_cq_poll(&F.cq, wc, 4), 1);
	CHECK_EQ(wc[0].wr_id, 33);
	free(F.cq.cqes);
}

/* ---- status strings and errnos ---- */

static void test_strings(void)
{
	const char *seen[KR_WC_STATUS_MAX];
	int s, t;

	for (s = 0; s < KR_WC_STATUS_MAX; s++) {
		seen[s] = kr_strerror(s);
		CHECK(seen[s] != NULL);
		CHECK(strlen(seen[s]) > 0);
		CHECK(strcmp(seen[s], "unknown completion status") != 0);
		for (t = 0; t < s; t++)
			CHECK(strcmp(seen[s], seen[t]) != 0);
		if (s == KR_WC_SUCCESS)
			CHECK_EQ(kr_wc_status_errno(s), 0);
		else
			CHECK(kr_wc_status_errno(s) > 0);
	}
	CHECK(strcmp(kr_strerror(-1), "unknown completion status") == 0);
	CHECK(strcmp(kr_strerror(KR_WC_STATUS_MAX), "unknown completion status") == 0);
	CHECK(strcmp(kr_strerror(1000), "unknown completion status") == 0);
	CHECK_EQ(kr_wc_status_errno(-1), EINVAL);
	CHECK_EQ(kr_wc_status_errno(KR_WC_STATUS_MAX), EINVAL);
	CHECK_EQ(kr_wc_status_errno(KR_WC_REM_ACCESS_ERR), EACCES);
	CHECK_EQ(kr_wc_status_errno(KR_WC_LOC_PROT_ERR), EACCES);
	CHECK_EQ(kr_wc_status_errno(KR_WC_LOC_ACCESS_ERR), EACCES);
	CHECK_EQ(kr_wc_status_errno(KR_WC_RETRY_EXC_ERR), ETIMEDOUT);
	CHECK_EQ(kr_wc_status_errno(KR_WC_RNR_RETRY_EXC_ERR), ETIMEDOUT);
	CHECK_EQ(kr_wc_status_errno(KR_WC_WR_FLUSH_ERR), ECANCELED);
	CHECK_EQ(kr_wc_status_errno(KR_WC_REM_OP_ERR), EREMOTEIO);
	CHECK_EQ(kr_wc_status_errno(KR_WC_REM_INV_REQ_ERR), EREMOTEIO);
	CHECK_EQ(kr_wc_status_errno(KR_WC_REM_ABORT_ERR), EREMOTEIO);
}

int main(void)
{
	test_requester();
	test_responder();
	test_errors();
	test_owner_wrap();
	test_unknown();
	test_strings();
	KR_PASS("devx_cqe_parse");
}
