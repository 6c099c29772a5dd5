/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim engine faced with requests that must fail, as a ConnectX fails them:
 *   - a WRITE with a bad lkey: LOCAL_PROT_ERR CQE, QP in ERR, the next WQE
 *     flushed (WR_FLUSH_ERR);
 *   - a WRITE with a bad rkey, and one past the end of the remote MR:
 *     REMOTE_ACCESS_ERR, remote memory untouched, both QPs in ERR;
 *   - 2RST -> INIT -> RTR -> RTS brings the pair back and a WRITE works;
 *   - a second QP pair on the same hosts works before, between and after;
 *   - SEND with no receive posted: rnr_retry 0 -> RNR_RETRY_EXC_ERR; rnr_retry
 *     7 (infinite) with a short RNR timer and the receive posted 50 ms later
 *     -> the SEND completes and the data arrives;
 *   - garbage in the ring (unknown opcode, ds 0, then random WQE bytes): one
 *     CQE per WQE, LOCAL_QP_OP_ERR for the malformed ones, the engine lives;
 *   - 2ERR by command: posted receives, the WQE in flight and WQEs posted
 *     later each complete once with WR_FLUSH_ERR.
 */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN (256u << 10)
#define TMO_MS	5000

static struct kr_fx_host A, B;

static uint8_t *amem(size_t off)
{
	return (uint8_t *)A.mem + off;
}

static uint8_t *bmem(size_t off)
{
	return (uint8_t *)B.mem + off;
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 13 + i * 5 + (i >> 7));
}

static void expect_wc(struct kr_devx_cq *cq, uint64_t wr_id, int status, uint8_t syndrome,
		      uint32_t qpn)
{
	struct kr_devx_wc wc;

	kr_fx_expect_wc(cq, wr_id, status, qpn, &wc);
	CHECK_EQ(wc.syndrome, syndrome);
}

static uint8_t qp_state(struct kr_devx_qp *qp)
{
	struct kr_devx_qp_info info;

	CHECK_OK(kr_devx_qp_query(qp, &info));
	return info.state;
}

static void write_wr(struct kr_devx_wr *wr, uint64_t wr_id, struct kr_devx_sge *sge, uint64_t raddr,
		     uint32_t rkey)
{
	*wr = (struct kr_devx_wr){.wr_id = wr_id,
				  .opcode = KR_WR_RDMA_WRITE,
				  .flags = KR_WR_SIGNALED,
				  .sge = sge,
				  .num_sge = 1,
				  .remote_addr = raddr,
				  .rkey = rkey};
}

static void post_ring(struct kr_devx_qp *qp, const struct kr_devx_wr *wr)
{
	CHECK_OK(kr_devx_qp_post_send(qp, wr));
	kr_devx_qp_ring(qp);
}

/* A good WRITE a -> b of len bytes at off; checks completion and data. */
static void good_write(struct kr_devx_qp *qa, size_t off, uint32_t len, uint64_t wr_id)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, off, len);
	struct kr_devx_wr wr;

	fill(amem(off), len, (unsigned int)wr_id);
	memset(bmem(off), 0, len);
	write_wr(&wr, wr_id, &sge, (uintptr_t)bmem(off), B.mr.rkey);
	post_ring(qa, &wr);
	expect_wc(&A.scq, wr_id, KR_WC_SUCCESS, 0, qa->qpn);
	CHECK(memcmp(bmem(off), amem(off), len) == 0);
}

/* Connection parameters of qp on h towards peer (on host ph). */
static void conn_to(struct kr_fx_host *from, struct kr_fx_host *ph, struct kr_devx_qp *peer,
		    struct kr_devx_qp_conn *c)
{
	kr_fx_conn_default(c);
	c->remote_qpn = peer->qpn;
	kr_devx_qp_conn_path(c, &from->ctx->port, &ph->ctx->port.addr, 0, peer->qpn);
}

/* 2RST then RST->INIT->RTR->RTS on both ends, fresh PSNs on both. */
static void recover(struct kr_devx_qp *qa, struct kr_devx_qp *qb)
{
	struct kr_devx_qp_conn ca, cb;

	CHECK_OK(kr_devx_qp_modify(qa, KR_QP_2RST, NULL));
	CHECK_OK(kr_devx_qp_modify(qb, KR_QP_2RST, NULL));
	CHECK_EQ(qp_state(qa), KR_QPC_STATE_RST);
	conn_to(&A, &B, qb, &ca);
	conn_to(&B, &A, qa, &cb);
	CHECK_OK(kr_devx_qp_connect(qa, &ca));
	CHECK_OK(kr_devx_qp_connect(qb, &cb));
	CHECK_EQ(qp_state(qa), KR_QPC_STATE_RTS);
	CHECK_EQ(qp_state(qb), KR_QPC_STATE_RTS);
}

static void bad_lkey(struct kr_devx_qp *qa, struct kr_devx_qp *qa2)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, 0x1000, 256);
	struct kr_devx_wr wr;

	/* an lkey whose index names no MKEY */
	sge.lkey = A.mr.lkey + (0x300u << 8);
	memset(bmem(0x1000), 0x5a, 256);
	write_wr(&wr, 0x11, &sge, (uintptr_t)bmem(0x1000), B.mr.rkey);
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x11, KR_WC_LOC_PROT_ERR, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR, qa->qpn);
	CHECK_EQ(qp_state(qa), KR_QPC_STATE_ERR);
	CHECK_EQ(bmem(0x1000)[0], 0x5a);

	/* a good WQE behind it is flushed, one CQE */
	sge = kr_fx_sge(&A, 0x1000, 64);
	write_wr(&wr, 0x12, &sge, (uintptr_t)bmem(0x1000), B.mr.rkey);
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x12, KR_WC_WR_FLUSH_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, qa->qpn);
	CHECK_EQ(kr_fx_poll_none(&A.scq, 20), 0);
	CHECK_EQ(bmem(0x1000)[0], 0x5a);

	/* the other pair on the same hosts does not notice */
	good_write(qa2, 0x8000, 3000, 0x21);
}

static void bad_remote(struct kr_devx_qp *qa, struct kr_devx_qp *qb, struct kr_devx_qp *qa2)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, 0x2000, 512);
	uint8_t tail[64];
	struct kr_devx_wr wr;

	/* wrong rkey: the variant byte does not match */
	fill(amem(0x2000), 512, 9);
	memset(bmem(0x2000), 0x66, 512);
	write_wr(&wr, 0x31, &sge, (uintptr_t)bmem(0x2000), B.mr.rkey ^ 0x5a);
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x31, KR_WC_REM_ACCESS_ERR, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, qa->qpn);
	CHECK_EQ(qp_state(qa), KR_QPC_STATE_ERR);
	CHECK_EQ(qp_state(qb), KR_QPC_STATE_ERR); /* an RC responder fails too */
	CHECK_EQ(bmem(0x2000)[0], 0x66);
	CHECK_EQ(bmem(0x2000)[511], 0x66);
	good_write(qa2, 0x9000, 100, 0x22);

	recover(qa, qb);
	good_write(qa, 0x3000, 2500, 0x32);

	/* in range at the start, past the end of the MR at the end */
	memcpy(tail, bmem(MEM_LEN - sizeof(tail)), sizeof(tail));
	write_wr(&wr, 0x33, &sge, (uintptr_t)bmem(MEM_LEN - 256), B.mr.rkey);
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x33, KR_WC_REM_ACCESS_ERR, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, qa->qpn);
	CHECK(memcmp(bmem(MEM_LEN - sizeof(tail)), tail, sizeof(tail)) == 0);
	CHECK_EQ(qp_state(qa), KR_QPC_STATE_ERR);

	recover(qa, qb);
	good_write(qa, 0x4000, 4096 + 17, 0x34);
	good_write(qa2, 0xa000, 8, 0x23);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

static void rnr(void)
{
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_conn tmpl;
	struct kr_devx_sge ssg = kr_fx_sge(&A, 0x6000, 1500);
	struct kr_devx_sge rsg = kr_fx_sge(&B, 0x6000, 2048);
	struct kr_devx_wr wr = {.wr_id = 0x41,
				.opcode = KR_WR_SEND,
				.flags = KR_WR_SIGNALED,
				.sge = &ssg,
				.num_sge = 1};
	struct kr_devx_wc wc;

	/* no RNR retries: the first RNR NAK is fatal */
	kr_fx_conn_default(&tmpl);
	tmpl.rnr_retry = 0;
	tmpl.min_rnr_nak = 1; /* 0.01 ms */
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, &tmpl));
	post_ring(&qa, &wr);
	expect_wc(&A.scq, 0x41, KR_WC_RNR_RETRY_EXC_ERR, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR,
		  qa.qpn);
	CHECK_EQ(qp_state(&qa), KR_QPC_STATE_ERR);
	CHECK_EQ(kr_fx_poll_none(&B.rcq, 10), 0);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);

	/* infinite RNR retries: the SEND waits for the receive */
	tmpl.rnr_retry = 7;
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, &tmpl));
	fill(amem(0x6000), 1500, 11);
	memset(bmem(0x6000), 0, 2048);
	wr.wr_id = 0x42;
	post_ring(&qa, &wr);
	sleep_ms(50);
	if (kr_devx_cq_poll(&A.scq, &wc, 1) == 1)
		KR_FAIL("early completion: wr_id %#llx status %d syndrome %#x",
			(unsigned long long)wc.wr_id, wc.status, wc.syndrome);
	CHECK_OK(kr_devx_qp_post_recv(&qb, &rsg, 1, 0x43));
	expect_wc(&A.scq, 0x42, KR_WC_SUCCESS, 0, qa.qpn);
	memset(&wc, 0, sizeof(wc));
	CHECK_OK(kr_fx_poll_one(&B.rcq, &wc, TMO_MS));
	CHECK_EQ(wc.status, KR_WC_SUCCESS);
	CHECK_EQ(wc.wr_id, 0x43);
	CHECK_EQ(wc.opcode, KR_WC_RECV);
	CHECK_EQ(wc.byte_len, 1500);
	CHECK_EQ(wc.src_qpn, qa.qpn);
	CHECK(memcmp(bmem(0x6000), amem(0x6000), 1500) == 0);
	CHECK_EQ(bmem(0x6000)[1500], 0);
	CHECK_EQ(qp_state(&qa), KR_QPC_STATE_RTS);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
}

/* Post a valid one-WQEBB WRITE, let mangle() rewrite it in the ring, ring it. */
static void post_mangled(struct kr_devx_qp *qa, uint64_t wr_id,
			 void (*mangle)(uint8_t *wqe, void *arg), void *arg)
{
	struct kr_devx_sge sge = kr_fx_sge(&A, 0x7000, 32);
	struct kr_devx_wr wr;

	write_wr(&wr, wr_id, &sge, (uintptr_t)bmem(0x7000), B.mr.rkey);
	CHECK_OK(kr_devx_qp_post_send(qa, &wr));
	mangle(qa->sq_last_ctrl, arg);
	kr_devx_qp_ring(qa);
}

static void mangle_opcode(uint8_t *wqe, void *arg)
{
	(void)arg;
	wqe[3] = 0x55; /* opmod_idx_opcode: the opcode is its last byte */
}

static void mangle_ds(uint8_t *wqe, void *arg)
{
	(void)arg;
	wqe[7] = 0; /* qpn_ds: ds 0 */
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void mangle_random(uint8_t *wqe, void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 64; i++)
		if (rng() % 3 == 0)
			wqe[i] = (uint8_t)rng();
	wqe[11] |= MLX5_WQE_CTRL_CQ_UPDATE; /* fm_ce_se: always a CQE */
}

static void garbage(void)
{
	struct kr_devx_qp qa, qb;
	struct kr_devx_qp_conn tmpl;
	struct kr_devx_wc wc;
	int i;

	kr_fx_conn_default(&tmpl);
	tmpl.rnr_retry = 0; /* a random SEND must not wait for a receive forever */
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, &tmpl));

	post_mangled(&qa, 0x51, mangle_opcode, NULL);
	expect_wc(&A.scq, 0x51, KR_WC_LOC_QP_OP_ERR, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, qa.qpn);
	CHECK_EQ(qp_state(&qa), KR_QPC_STATE_ERR);
	recover(&qa, &qb);
	post_mangled(&qa, 0x52, mangle_ds, NULL);
	expect_wc(&A.scq, 0x52, KR_WC_LOC_QP_OP_ERR, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR, qa.qpn);
	CHECK_EQ(qp_state(&qa), KR_QPC_STATE_ERR);
	recover(&qa, &qb);

	for (i = 0; i < 40; i++) {
		post_mangled(&qa, 0x1000 + i, mangle_random, NULL);
		memset(&wc, 0, sizeof(wc));
		CHECK_OK(kr_fx_poll_one(&A.scq, &wc, TMO_MS));
		CHECK_EQ(wc.wr_id, 0x1000 + i);
		CHECK_EQ(kr_fx_poll_none(&A.scq, 1), 0);
		if (wc.status != KR_WC_SUCCESS || qp_state(&qb) != KR_QPC_STATE_RTS)
			recover(&qa, &qb);
	}
	good_write(&qa, 0x7000, 600, 0x53);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
}

static void cmd_err_flush(void)
{
	struct kr_devx_qp qc, qd;
	struct kr_devx_sge r1 = kr_fx_sge(&B, 0xc000, 512), r2 = kr_fx_sge(&B, 0xd000, 512);
	struct kr_devx_sge sge = kr_fx_sge(&A, 0xc000, 200);
	struct kr_devx_wr wr;

	CHECK_OK(kr_fx_rc_pair(&A, &qc, &B, &qd, NULL));
	CHECK_OK(kr_devx_qp_post_recv(&qd, &r1, 1, 0x61));
	CHECK_OK(kr_devx_qp_post_recv(&qd, &r2, 1, 0x62));
	CHECK_OK(kr_devx_qp_modify(&qd, KR_QP_2ERR, NULL));
	expect_wc(&B.rcq, 0x61, KR_WC_WR_FLUSH_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, qd.qpn);
	expect_wc(&B.rcq, 0x62, KR_WC_WR_FLUSH_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, qd.qpn);

	/* the peer drops it: the WRITE stays in flight until the QP is failed */
	memset(bmem(0xc000), 0x77, 200);
	write_wr(&wr, 0x63, &sge, (uintptr_t)bmem(0xc000), B.mr.rkey);
	post_ring(&qc, &wr);
	sleep_ms(5);
	CHECK_OK(kr_devx_qp_modify(&qc, KR_QP_2ERR, NULL));
	expect_wc(&A.scq, 0x63, KR_WC_WR_FLUSH_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, qc.qpn);
	write_wr(&wr, 0x64, &sge, (uintptr_t)bmem(0xc000), B.mr.rkey);
	post_ring(&qc, &wr);
	expect_wc(&A.scq, 0x64, KR_WC_WR_FLUSH_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, qc.qpn);
	CHECK_EQ(kr_fx_poll_none(&A.scq, 5), 0);
	CHECK_EQ(kr_fx_poll_none(&B.rcq, 5), 0);
	CHECK_EQ(bmem(0xc000)[0], 0x77);
	kr_fx_qp_destroy(&qc);
	kr_fx_qp_destroy(&qd);
}

int main(void)
{
	struct kr_devx_qp qa, qb, qa2, qb2;

	CHECK_OK(kr_fx_host_open(&A, "sim:bw_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:bw_b", MEM_LEN));
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, NULL));
	CHECK_OK(kr_fx_rc_pair(&A, &qa2, &B, &qb2, NULL));
	good_write(&qa2, 0x8000, 64, 0x20);

	bad_lkey(&qa, &qa2);
	recover(&qa, &qb);
	good_write(&qa, 0x1000, 1024, 0x13);

	bad_remote(&qa, &qb, &qa2);
	rnr();
	garbage();
	cmd_err_flush();
	good_write(&qa2, 0xb000, 5000, 0x24);

	kr_fx_qp_destroy(&qa2);
	kr_fx_qp_destroy(&qb2);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_bad_wqe");
}
