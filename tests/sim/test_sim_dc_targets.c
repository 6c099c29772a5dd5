/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One DCI, several DC targets: WQEs for two DCTs (one on the other host, one
 * on the DCI's own host) interleaved behind a single doorbell all complete,
 * in order, with their data in place; the engine switches targets only when
 * the previous target's requests are done. A wrong access key is dropped by
 * the target and counted (dctc.dc_access_key_violation_count); the DCI runs
 * out of retries, and after 2RST..RTS it reaches both targets again. Two DCIs
 * talking to one DCT at once keep separate responder contexts.
 */
#include <stdint.h>
#include <string.h>

#include <krcore/krcore.h>

#include "devx_fixture.h"
#include "kr_test.h"
#include "sim/sim.h"

#define MEM_LEN (256u << 10)
#define TMO_MS	5000
#define KEY1	0x1111222233334444ull
#define KEY2	0x5555666677778888ull

static struct kr_fx_host A, B;

static void fill(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 7 + i * 11 + (i >> 8));
}

static uint32_t key_violations(struct kr_fx_host *h, const struct kr_devx_dct *dct)
{
	return sim_dev_of(h->ctx)->sh->dct[dct->dctn - SIM_DCTN_BASE].key_violations;
}

/* WRITEs alternating between the two targets, then a SEND to each, one doorbell. */
static void interleaved(struct kr_devx_qp *dci, const struct kr_devx_dc_av *av1,
			const struct kr_devx_dc_av *av2, struct kr_devx_dct *dct1,
			struct kr_devx_dct *dct2, struct kr_devx_srq *srq1,
			struct kr_devx_srq *srq2, unsigned int seed)
{
	struct kr_devx_sge sge[8], ssg1 = kr_fx_sge(&A, 0x30000, 300),
				   ssg2 = kr_fx_sge(&A, 0x31000, 2000);
	struct kr_devx_sge r1 = kr_fx_sge(&B, 0x30000, 4096), r2 = kr_fx_sge(&A, 0x38000, 4096);
	struct kr_devx_wr wr;
	struct kr_devx_wc wc;
	int i;

	CHECK_OK(kr_devx_srq_post_recv(srq1, &r1, 1, 0xa1));
	CHECK_OK(kr_devx_srq_post_recv(srq2, &r2, 1, 0xa2));
	for (i = 0; i < 8; i++) {
		bool to_b = (i & 1) == 0;
		struct kr_fx_host *t = to_b ? &B : &A;
		size_t off = 0x10000 + (size_t)i * 0x1000;

		sge[i] = kr_fx_sge(&A, (size_t)i * 0x1000, 1500 + i);
		fill((uint8_t *)A.mem + (size_t)i * 0x1000, 1500 + i, seed + i);
		memset((uint8_t *)t->mem + off, 0, 0x1000);
		wr = (struct kr_devx_wr){.wr_id = 0x100 + i,
					 .opcode = KR_WR_RDMA_WRITE,
					 .flags = (i % 3) ? KR_WR_SIGNALED : 0,
					 .sge = &sge[i],
					 .num_sge = 1,
					 .remote_addr = (uintptr_t)t->mem + off,
					 .rkey = t->mr.rkey,
					 .av = to_b ? av1 : av2};
		CHECK_OK(kr_devx_qp_post_send(dci, &wr));
	}
	fill((uint8_t *)A.mem + 0x30000, 300, seed + 20);
	fill((uint8_t *)A.mem + 0x31000, 2000, seed + 21);
	wr = (struct kr_devx_wr){.wr_id = 0x1a1,
				 .opcode = KR_WR_SEND,
				 .flags = KR_WR_SIGNALED,
				 .sge = &ssg1,
				 .num_sge = 1,
				 .av = av1};
	CHECK_OK(kr_devx_qp_post_send(dci, &wr));
	wr = (struct kr_devx_wr){.wr_id = 0x1a2,
				 .opcode = KR_WR_SEND_IMM,
				 .flags = KR_WR_SIGNALED,
				 .imm = 0xfeed,
				 .sge = &ssg2,
				 .num_sge = 1,
				 .av = av2};
	CHECK_OK(kr_devx_qp_post_send(dci, &wr));
	kr_devx_qp_ring(dci);

	for (i = 0; i < 8; i++)
		if (i % 3)
			kr_fx_expect_wc(&A.scq, 0x100 + i, KR_WC_SUCCESS, dci->qpn, NULL);
	kr_fx_expect_wc(&A.scq, 0x1a1, KR_WC_SUCCESS, dci->qpn, NULL);
	kr_fx_expect_wc(&A.scq, 0x1a2, KR_WC_SUCCESS, dci->qpn, NULL);
	for (i = 0; i < 8; i++) {
		struct kr_fx_host *t = (i & 1) == 0 ? &B : &A;
		size_t off = 0x10000 + (size_t)i * 0x1000;

		CHECK(memcmp((uint8_t *)t->mem + off, (uint8_t *)A.mem + (size_t)i * 0x1000,
			     1500 + i) == 0);
		CHECK_EQ(((uint8_t *)t->mem)[off + 1500 + i], 0);
	}
	kr_fx_expect_wc(&B.rcq, 0xa1, KR_WC_SUCCESS, dct1->dctn, &wc);
	CHECK_EQ(wc.byte_len, 300);
	CHECK_EQ(wc.src_qpn, dci->qpn);
	CHECK(memcmp((uint8_t *)B.mem + 0x30000, (uint8_t *)A.mem + 0x30000, 300) == 0);
	kr_fx_expect_wc(&A.rcq, 0xa2, KR_WC_SUCCESS, dct2->dctn, &wc);
	CHECK_EQ(wc.byte_len, 2000);
	CHECK(wc.has_imm);
	CHECK_EQ(wc.imm, 0xfeed);
	CHECK(memcmp((uint8_t *)A.mem + 0x38000, (uint8_t *)A.mem + 0x31000, 2000) == 0);
}

/* Two DCIs read from one DCT at once, both get their own bytes. */
static void two_dcis(struct kr_devx_qp *d1, struct kr_devx_qp *d2, const struct kr_devx_dc_av *av1)
{
	struct kr_devx_sge s1 = kr_fx_sge(&A, 0x20000, 5000), s2 = kr_fx_sge(&A, 0x28000, 3000);
	struct kr_devx_wr wr1 = {.wr_id = 0x301,
				 .opcode = KR_WR_RDMA_READ,
				 .flags = KR_WR_SIGNALED,
				 .sge = &s1,
				 .num_sge = 1,
				 .remote_addr = (uintptr_t)B.mem + 0x20000,
				 .rkey = B.mr.rkey,
				 .av = av1};
	struct kr_devx_wr wr2 = wr1;
	struct kr_devx_wc wc;
	int got1 = 0, got2 = 0, i;

	wr2.wr_id = 0x302;
	wr2.sge = &s2;
	wr2.remote_addr = (uintptr_t)B.mem + 0x24000;
	fill((uint8_t *)B.mem + 0x20000, 0x8000, 77);
	memset((uint8_t *)A.mem + 0x20000, 0, 0x10000);
	CHECK_OK(kr_devx_qp_post_send(d1, &wr1));
	CHECK_OK(kr_devx_qp_post_send(d2, &wr2));
	kr_devx_qp_ring(d1);
	kr_devx_qp_ring(d2);
	for (i = 0; i < 2; i++) {
		CHECK_OK(kr_fx_poll_one(&A.scq, &wc, TMO_MS));
		CHECK_EQ(wc.status, KR_WC_SUCCESS);
		got1 += wc.wr_id == 0x301 && wc.qpn == d1->qpn && wc.byte_len == 5000;
		got2 += wc.wr_id == 0x302 && wc.qpn == d2->qpn && wc.byte_len == 3000;
	}
	CHECK_EQ(got1, 1);
	CHECK_EQ(got2, 1);
	CHECK(memcmp((uint8_t *)A.mem + 0x20000, (uint8_t *)B.mem + 0x20000, 5000) == 0);
	CHECK(memcmp((uint8_t *)A.mem + 0x28000, (uint8_t *)B.mem + 0x24000, 3000) == 0);
}

int main(void)
{
	struct kr_devx_qp dci, dci2;
	struct kr_devx_srq srq1, srq2;
	struct kr_devx_dct dct1, dct2;
	struct kr_devx_dc_av av1, av2, bad;
	struct kr_devx_qp_conn c;
	struct kr_devx_sge sge;
	struct kr_devx_wr wr;
	uint32_t before;
	int i;

	CHECK_OK(kr_fx_host_open(&A, "sim:dct_a", MEM_LEN));
	CHECK_OK(kr_fx_host_open(&B, "sim:dct_b", MEM_LEN));
	CHECK_OK(kr_fx_dct_create(&B, &srq1, &dct1, KEY1));
	CHECK_OK(kr_fx_dct_create(&A, &srq2, &dct2, KEY2));
	CHECK_OK(kr_fx_dci_create(&A, &dci, NULL));
	CHECK_OK(kr_fx_dci_create(&A, &dci2, NULL));
	kr_fx_dc_av(&A, &B, &dct1, &av1);
	kr_fx_dc_av(&A, &A, &dct2, &av2);

	interleaved(&dci, &av1, &av2, &dct1, &dct2, &srq1, &srq2, 1);
	two_dcis(&dci, &dci2, &av1);

	/* wrong key: dropped and counted, the DCI gives up after its retries */
	kr_fx_conn_default(&c);
	c.ack_timeout = 8; /* ~1 ms: fail fast */
	c.retry_count = 2;
	CHECK_OK(kr_devx_qp_modify(&dci, KR_QP_2RST, NULL));
	CHECK_OK(kr_devx_qp_connect(&dci, &c));
	bad = av1;
	bad.dc_key ^= 0x10;
	before = key_violations(&B, &dct1);
	sge = kr_fx_sge(&A, 0, 64);
	memset((uint8_t *)B.mem + 0x3f000, 0x3c, 64);
	wr = (struct kr_devx_wr){.wr_id = 0x401,
				 .opcode = KR_WR_RDMA_WRITE,
				 .sge = &sge,
				 .num_sge = 1,
				 .remote_addr = (uintptr_t)B.mem + 0x3f000,
				 .rkey = B.mr.rkey,
				 .av = &bad};
	CHECK_OK(kr_devx_qp_post_send(&dci, &wr));
	kr_devx_qp_ring(&dci);
	kr_fx_expect_wc(&A.scq, 0x401, KR_WC_RETRY_EXC_ERR, dci.qpn, NULL);
	/* the first try and each retry were dropped; the last may still be on its way */
	for (i = 0; i < 1000 && key_violations(&B, &dct1) - before < 1u + c.retry_count; i++)
		kr_fx_poll_none(&B.rcq, 1);
	CHECK_EQ(key_violations(&B, &dct1) - before, 1 + c.retry_count);
	CHECK_EQ(((uint8_t *)B.mem)[0x3f000], 0x3c);

	kr_fx_conn_default(&c);
	CHECK_OK(kr_devx_qp_modify(&dci, KR_QP_2RST, NULL));
	CHECK_OK(kr_devx_qp_connect(&dci, &c));
	interleaved(&dci, &av1, &av2, &dct1, &dct2, &srq1, &srq2, 2);

	kr_fx_qp_destroy(&dci2);
	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct2, &srq2);
	kr_fx_dct_destroy(&dct1, &srq1);
	kr_fx_host_close(&B);
	kr_fx_host_close(&A);
	KR_PASS("sim_dc_targets");
}
