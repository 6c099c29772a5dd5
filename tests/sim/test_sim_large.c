/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long messages through the sim engine: thousands of packets per message, so
 * the requester's window, the cumulative ACKs, the READ response stream (a
 * burst per engine pass) and the requests held behind it all get used. One
 * doorbell: a 3 MiB WRITE, a 3 MiB READ, a 150 KiB READ, then a WRITE and a
 * multi-packet SEND scattered over three receive SGEs that queue behind the
 * last READ's responses at the responder, a FAA.
 * Completions come in order; every byte is checked.
 */
#include <stdint.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"

#define MEM_LEN (8u << 20)
#define BIG	(3u << 20)
#define MID	(150u << 10)
#define TMO_MS	10000

static struct kr_fx_host A, B;

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 131 + (i >> 10) * 7);
}

static void expect_wc(struct kr_devx_cq *cq, uint64_t wr_id, enum kr_devx_wc_opcode op,
		      uint32_t byte_len)
{
	struct kr_devx_wc wc;

	memset(&wc, 0, sizeof(wc));
	CHECK_OK(kr_fx_poll_one(cq, &wc, TMO_MS));
	if (wc.status != KR_WC_SUCCESS)
		KR_FAIL("wr_id %#llx: %s (syndrome %#x)", (unsigned long long)wc.wr_id,
			kr_strerror(wc.status), wc.syndrome);
	CHECK_EQ(wc.wr_id, wr_id);
	CHECK_EQ(wc.opcode, op);
	if (byte_len)
		CHECK_EQ(wc.byte_len, byte_len);
}

int main(void)
{
	struct kr_devx_qp qa, qb;
	uint8_t *a, *b;
	uint64_t base, v;
	struct kr_devx_sge w1 = {0}, r1 = {0}, r2 = {0}, w2 = {0}, s1 = {0}, fa = {0}, rcv[3];
	struct kr_devx_wr wr[6];
	int i;

	CHECK_OK(kr_fx_host_open(&A, "sim:big_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:big_b", MEM_LEN));
	CHECK_OK(kr_fx_rc_pair(&A, &qa, &B, &qb, NULL));
	a = A.mem;
	b = B.mem;
	base = (uintptr_t)b;

	fill(a, BIG, 1);	      /* WRITE source: A[0, 3M) -> B[0, 3M) */
	fill(b + (4u << 20), BIG, 2); /* READ source: B[4M, 7M) -> A[4M, 7M) */
	memset(b, 0, BIG);
	memset(a + (4u << 20), 0, BIG);
	fill(b + (4u << 20) + BIG, MID, 5); /* READ source: B[7M+..] -> A[7M+..] */
	memset(a + (4u << 20) + BIG, 0, MID);
	fill(a + BIG, 10000, 3);	  /* small WRITE: A[3M..] -> B[3M..] */
	fill(a + BIG + 0x10000, 5000, 4); /* SEND payload */
	memset(b + BIG, 0, 0x20000);
	v = 40;
	memcpy(b + (7u << 20) + MID, &v, 8);

	rcv[0] = kr_fx_sge(&B, BIG + 0x10000, 1000);
	rcv[1] = kr_fx_sge(&B, BIG + 0x11000, 1500);
	rcv[2] = kr_fx_sge(&B, BIG + 0x12000, 4096);
	CHECK_OK(kr_devx_qp_post_recv(&qb, rcv, 3, 0x77));

	w1 = kr_fx_sge(&A, 0, BIG);
	r1 = kr_fx_sge(&A, 4u << 20, BIG);
	r2 = kr_fx_sge(&A, (4u << 20) + BIG, MID);
	w2 = kr_fx_sge(&A, BIG, 10000);
	s1 = kr_fx_sge(&A, BIG + 0x10000, 5000);
	fa = kr_fx_sge(&A, BIG + 0x18000, 8);
	wr[0] = (struct kr_devx_wr){.wr_id = 1,
				    .opcode = KR_WR_RDMA_WRITE,
				    .flags = KR_WR_SIGNALED,
				    .sge = &w1,
				    .num_sge = 1,
				    .remote_addr = base,
				    .rkey = B.mr.rkey};
	wr[1] = (struct kr_devx_wr){.wr_id = 2,
				    .opcode = KR_WR_RDMA_READ,
				    .flags = KR_WR_SIGNALED,
				    .sge = &r1,
				    .num_sge = 1,
				    .remote_addr = base + (4u << 20),
				    .rkey = B.mr.rkey};
	wr[5] = (struct kr_devx_wr){.wr_id = 6,
				    .opcode = KR_WR_RDMA_READ,
				    .flags = KR_WR_SIGNALED,
				    .sge = &r2,
				    .num_sge = 1,
				    .remote_addr = base + (7u << 20),
				    .rkey = B.mr.rkey};
	wr[2] = (struct kr_devx_wr){.wr_id = 3,
				    .opcode = KR_WR_RDMA_WRITE,
				    .flags = KR_WR_SIGNALED,
				    .sge = &w2,
				    .num_sge = 1,
				    .remote_addr = base + BIG,
				    .rkey = B.mr.rkey};
	wr[3] = (struct kr_devx_wr){.wr_id = 4,
				    .opcode = KR_WR_SEND_IMM,
				    .flags = KR_WR_SIGNALED,
				    .imm = 0xabcdef01,
				    .sge = &s1,
				    .num_sge = 1};
	wr[4] = (struct kr_devx_wr){.wr_id = 5,
				    .opcode = KR_WR_ATOMIC_FA,
				    .flags = KR_WR_SIGNALED,
				    .sge = &fa,
				    .num_sge = 1,
				    .remote_addr = base + (7u << 20) + MID,
				    .rkey = B.mr.rkey,
				    .compare_add = 2};
	CHECK_OK(kr_devx_qp_post_send(&qa, &wr[0]));
	CHECK_OK(kr_devx_qp_post_send(&qa, &wr[1]));
	CHECK_OK(kr_devx_qp_post_send(&qa, &wr[5]));
	for (i = 2; i < 5; i++)
		CHECK_OK(kr_devx_qp_post_send(&qa, &wr[i]));
	kr_devx_qp_ring(&qa);

	expect_wc(&A.scq, 1, KR_WC_RDMA_WRITE, 0);
	expect_wc(&A.scq, 2, KR_WC_RDMA_READ, BIG);
	expect_wc(&A.scq, 6, KR_WC_RDMA_READ, MID);
	expect_wc(&A.scq, 3, KR_WC_RDMA_WRITE, 0);
	expect_wc(&A.scq, 4, KR_WC_SEND, 0);
	expect_wc(&A.scq, 5, KR_WC_FETCH_ADD, 8);
	expect_wc(&B.rcq, 0x77, KR_WC_RECV, 5000);

	CHECK(memcmp(b, a, BIG) == 0);
	CHECK(memcmp(a + (4u << 20), b + (4u << 20), BIG + MID) == 0);
	CHECK(memcmp(b + BIG, a + BIG, 10000) == 0);
	CHECK(memcmp(b + BIG + 0x10000, a + BIG + 0x10000, 1000) == 0);
	CHECK(memcmp(b + BIG + 0x11000, a + BIG + 0x10000 + 1000, 1500) == 0);
	CHECK(memcmp(b + BIG + 0x12000, a + BIG + 0x10000 + 2500, 2500) == 0);
	CHECK_EQ(b[BIG + 0x12000 + 2500], 0);
	memcpy(&v, a + BIG + 0x18000, 8);
	CHECK_EQ(v, 40);
	memcpy(&v, b + (7u << 20) + MID, 8);
	CHECK_EQ(v, 42);

	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_large");
}
