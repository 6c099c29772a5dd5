/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Traffic for test_sim_tshark.sh: two UDP hosts on the loopback,
 * "sim:ta@127.0.0.1:<port>" and "sim:tb@127.0.0.2:<port>", and one of each
 * operation from A to B, one at a time (each waits for its completion, so the
 * capture holds request, answer, request, answer...):
 *   RC RDMA WRITE, RC RDMA READ, RC SEND, RC FETCH_ADD, RC COMPARE_SWAP,
 *   DC SEND, DC RDMA WRITE.
 * It writes what must be on the wire, packet by packet, as JSON (argv[2]):
 * opcode and its Wireshark name, addresses, destination QP, PSN, AckReq, the
 * RETH/AtomicETH/AETH/AtomicAckETH/DETH/RDETH fields and the payload. The
 * checker (sim_tshark_check.py) compares tshark's decoding with it.
 *
 *   sim_tshark_gen <port> <expect.json>     exit 0, 1 on failure
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <krcore/krcore.h>

#include "kr_test.h"
#include "sim_mp.h"

#define MEM_LEN (64u << 10)
#define TMO_MS	10000
#define FX_PSN	0x123456u /* kr_fx_conn_default's PSNs */
#define OP_ACK	0x11u
#define DC_KEY	0x0123456789abcdefull

static FILE *out;
static int nout;

static void hex(const uint8_t *p, uint32_t n)
{
	fputc('"', out);
	for (uint32_t i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
	fputc('"', out);
}

/* One expected packet; fields with value ~0 are not printed (absent). */
struct exp {
	const char *name; /* Wireshark's Info column opens with it */
	uint32_t opcode;
	const char *src, *dst;
	uint32_t dqp, psn, ackreq;
	uint64_t va, rkey, len;		/* RETH, or AtomicETH va/rkey (len ~0) */
	uint64_t swap, cmp;		/* AtomicETH */
	uint64_t syndrome, msn;		/* AETH */
	uint64_t orig;			/* AtomicAckETH */
	uint64_t srcqp, eecnxt, dc_key; /* DC: DETH source QP, RDETH, BTH extension */
	const uint8_t *payload;
	uint32_t plen;
};

#define NONE UINT64_MAX

static void emit(const struct exp *e)
{
	fprintf(out,
		"%s{\"name\": \"%s\", \"opcode\": %u, \"src\": \"%s\", \"dst\": \"%s\", "
		"\"dqp\": %u, \"psn\": %u, \"ackreq\": %u",
		nout++ ? ",\n " : "[", e->name, e->opcode, e->src, e->dst, e->dqp, e->psn,
		e->ackreq);
#define F(k)                                                                                       \
	if (e->k != NONE)                                                                          \
	fprintf(out, ", \"" #k "\": %" PRIu64, e->k)
	F(va);
	F(rkey);
	F(len);
	F(swap);
	F(cmp);
	F(syndrome);
	F(msn);
	F(orig);
	F(srcqp);
	F(eecnxt);
	F(dc_key);
#undef F
	if (e->payload) {
		fprintf(out, ", \"payload\": ");
		hex(e->payload, e->plen);
	}
	fprintf(out, "}");
}

static struct exp ex(const char *name, uint32_t opcode, int a_to_b, uint32_t dqp, uint32_t psn,
		     uint32_t ackreq)
{
	struct exp e = {.name = name,
			.opcode = opcode,
			.src = a_to_b ? "127.0.0.1" : "127.0.0.2",
			.dst = a_to_b ? "127.0.0.2" : "127.0.0.1",
			.dqp = dqp,
			.psn = psn,
			.ackreq = ackreq,
			.va = NONE,
			.rkey = NONE,
			.len = NONE,
			.swap = NONE,
			.cmp = NONE,
			.syndrome = NONE,
			.msn = NONE,
			.orig = NONE,
			.srcqp = NONE,
			.eecnxt = NONE,
			.dc_key = NONE};
	return e;
}

static void run(struct kr_fx_host *h, struct kr_devx_qp *qp, struct kr_devx_wr *wr)
{
	int st = kr_fx_post_wait(h, qp, wr, TMO_MS);

	if (st != KR_WC_SUCCESS)
		KR_FAIL("wr %llu: %d (%s)", (unsigned long long)wr->wr_id, st,
			st > 0 ? kr_strerror(st) : strerror(-st));
}

int main(int argc, char **argv)
{
	static const char wtext[] = "krcore tshark check: RC WRITE..";		/* 32 with NUL */
	static const char stext[] = "krcore tshark check: RC SEND payload...."; /* 40 + NUL */
	static const char dtext[] = "krcore tshark check: DC SEND payload, 48 bytes!!";
	static const char dwtext[] = "krcore DC WRITE payload!";
	struct kr_fx_host a, b;
	struct kr_devx_qp qa, qb, dci;
	struct kr_devx_srq srq;
	struct kr_devx_dct dct;
	struct kr_devx_wc wc;
	uint8_t *am, *bm, rdata[32];
	char dev[64];
	uint64_t bva;
	uint32_t psn = FX_PSN, dpsn = FX_PSN;
	unsigned port;
	struct exp e;

	if (argc != 3 || sscanf(argv[1], "%u", &port) != 1 || !port || port > 65535)
		KR_FAIL("usage: %s <port> <expect.json>", argv[0]);
	out = fopen(argv[2], "w");
	CHECK(out);
	snprintf(dev, sizeof(dev), "sim:ta@127.0.0.1:%u", port);
	CHECK_OK(kr_fx_host_open(&a, dev, MEM_LEN));
	snprintf(dev, sizeof(dev), "sim:tb@127.0.0.2:%u", port);
	CHECK_OK(kr_fx_host_open(&b, dev, MEM_LEN));
	CHECK_OK(kr_fx_rc_pair(&a, &qa, &b, &qb, NULL));
	CHECK_OK(kr_fx_dci_create(&a, &dci, NULL));
	CHECK_OK(kr_fx_dct_create(&b, &srq, &dct, DC_KEY));
	am = a.mem;
	bm = b.mem;
	bva = (uint64_t)(uintptr_t)bm;
	for (uint32_t k = 0; k < sizeof(rdata); k++)
		rdata[k] = bm[0x200 + k] = (uint8_t)(0xa0 + k);
	uint64_t counter = 0x1000;
	memcpy(bm + 0x400, &counter, 8);

	/* 1. RC WRITE */
	memcpy(am, wtext, 32);
	{
		struct kr_devx_sge sge = kr_fx_sge(&a, 0, 32);
		struct kr_devx_wr wr = {.wr_id = 1,
					.opcode = KR_WR_RDMA_WRITE,
					.sge = &sge,
					.num_sge = 1,
					.remote_addr = bva + 0x100,
					.rkey = b.mr.rkey};

		run(&a, &qa, &wr);
		CHECK(!memcmp(bm + 0x100, wtext, 32));
		e = ex("RC RDMA Write Only", 0x0a, 1, qb.qpn, psn, 1);
		e.va = bva + 0x100;
		e.rkey = b.mr.rkey;
		e.len = 32;
		e.payload = (const uint8_t *)wtext;
		e.plen = 32;
		emit(&e);
		e = ex("RC Acknowledge", OP_ACK, 0, qa.qpn, psn++, 0);
		e.syndrome = 0x1f;
		e.msn = 1;
		emit(&e);
	}
	/* 2. RC READ */
	{
		struct kr_devx_sge sge = kr_fx_sge(&a, 0x300, 32);
		struct kr_devx_wr wr = {.wr_id = 2,
					.opcode = KR_WR_RDMA_READ,
					.sge = &sge,
					.num_sge = 1,
					.remote_addr = bva + 0x200,
					.rkey = b.mr.rkey};

		run(&a, &qa, &wr);
		CHECK(!memcmp(am + 0x300, rdata, 32));
		e = ex("RC RDMA Read Request", 0x0c, 1, qb.qpn, psn, 1);
		e.va = bva + 0x200;
		e.rkey = b.mr.rkey;
		e.len = 32;
		emit(&e);
		e = ex("RC RDMA Read Response Only", 0x10, 0, qa.qpn, psn++, 0);
		e.syndrome = 0x1f;
		e.msn = 2;
		e.payload = rdata;
		e.plen = 32;
		emit(&e);
	}
	/* 3. RC SEND */
	{
		struct kr_devx_sge rsge = kr_fx_sge(&b, 0x800, 256);
		struct kr_devx_sge sge = kr_fx_sge(&a, 0x600, 40);
		struct kr_devx_wr wr = {
		    .wr_id = 3, .opcode = KR_WR_SEND, .sge = &sge, .num_sge = 1};

		CHECK_OK(kr_devx_qp_post_recv(&qb, &rsge, 1, 33));
		memcpy(am + 0x600, stext, 40);
		run(&a, &qa, &wr);
		CHECK_OK(kr_fx_poll_one(&b.rcq, &wc, TMO_MS));
		CHECK_EQ(wc.status, KR_WC_SUCCESS);
		CHECK_EQ(wc.byte_len, 40);
		CHECK(!memcmp(bm + 0x800, stext, 40));
		e = ex("RC Send Only", 0x04, 1, qb.qpn, psn, 1);
		e.payload = (const uint8_t *)stext;
		e.plen = 40;
		emit(&e);
		e = ex("RC Acknowledge", OP_ACK, 0, qa.qpn, psn++, 0);
		e.syndrome = 0x1f;
		e.msn = 3;
		emit(&e);
	}
	/* 4. RC FETCH_ADD, 5. RC COMPARE_SWAP */
	{
		struct kr_devx_sge sge = kr_fx_sge(&a, 0x700, 8);
		struct kr_devx_wr fa = {.wr_id = 4,
					.opcode = KR_WR_ATOMIC_FA,
					.sge = &sge,
					.num_sge = 1,
					.remote_addr = bva + 0x400,
					.rkey = b.mr.rkey,
					.compare_add = 0x1234};
		struct kr_devx_wr cs = {.wr_id = 5,
					.opcode = KR_WR_ATOMIC_CS,
					.sge = &sge,
					.num_sge = 1,
					.remote_addr = bva + 0x400,
					.rkey = b.mr.rkey,
					.compare_add = 0x2234,
					.swap = 0xabcdef};
		uint64_t v;

		run(&a, &qa, &fa);
		memcpy(&v, am + 0x700, 8);
		CHECK_EQ(v, 0x1000);
		e = ex("RC Fetch Add", 0x14, 1, qb.qpn, psn, 1);
		e.va = bva + 0x400;
		e.rkey = b.mr.rkey;
		e.swap = 0x1234;
		e.cmp = 0;
		emit(&e);
		e = ex("RC Atomic Acknowledge", 0x12, 0, qa.qpn, psn++, 0);
		e.syndrome = 0x1f;
		e.msn = 4;
		e.orig = 0x1000;
		emit(&e);

		run(&a, &qa, &cs);
		memcpy(&v, am + 0x700, 8);
		CHECK_EQ(v, 0x2234);
		memcpy(&v, bm + 0x400, 8);
		CHECK_EQ(v, 0xabcdef);
		e = ex("RC Compare Swap", 0x13, 1, qb.qpn, psn, 1);
		e.va = bva + 0x400;
		e.rkey = b.mr.rkey;
		e.swap = 0xabcdef;
		e.cmp = 0x2234;
		emit(&e);
		e = ex("RC Atomic Acknowledge", 0x12, 0, qa.qpn, psn++, 0);
		e.syndrome = 0x1f;
		e.msn = 5;
		e.orig = 0x2234;
		emit(&e);
	}
	/* 6. DC SEND, 7. DC WRITE (one DC connection: both are one DCI stream) */
	{
		struct kr_devx_sge rsge = kr_fx_sge(&b, 0x900, 256);
		struct kr_devx_sge sge = kr_fx_sge(&a, 0xa00, 48);
		struct kr_devx_sge wsge = kr_fx_sge(&a, 0xb00, 24);
		struct kr_devx_dc_av av;
		struct kr_devx_wr wr = {
		    .wr_id = 6, .opcode = KR_WR_SEND, .sge = &sge, .num_sge = 1, .av = &av};
		struct kr_devx_wr ww = {.wr_id = 7,
					.opcode = KR_WR_RDMA_WRITE,
					.sge = &wsge,
					.num_sge = 1,
					.av = &av,
					.remote_addr = bva + 0xc00,
					.rkey = b.mr.rkey};

		kr_fx_dc_av(&a, &b, &dct, &av);
		CHECK_OK(kr_devx_srq_post_recv(&srq, &rsge, 1, 66));
		memcpy(am + 0xa00, dtext, 48);
		memcpy(am + 0xb00, dwtext, 24);
		wr.flags = KR_WR_SIGNALED;
		ww.flags = KR_WR_SIGNALED;
		CHECK_OK(kr_devx_qp_post_send(&dci, &wr));
		CHECK_OK(kr_devx_qp_post_send(&dci, &ww));
		kr_devx_qp_ring(&dci);
		CHECK_OK(kr_fx_poll_one(&a.scq, &wc, TMO_MS));
		CHECK_EQ(wc.status, KR_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, 6);
		CHECK_OK(kr_fx_poll_one(&a.scq, &wc, TMO_MS));
		CHECK_EQ(wc.status, KR_WC_SUCCESS);
		CHECK_EQ(wc.wr_id, 7);
		CHECK_OK(kr_fx_poll_one(&b.rcq, &wc, TMO_MS));
		CHECK_EQ(wc.status, KR_WC_SUCCESS);
		CHECK_EQ(wc.byte_len, 48);
		CHECK_EQ(wc.src_qpn, dci.qpn);
		CHECK(!memcmp(bm + 0x900, dtext, 48));
		CHECK(!memcmp(bm + 0xc00, dwtext, 24));
		/* the two requests may go out before the first ACK: not one by one */
		e = ex("DC Send Only", 0x44, 1, dct.dctn, dpsn++, 1);
		e.srcqp = dci.qpn;
		e.dc_key = DC_KEY;
		e.payload = (const uint8_t *)dtext;
		e.plen = 48;
		emit(&e);
		e = ex("DC RDMA Write Only", 0x4a, 1, dct.dctn, dpsn++, 1);
		e.srcqp = dci.qpn;
		e.dc_key = DC_KEY;
		e.va = bva + 0xc00;
		e.rkey = b.mr.rkey;
		e.len = 24;
		e.payload = (const uint8_t *)dwtext;
		e.plen = 24;
		emit(&e);
		e = ex("RC Acknowledge", OP_ACK, 0, dci.qpn, FX_PSN, 0);
		e.syndrome = 0x1f;
		e.msn = 1;
		emit(&e);
		e = ex("RC Acknowledge", OP_ACK, 0, dci.qpn, FX_PSN + 1, 0);
		e.syndrome = 0x1f;
		e.msn = 2;
		emit(&e);
	}
	fprintf(out, "]\n");
	CHECK_OK(fclose(out) ? -errno : 0);

	kr_fx_qp_destroy(&dci);
	kr_fx_dct_destroy(&dct, &srq);
	kr_fx_qp_destroy(&qa);
	kr_fx_qp_destroy(&qb);
	kr_fx_host_close(&b);
	kr_fx_host_close(&a);
	return 0;
}
