/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The devx data path end to end on two simulated hosts in one process:
 * RC WRITE (gather, inline), READ (scatter), SEND/RECV, SEND and WRITE with
 * immediate, CAS (hit and miss), FAA, a batch of 64 unsignaled WRITEs behind
 * one doorbell; then DCI -> DCT SEND, WRITE, READ, FAA with the right key, and
 * with a wrong key: the request fails with retry exceeded and delivers nothing.
 * Every payload byte and every completion field is checked.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN (1u << 20)
#define TMO_MS	5000
#define DC_KEY	0x0123456789abcdefull

static struct kr_fx_host A, B;

static uint8_t *amem(size_t off)
{
	return (uint8_t *)A.mem + off;
}

static uint8_t *bmem(size_t off)
{
	return (uint8_t *)B.mem + off;
}

static uint64_t braddr(size_t off)
{
	return (uint64_t)(uintptr_t)bmem(off);
}

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7 + (i >> 8));
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* ---- doorbell counter: wraps the backend's ops, forwards every call ---- */

static const struct kr_devx_ops *real_ops;
static struct kr_devx_ops counting_ops;
static int doorbells;

static void counting_doorbell(struct kr_devx_uar *uar, uint64_t val)
{
	doorbells++;
	real_ops->doorbell(uar, val);
}

static void count_doorbells(struct kr_devx_ctx *ctx)
{
	real_ops = ctx->ops;
	counting_ops = *ctx->ops;
	counting_ops.doorbell = counting_doorbell;
	ctx->ops = &counting_ops;
}

/* ---- completions ---- */

static void post_ring(struct kr_devx_qp *qp, const struct kr_devx_wr *wr)
{
	CHECK_OK(kr_devx_qp_post_send(qp, wr));
	kr_devx_qp_ring(qp);
}

static void expect_wc(struct kr_devx_cq *cq, uint64_t wr_id, int status,
		      enum kr_devx_wc_opcode opcode, uint32_t qpn, struct kr_devx_wc *out)
{
	struct kr_devx_wc wc;

	kr_fx_expect_wc(cq, wr_id, status, qpn, &wc);
	if (status == KR_WC_SUCCESS)
		CHECK_EQ(wc.opcode, opcode);
	if (out)
		*out = wc;
}

/* ---- RC ---- */

static void rc_write(struct kr_devx_qp *qa)
{
	struct kr_devx_sge sg[2] = {kr_fx_sge(&A, 0x0000, 4096), kr_fx_sge(&A, 0x2000, 100)};
	struct kr_devx_wr wr = {.wr_id = 0x101,
				.opcode = KR_WR_RDMA_WRITE,
				.flags = KR_WR_SIGNALED,
				.sge = sg,
				.num_sge = 2,
				.remote_addr = braddr(0x10000),
				.rkey = B.mr.rkey};
	uint8_t inl[200], copy[200];
	struct kr_devx_sge isg = {(uintptr_t)inl, sizeof(inl), 0};

	fill(amem(0x0000), 4096, 1);
	fill(amem(0x2000), 100, 2);
	memset(bmem(0x10000), 0xee, 4096 + 100 + 64);
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x101, KR_WC_SUCCESS, KR_WC_RDMA_WRITE, qa->qpn, NULL);
	CHECK(memcmp(bmem(0x10000), amem(0x0000), 4096) == 0);
	CHECK(memcmp(bmem(0x10000 + 4096), amem(0x2000), 100) == 0);
	CHECK_EQ(bmem(0x10000 + 4196)[0], 0xee); /* nothing past the end */

	/* inline: the bytes are taken at post time, not at ring time */
	fill(inl, sizeof(inl), 3);
	memcpy(copy, inl, sizeof(inl));
	memset(bmem(0x11800), 0xee, 256);
	wr = (struct kr_devx_wr){.wr_id = 0x102,
				 .opcode = KR_WR_RDMA_WRITE,
				 .flags = KR_WR_SIGNALED | KR_WR_INLINE,
				 .sge = &isg,
				 .num_sge = 1,
				 .remote_addr = braddr(0x11800),
				 .rkey = B.mr.rkey};
	CHECK_OK(kr_devx_qp_post_send(qa, &wr));
	memset(inl, 0, sizeof(inl));
	kr_devx_qp_ring(qa);
	expect_wc(&A.scq, 0x102, KR_WC_SUCCESS, KR_WC_RDMA_WRITE, qa->qpn, NULL);
	CHECK(memcmp(bmem(0x11800), copy, sizeof(copy)) == 0);
	CHECK_EQ(bmem(0x11800 + 200)[0], 0xee);
}

static void rc_read(struct kr_devx_qp *qa)
{
	struct kr_devx_sge sg[2] = {kr_fx_sge(&A, 0x20000, 5000), kr_fx_sge(&A, 0x24000, 3192)};
	struct kr_devx_wr wr = {.wr_id = 0x201,
				.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = sg,
				.num_sge = 2,
				.remote_addr = braddr(0x20000),
				.rkey = B.mr.rkey};
	struct kr_devx_wc wc;

	fill(bmem(0x20000), 8192, 4);
	memset(amem(0x20000), 0, 0x8000);
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x201, KR_WC_SUCCESS, KR_WC_RDMA_READ, qa->qpn, &wc);
	CHECK_EQ(wc.byte_len, 8192);
	CHECK(memcmp(amem(0x20000), bmem(0x20000), 5000) == 0);
	CHECK(memcmp(amem(0x24000), bmem(0x20000 + 5000), 3192) == 0);
	CHECK_EQ(amem(0x20000 + 5000)[0], 0);
	CHECK_EQ(amem(0x24000 + 3192)[0], 0);
}

static void rc_send(struct kr_devx_qp *qa, struct kr_devx_qp *qb)
{
	struct kr_devx_sge rsg = kr_fx_sge(&B, 0x30000, 4096);
	struct kr_devx_sge ssg = kr_fx_sge(&A, 0x30000, 1000);
	struct kr_devx_wr wr = {.wr_id = 0x301,
				.opcode = KR_WR_SEND,
				.flags = KR_WR_SIGNALED,
				.sge = &ssg,
				.num_sge = 1};
	struct kr_devx_wc wc;
	uint8_t inl[48];
	struct kr_devx_sge isg = {(uintptr_t)inl, sizeof(inl), 0};

	/* SEND -> RECV */
	fill(amem(0x30000), 1000, 5);
	memset(bmem(0x30000), 0xee, 4096);
	CHECK_OK(kr_devx_qp_post_recv(qb, &rsg, 1, 0x77));
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x301, KR_WC_SUCCESS, KR_WC_SEND, qa->qpn, NULL);
	expect_wc(&B.rcq, 0x77, KR_WC_SUCCESS, KR_WC_RECV, qb->qpn, &wc);
	CHECK_EQ(wc.byte_len, 1000);
	CHECK(!wc.has_imm);
	CHECK_EQ(wc.src_qpn, qa->qpn);
	CHECK(memcmp(bmem(0x30000), amem(0x30000), 1000) == 0);
	CHECK_EQ(bmem(0x30000 + 1000)[0], 0xee);

	/* SEND with immediate */
	fill(amem(0x30000), 64, 6);
	CHECK_OK(kr_devx_qp_post_recv(qb, &rsg, 1, 0x78));
	ssg.length = 64;
	wr.wr_id = 0x302;
	wr.opcode = KR_WR_SEND_IMM;
	wr.imm = 0xcafef00d;
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x302, KR_WC_SUCCESS, KR_WC_SEND, qa->qpn, NULL);
	expect_wc(&B.rcq, 0x78, KR_WC_SUCCESS, KR_WC_RECV, qb->qpn, &wc);
	CHECK_EQ(wc.byte_len, 64);
	CHECK(wc.has_imm);
	CHECK_EQ(wc.imm, 0xcafef00d);
	CHECK_EQ(wc.src_qpn, qa->qpn);
	CHECK(memcmp(bmem(0x30000), amem(0x30000), 64) == 0);

	/* inline SEND with immediate, unsignaled, then a signaled empty SEND */
	fill(inl, sizeof(inl), 7);
	CHECK_OK(kr_devx_qp_post_recv(qb, &rsg, 1, 0x79));
	CHECK_OK(kr_devx_qp_post_recv(qb, NULL, 0, 0x7a));
	wr = (struct kr_devx_wr){.wr_id = 0x303,
				 .opcode = KR_WR_SEND_IMM,
				 .flags = KR_WR_INLINE,
				 .imm = 0x01020304,
				 .sge = &isg,
				 .num_sge = 1};
	CHECK_OK(kr_devx_qp_post_send(qa, &wr));
	wr = (struct kr_devx_wr){.wr_id = 0x304, .opcode = KR_WR_SEND, .flags = KR_WR_SIGNALED};
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x304, KR_WC_SUCCESS, KR_WC_SEND, qa->qpn, NULL);
	expect_wc(&B.rcq, 0x79, KR_WC_SUCCESS, KR_WC_RECV, qb->qpn, &wc);
	CHECK_EQ(wc.byte_len, sizeof(inl));
	CHECK(wc.has_imm);
	CHECK_EQ(wc.imm, 0x01020304);
	CHECK(memcmp(bmem(0x30000), inl, sizeof(inl)) == 0);
	expect_wc(&B.rcq, 0x7a, KR_WC_SUCCESS, KR_WC_RECV, qb->qpn, &wc);
	CHECK_EQ(wc.byte_len, 0);
	CHECK(!wc.has_imm);
	CHECK_EQ(kr_fx_poll_none(&A.scq, 10), 0); /* the unsignaled one left no CQE */
}

static void rc_write_imm(struct kr_devx_qp *qa, struct kr_devx_qp *qb)
{
	struct kr_devx_sge rsg = kr_fx_sge(&B, 0x40000, 64);
	struct kr_devx_sge ssg = kr_fx_sge(&A, 0x40000, 512);
	struct kr_devx_wr wr = {.wr_id = 0x401,
				.opcode = KR_WR_RDMA_WRITE_IMM,
				.flags = KR_WR_SIGNALED,
				.imm = 0x1234abcd,
				.sge = &ssg,
				.num_sge = 1,
				.remote_addr = braddr(0x50000),
				.rkey = B.mr.rkey};
	struct kr_devx_wc wc;
	int i;

	fill(amem(0x40000), 512, 8);
	memset(bmem(0x40000), 0xee, 64);
	memset(bmem(0x50000), 0xee, 600);
	CHECK_OK(kr_devx_qp_post_recv(qb, &rsg, 1, 0x88));
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x401, KR_WC_SUCCESS, KR_WC_RDMA_WRITE, qa->qpn, NULL);
	expect_wc(&B.rcq, 0x88, KR_WC_SUCCESS, KR_WC_RECV_RDMA_WITH_IMM, qb->qpn, &wc);
	CHECK_EQ(wc.byte_len, 512);
	CHECK(wc.has_imm);
	CHECK_EQ(wc.imm, 0x1234abcd);
	CHECK_EQ(wc.src_qpn, qa->qpn);
	CHECK(memcmp(bmem(0x50000), amem(0x40000), 512) == 0);
	CHECK_EQ(bmem(0x50000 + 512)[0], 0xee);
	for (i = 0; i < 64; i++) /* the receive buffer is not written */
		CHECK_EQ(bmem(0x40000)[i], 0xee);
}

static void rc_atomics(struct kr_devx_qp *qa)
{
	struct kr_devx_sge sg = kr_fx_sge(&A, 0x60000, 8);
	struct kr_devx_wr wr = {.wr_id = 0x501,
				.opcode = KR_WR_ATOMIC_CS,
				.flags = KR_WR_SIGNALED,
				.sge = &sg,
				.num_sge = 1,
				.remote_addr = braddr(0x60008),
				.rkey = B.mr.rkey,
				.compare_add = 100,
				.swap = 200};
	struct kr_devx_wc wc;

	put64(bmem(0x60000), 0x1111111111111111ull);
	put64(bmem(0x60008), 100);
	put64(bmem(0x60010), 0x2222222222222222ull);
	put64(amem(0x60000), 0xdeaddeaddeaddeadull);

	/* CAS hit: swapped, old value returned */
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x501, KR_WC_SUCCESS, KR_WC_COMP_SWAP, qa->qpn, &wc);
	CHECK_EQ(wc.byte_len, 8);
	CHECK_EQ(get64(amem(0x60000)), 100);
	CHECK_EQ(get64(bmem(0x60008)), 200);

	/* CAS miss: unchanged, current value returned */
	put64(amem(0x60000), 0);
	wr.wr_id = 0x502;
	wr.compare_add = 999;
	wr.swap = 300;
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x502, KR_WC_SUCCESS, KR_WC_COMP_SWAP, qa->qpn, &wc);
	CHECK_EQ(get64(amem(0x60000)), 200);
	CHECK_EQ(get64(bmem(0x60008)), 200);

	/* FAA: old value returned, remote added (64-bit carry) */
	put64(bmem(0x60008), 0xffffffffull);
	wr.wr_id = 0x503;
	wr.opcode = KR_WR_ATOMIC_FA;
	wr.compare_add = 0x100000001ull;
	post_ring(qa, &wr);
	expect_wc(&A.scq, 0x503, KR_WC_SUCCESS, KR_WC_FETCH_ADD, qa->qpn, &wc);
	CHECK_EQ(wc.byte_len, 8);
	CHECK_EQ(get64(amem(0x60000)), 0xffffffffull);
	CHECK_EQ(get64(bmem(0x60008)), 0x200000000ull);
	/* neighbours untouched */
	CHECK_EQ(get64(bmem(0x60000)), 0x1111111111111111ull);
	CHECK_EQ(get64(bmem(0x60010)), 0x2222222222222222ull);
}

static void rc_batch(struct kr_devx_qp *qa)
{
	enum { N = 64, SZ = 256 };
	struct kr_devx_sge sg;
	struct kr_devx_wr wr = {
	    .opcode = KR_WR_RDMA_WRITE, .sge = &sg, .num_sge = 1, .rkey = B.mr.rkey};
	int i, before;

	fill(amem(0x80000), (N + 1) * SZ, 9);
	memset(bmem(0x80000), 0xee, (N + 1) * SZ);
	CHECK_EQ(qa->sq_ci, qa->sq_pi);
	before = doorbells;
	for (i = 0; i <= N; i++) {
		sg = kr_fx_sge(&A, 0x80000 + (size_t)i * SZ, SZ);
		wr.wr_id = 0x600 + (uint64_t)i;
		wr.flags = i == N ? KR_WR_SIGNALED : 0;
		wr.remote_addr = braddr(0x80000 + (size_t)i * SZ);
		CHECK_OK(kr_devx_qp_post_send(qa, &wr));
	}
	CHECK_EQ(doorbells, before);
	kr_devx_qp_ring(qa);
	CHECK_EQ(doorbells, before + 1);
	expect_wc(&A.scq, 0x600 + N, KR_WC_SUCCESS, KR_WC_RDMA_WRITE, qa->qpn, NULL);
	CHECK_EQ(kr_fx_poll_none(&A.scq, 10), 0);
	CHECK(memcmp(bmem(0x80000), amem(0x80000), (N + 1) * SZ) == 0);
	CHECK_EQ(qa->sq_ci, qa->sq_pi); /* the signaled CQE freed the whole batch */
}

static void test_rc(void)
{
	struct kr_devx_qp qa, qb;

	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, NULL));
	rc_write(&qa);
	rc_read(&qa);
	rc_send(&qa, &qb);
	rc_write_imm(&qa, &qb);
	rc_atomics(&qa);
	rc_batch(&qa);
	CHECK_EQ(kr_fx_poll_none(&B.rcq, 10), 0);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
}

/* ---- DC ---- */

static void dc_good(struct kr_devx_qp *dci, struct kr_devx_srq *srq, struct kr_devx_dct *dct,
		    const struct kr_devx_dc_av *av)
{
	struct kr_devx_sge rsg = kr_fx_sge(&B, 0x90000, 4096);
	struct kr_devx_sge ssg = kr_fx_sge(&A, 0x90000, 300);
	struct kr_devx_sge sg8 = kr_fx_sge(&A, 0xa8000, 8);
	struct kr_devx_wr wr = {.wr_id = 0x701,
				.opcode = KR_WR_SEND,
				.flags = KR_WR_SIGNALED,
				.sge = &ssg,
				.num_sge = 1,
				.av = av};
	struct kr_devx_wc wc;

	/* SEND lands in the DCT's SRQ; the source is the DCI */
	fill(amem(0x90000), 300, 10);
	memset(bmem(0x90000), 0xee, 4096);
	CHECK_OK(kr_devx_srq_post_recv(srq, &rsg, 1, 0x99));
	post_ring(dci, &wr);
	expect_wc(&A.scq, 0x701, KR_WC_SUCCESS, KR_WC_SEND, dci->qpn, NULL);
	expect_wc(&B.rcq, 0x99, KR_WC_SUCCESS, KR_WC_RECV, dct->dctn, &wc);
	CHECK_EQ(wc.byte_len, 300);
	CHECK(!wc.has_imm);
	CHECK_EQ(wc.src_qpn, dci->qpn);
	CHECK(memcmp(bmem(0x90000), amem(0x90000), 300) == 0);
	CHECK_EQ(bmem(0x90000 + 300)[0], 0xee);

	/* SEND with immediate */
	CHECK_OK(kr_devx_srq_post_recv(srq, &rsg, 1, 0x9a));
	wr.wr_id = 0x702;
	wr.opcode = KR_WR_SEND_IMM;
	wr.imm = 0x600df00d;
	post_ring(dci, &wr);
	expect_wc(&A.scq, 0x702, KR_WC_SUCCESS, KR_WC_SEND, dci->qpn, NULL);
	expect_wc(&B.rcq, 0x9a, KR_WC_SUCCESS, KR_WC_RECV, dct->dctn, &wc);
	CHECK(wc.has_imm);
	CHECK_EQ(wc.imm, 0x600df00d);
	CHECK_EQ(wc.src_qpn, dci->qpn);

	/* WRITE through the DCT */
	fill(amem(0xa0000), 2048, 11);
	memset(bmem(0xa0000), 0xee, 2048 + 64);
	ssg = kr_fx_sge(&A, 0xa0000, 2048);
	wr = (struct kr_devx_wr){.wr_id = 0x703,
				 .opcode = KR_WR_RDMA_WRITE,
				 .flags = KR_WR_SIGNALED,
				 .sge = &ssg,
				 .num_sge = 1,
				 .remote_addr = braddr(0xa0000),
				 .rkey = B.mr.rkey,
				 .av = av};
	post_ring(dci, &wr);
	expect_wc(&A.scq, 0x703, KR_WC_SUCCESS, KR_WC_RDMA_WRITE, dci->qpn, NULL);
	CHECK(memcmp(bmem(0xa0000), amem(0xa0000), 2048) == 0);
	CHECK_EQ(bmem(0xa0000 + 2048)[0], 0xee);

	/* READ through the DCT */
	fill(bmem(0xb0000), 2048, 12);
	memset(amem(0xb0000), 0, 2048 + 64);
	ssg = kr_fx_sge(&A, 0xb0000, 2048);
	wr.wr_id = 0x704;
	wr.opcode = KR_WR_RDMA_READ;
	wr.remote_addr = braddr(0xb0000);
	post_ring(dci, &wr);
	expect_wc(&A.scq, 0x704, KR_WC_SUCCESS, KR_WC_RDMA_READ, dci->qpn, &wc);
	CHECK_EQ(wc.byte_len, 2048);
	CHECK(memcmp(amem(0xb0000), bmem(0xb0000), 2048) == 0);
	CHECK_EQ(amem(0xb0000 + 2048)[0], 0);

	/* FAA through the DCT */
	put64(bmem(0xa8000), 41);
	wr = (struct kr_devx_wr){.wr_id = 0x705,
				 .opcode = KR_WR_ATOMIC_FA,
				 .flags = KR_WR_SIGNALED,
				 .sge = &sg8,
				 .num_sge = 1,
				 .remote_addr = braddr(0xa8000),
				 .rkey = B.mr.rkey,
				 .compare_add = 1,
				 .av = av};
	post_ring(dci, &wr);
	expect_wc(&A.scq, 0x705, KR_WC_SUCCESS, KR_WC_FETCH_ADD, dci->qpn, NULL);
	CHECK_EQ(get64(amem(0xa8000)), 41);
	CHECK_EQ(get64(bmem(0xa8000)), 42);
}

/* A wrong DC key: the target drops the request silently; the DCI retries and fails. */
static void dc_bad_key(struct kr_devx_qp *dci, struct kr_devx_srq *srq, struct kr_devx_dct *dct,
		       const struct kr_devx_dc_av *good_av)
{
	struct kr_devx_qp_conn c;
	struct kr_devx_qp bad1, bad2;
	struct kr_devx_dc_av av = *good_av;
	struct kr_devx_sge rsg = kr_fx_sge(&B, 0xc0000, 4096);
	struct kr_devx_sge ssg = kr_fx_sge(&A, 0xc0000, 128);
	struct kr_devx_wr wr = {.wr_id = 0x801,
				.opcode = KR_WR_RDMA_WRITE,
				.flags = KR_WR_SIGNALED,
				.sge = &ssg,
				.num_sge = 1,
				.remote_addr = braddr(0xd0000),
				.rkey = B.mr.rkey,
				.av = &av};
	struct kr_devx_wc wc;
	int i;

	kr_fx_conn_default(&c);
	c.ack_timeout = 8;
	c.retry_count = 1;
	CHECK_OK(kr_fx_dci_create(&A, &bad1, &c));
	CHECK_OK(kr_fx_dci_create(&A, &bad2, &c));
	av.dc_key = DC_KEY ^ 0x1;
	fill(amem(0xc0000), 128, 13);
	memset(bmem(0xc0000), 0xee, 4096);
	memset(bmem(0xd0000), 0xee, 256);

	/* WRITE: retry exceeded, target memory unchanged */
	post_ring(&bad1, &wr);
	expect_wc(&A.scq, 0x801, KR_WC_RETRY_EXC_ERR, KR_WC_RDMA_WRITE, bad1.qpn, &wc);
	CHECK_EQ(wc.syndrome, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	for (i = 0; i < 256; i++)
		CHECK_EQ(bmem(0xd0000)[i], 0xee);

	/* SEND with a receive waiting: not delivered, no receive CQE */
	CHECK_OK(kr_devx_srq_post_recv(srq, &rsg, 1, 0xbad));
	wr.wr_id = 0x802;
	wr.opcode = KR_WR_SEND;
	post_ring(&bad2, &wr);
	expect_wc(&A.scq, 0x802, KR_WC_RETRY_EXC_ERR, KR_WC_SEND, bad2.qpn, &wc);
	CHECK_EQ(wc.syndrome, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	CHECK_EQ(kr_fx_poll_none(&B.rcq, 20), 0);
	for (i = 0; i < 4096; i++)
		CHECK_EQ(bmem(0xc0000)[i], 0xee);

	/* the DCT still serves the right key: the waiting receive takes the next SEND */
	wr.wr_id = 0x803;
	wr.av = good_av;
	post_ring(dci, &wr);
	expect_wc(&A.scq, 0x803, KR_WC_SUCCESS, KR_WC_SEND, dci->qpn, NULL);
	expect_wc(&B.rcq, 0xbad, KR_WC_SUCCESS, KR_WC_RECV, dct->dctn, &wc);
	CHECK_EQ(wc.byte_len, 128);
	CHECK(memcmp(bmem(0xc0000), amem(0xc0000), 128) == 0);

	kr_fx_qp_destroy(&bad1);
	kr_fx_qp_destroy(&bad2);
}

static void test_dc(void)
{
	struct kr_devx_qp dci;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_dc_av av;

	CHECK_OK(kr_fx_dct_create(&B, &srq, &dct, DC_KEY));
	CHECK_OK(kr_fx_dci_create(&A, &dci, NULL));
	memset(&av, 0, sizeof(av));
	kr_fx_dc_av(&A, &B, &dct, &av);
	CHECK_EQ(av.dctn, dct.dctn);
	CHECK_EQ(av.dc_key, DC_KEY);
	dc_good(&dci, &srq, &dct, &av);
	dc_bad_key(&dci, &srq, &dct, &av);
	CHECK_EQ(kr_fx_poll_none(&A.scq, 10), 0);
	CHECK_EQ(kr_fx_poll_none(&B.rcq, 10), 0);
	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
}

int main(void)
{
	CHECK_OK(kr_fx_host_open(&A, "sim:pp_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:pp_b", MEM_LEN));
	count_doorbells(A.ctx);
	test_rc();
	test_dc();
	A.ctx->ops = real_ops;
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("devx_pingpong");
}
