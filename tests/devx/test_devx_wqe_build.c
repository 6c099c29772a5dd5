/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Send and receive WQE bytes, checked field by field at their PRM byte
 * offsets, on a hand-built QP over a malloc'd ring (no device): every opcode
 * on RC and DCI (one table, op_cases), inline padding, ring wrap, an inline
 * payload read back from the ring, queue full, every malformed request,
 * doorbell batching; the vQP's post (kr_devx_qp_post_checked, the AV
 * encoded once) writing the same WQE as the checked one.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "kr_test.h"

#define QPN	  0x123456u
#define RING_FILL 0xa5

/* ---- a fake device: only the doorbell op ---- */

static struct {
	int count;
	uint64_t last;
	struct kr_devx_uar *uar;
} db;

static void fake_doorbell(struct kr_devx_uar *uar, uint64_t val)
{
	db.count++;
	db.last = val;
	db.uar = uar;
}

static const struct kr_devx_ops fake_ops = {.doorbell = fake_doorbell};

struct fake_qp {
	struct kr_devx_ctx ctx;
	struct kr_devx_uar uar;
	struct kr_devx_qp qp;
	uint32_t dbrec[16];
};

static void fake_qp_init(struct fake_qp *f, enum kr_devx_qp_type type, uint32_t wqebbs)
{
	memset(f, 0, sizeof(*f));
	f->ctx.ops = &fake_ops;
	f->ctx.caps.max_wqe_sz_sq = 1024;
	f->ctx.caps.max_wqe_sz_sq_dc = 1024;
	f->uar.ctx = &f->ctx;
	f->qp.ctx = &f->ctx;
	f->qp.type = type;
	f->qp.qpn = QPN;
	f->qp.uar = &f->uar;
	f->qp.dbrec = f->dbrec;
	f->qp.sq_wqebb_cnt = wqebbs;
	f->qp.sq_buf = aligned_alloc(64, (size_t)wqebbs * 64);
	f->qp.sq_wrid = calloc(wqebbs, sizeof(uint64_t));
	f->qp.sq_wqe_next = calloc(wqebbs, sizeof(uint32_t));
	CHECK(f->qp.sq_buf && f->qp.sq_wrid && f->qp.sq_wqe_next);
	memset(f->qp.sq_buf, RING_FILL, (size_t)wqebbs * 64);
}

static void fake_qp_fini(struct fake_qp *f)
{
	free(f->qp.sq_buf);
	free(f->qp.sq_wrid);
	free(f->qp.sq_wqe_next);
	free(f->qp.rq_buf);
	free(f->qp.rq_wrid);
}

/* Set the ring position to pi (nothing outstanding). */
static void fake_qp_at(struct fake_qp *f, uint32_t pi)
{
	f->qp.sq_pi = f->qp.sq_ci = f->qp.sq_db_pi = pi;
}

/* ---- byte readers at PRM offsets (big-endian fields) ---- */

static uint32_t be32_at(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t be64_at(const uint8_t *p)
{
	return (uint64_t)be32_at(p) << 32 | be32_at(p + 4);
}

static uint8_t *wqebb(struct fake_qp *f, uint32_t idx)
{
	return f->qp.sq_buf + (size_t)(idx & (f->qp.sq_wqebb_cnt - 1)) * 64;
}

/* ctrl: opmod_idx_opcode, qpn_ds, signature, stream id, fm_ce_se, imm */
static void check_ctrl(const uint8_t *c, uint32_t pi, uint8_t opcode, uint32_t ds, uint8_t fm,
		       uint32_t imm)
{
	CHECK_EQ(be32_at(c), ((pi & 0xffff) << 8) | opcode);
	CHECK_EQ(be32_at(c + 4), (QPN << 8) | ds);
	CHECK_EQ(c[8], 0);
	CHECK_EQ(be16_at(c + 9), 0);
	CHECK_EQ(c[11], fm);
	CHECK_EQ(be32_at(c + 12), imm);
}

static void check_raddr(const uint8_t *s, uint64_t raddr, uint32_t rkey)
{
	CHECK_EQ(be64_at(s), raddr);
	CHECK_EQ(be32_at(s + 8), rkey);
	CHECK_EQ(be32_at(s + 12), 0);
}

static void check_data(const uint8_t *s, const struct kr_devx_sge *sge)
{
	CHECK_EQ(be32_at(s), sge->length);
	CHECK_EQ(be32_at(s + 4), sge->lkey);
	CHECK_EQ(be64_at(s + 8), sge->addr);
}

static const struct kr_devx_dc_av test_av = {
    .dctn = 0x8abcde,
    .dc_key = 0x1122334455667788ull,
    .rgid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 1, 2, 3},
    .rmac = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55},
    .hop_limit = 64,
    .tclass = 0x28,
    .flow_label = 0xabcdef, /* only the low 20 bits go on the wire */
    .sgid_index = 3,
    .rlid = 0xc001, /* RoCE v2: the UDP source port */
};

/* The 48-byte AV right after ctrl. */
static void check_av(const uint8_t *a, const struct kr_devx_dc_av *av)
{
	CHECK_EQ(be64_at(a), av->dc_key);
	CHECK_EQ(be32_at(a + 8), av->dctn | 0x80000000u);
	CHECK_EQ(a[12], 0);
	CHECK_EQ(a[13], 0);
	CHECK_EQ(be16_at(a + 14), av->rlid);
	CHECK_EQ(be32_at(a + 16), 0);
	CHECK(memcmp(a + 20, av->rmac, 6) == 0);
	CHECK_EQ(a[26], av->tclass);
	CHECK_EQ(a[27], av->hop_limit);
	CHECK_EQ(be32_at(a + 28), ((uint32_t)av->grh << 30) | ((uint32_t)av->sgid_index << 20) |
				      (av->flow_label & 0xfffff));
	CHECK(memcmp(a + 32, av->rgid, 16) == 0);
}

static void check_posted(struct fake_qp *f, uint32_t pi, uint32_t wqebbs, uint64_t wr_id)
{
	uint32_t idx = pi & (f->qp.sq_wqebb_cnt - 1);

	CHECK_EQ(f->qp.sq_pi, pi + wqebbs);
	CHECK_EQ(f->qp.sq_wrid[idx], wr_id);
	CHECK_EQ(f->qp.sq_wqe_next[idx], pi + wqebbs);
	CHECK(f->qp.sq_last_ctrl == wqebb(f, pi));
}

/* ---- every opcode, on RC and on a DCI: one table ---- */

static const struct kr_devx_sge sg2[2] = {{0x1000200030004000ull, 100, 0x1111},
					  {0x5000600070008000ull, 28, 0x2222}};
static const struct kr_devx_sge sg8 = {0xdead0008ull, 8, 0x3333};
static const struct kr_devx_sge sg64 = {0x4000, 64, 0x42};

/*
 * One request and what its WQE holds, in order: ctrl (opcode, ds, fm_ce_se,
 * immediate), the AV on a DCI, a remote address segment, an atomic segment
 * (swap then compare, big-endian), then one data segment per SGE. Posted in
 * table order on one QP of the type: each WQE starts where the last ended.
 */
struct op_case {
	const char *what;
	enum kr_devx_qp_type type;
	struct kr_devx_wr wr;
	uint8_t opcode;
	uint32_t ds;
	uint8_t fm;
	uint32_t imm;
	uint32_t wqebbs;
	bool raddr;
	bool atomic;
	uint64_t swap, cmp; /* the atomic segment's two words */
};

#define SIG  KR_WR_SIGNALED
#define CQU  MLX5_WQE_CTRL_CQ_UPDATE
#define RC   KR_DEVX_QP_RC
#define DCI  KR_DEVX_QP_DCI
#define AV   .av = &test_av
#define SGES(a, n) .sge = (a), .num_sge = (n)

static const struct op_case op_cases[] = {
    /* RC: ctrl | raddr | data...: 1 WQEBB each */
    {"RC WRITE, two SGEs, signaled", RC,
     {.wr_id = 11, .opcode = KR_WR_RDMA_WRITE, .flags = SIG, SGES(sg2, 2),
      .remote_addr = 0xfeedface00001000ull, .rkey = 0xabcdef01},
     MLX5_OPCODE_RDMA_WRITE, 4, CQU, 0, 1, true, false, 0, 0},
    {"RC WRITE with immediate, unsignaled", RC,
     {.wr_id = 12, .opcode = KR_WR_RDMA_WRITE_IMM, .imm = 0x12345678, SGES(sg2, 1),
      .remote_addr = 0xfeedface00001000ull, .rkey = 0xabcdef01},
     MLX5_OPCODE_RDMA_WRITE_IMM, 3, 0, 0x12345678, 1, true, false, 0, 0},
    {"RC SEND: the immediate stays 0 even when wr.imm is set", RC,
     {.wr_id = 13, .opcode = KR_WR_SEND, .flags = SIG, .imm = 0x55, SGES(&sg2[1], 1)},
     MLX5_OPCODE_SEND, 2, CQU, 0, 1, false, false, 0, 0},
    {"RC SEND with immediate and no data: ctrl only", RC,
     {.wr_id = 14, .opcode = KR_WR_SEND_IMM, .imm = 0xcafebabe},
     MLX5_OPCODE_SEND_IMM, 1, 0, 0xcafebabe, 1, false, false, 0, 0},
    {"RC WRITE of 0 bytes: ctrl | raddr", RC,
     {.wr_id = 15, .opcode = KR_WR_RDMA_WRITE, .remote_addr = 0x40, .rkey = 9},
     MLX5_OPCODE_RDMA_WRITE, 2, 0, 0, 1, true, false, 0, 0},
    {"RC READ, signaled and fenced", RC,
     {.wr_id = 16, .opcode = KR_WR_RDMA_READ, .flags = SIG | KR_WR_FENCE, SGES(sg2, 1),
      .remote_addr = 0x7000, .rkey = 0x77},
     MLX5_OPCODE_RDMA_READ, 3, CQU | MLX5_WQE_CTRL_FENCE, 0, 1, true, false, 0, 0},
    {"RC CAS: raddr | atomic (swap, compare) | one 8-byte data segment", RC,
     {.wr_id = 17, .opcode = KR_WR_ATOMIC_CS, .flags = SIG, SGES(&sg8, 1),
      .remote_addr = 0x8008, .rkey = 0x88, .compare_add = 0x0102030405060708ull,
      .swap = 0x1112131415161718ull},
     MLX5_OPCODE_ATOMIC_CS, 4, CQU, 0, 1, true, true, 0x1112131415161718ull,
     0x0102030405060708ull},
    {"RC FAA: the addend in the first word, compare 0", RC,
     {.wr_id = 18, .opcode = KR_WR_ATOMIC_FA, .flags = SIG, SGES(&sg8, 1),
      .remote_addr = 0x8008, .rkey = 0x88, .compare_add = 0x99,
      .swap = 0x1112131415161718ull},
     MLX5_OPCODE_ATOMIC_FA, 4, CQU, 0, 1, true, true, 0x99, 0},
    /* DCI: ctrl | av (3 ds) | ...: 2 WQEBBs past 4 ds */
    {"DCI WRITE", DCI,
     {.wr_id = 31, .opcode = KR_WR_RDMA_WRITE, .flags = SIG, SGES(&sg64, 1),
      .remote_addr = 0xabc0, .rkey = 0x99, AV},
     MLX5_OPCODE_RDMA_WRITE, 6, CQU, 0, 2, true, false, 0, 0},
    {"DCI SEND", DCI,
     {.wr_id = 32, .opcode = KR_WR_SEND, SGES(&sg64, 1), AV},
     MLX5_OPCODE_SEND, 5, 0, 0, 2, false, false, 0, 0},
    {"DCI SEND with immediate and no data: exactly one WQEBB", DCI,
     {.wr_id = 33, .opcode = KR_WR_SEND_IMM, .imm = 0xa1b2c3d4, .flags = SIG, AV},
     MLX5_OPCODE_SEND_IMM, 4, CQU, 0xa1b2c3d4, 1, false, false, 0, 0},
    {"DCI READ", DCI,
     {.wr_id = 34, .opcode = KR_WR_RDMA_READ, .flags = SIG, SGES(&sg64, 1),
      .remote_addr = 0x123400, .rkey = 0x1, AV},
     MLX5_OPCODE_RDMA_READ, 6, CQU, 0, 2, true, false, 0, 0},
    {"DCI CAS", DCI,
     {.wr_id = 35, .opcode = KR_WR_ATOMIC_CS, .flags = SIG, SGES(&sg8, 1),
      .remote_addr = 0x10, .rkey = 0x2, .compare_add = 5, .swap = 6, AV},
     MLX5_OPCODE_ATOMIC_CS, 7, CQU, 0, 2, true, true, 6, 5},
    {"DCI FAA", DCI,
     {.wr_id = 36, .opcode = KR_WR_ATOMIC_FA, .flags = SIG, SGES(&sg8, 1),
      .remote_addr = 0x10, .rkey = 0x2, .compare_add = 0x100000000ull, .swap = 6, AV},
     MLX5_OPCODE_ATOMIC_FA, 7, CQU, 0, 2, true, true, 0x100000000ull, 0},
};

#undef SIG
#undef CQU
#undef RC
#undef DCI
#undef AV
#undef SGES

/* Post every case of type on one QP; returns where the next WQE goes. */
static uint32_t run_op_cases(struct fake_qp *f, enum kr_devx_qp_type type)
{
	uint32_t pi = 0;

	for (size_t i = 0; i < sizeof(op_cases) / sizeof(op_cases[0]); i++) {
		const struct op_case *k = &op_cases[i];
		uint32_t off = type == KR_DEVX_QP_DCI ? 64 : 16; /* past ctrl (and AV) */
		uint8_t *w;

		if (k->type != type)
			continue;
		printf("case: %s\n", k->what);
		CHECK_OK(kr_devx_qp_post_send(&f->qp, &k->wr));
		w = wqebb(f, pi);
		check_ctrl(w, pi, k->opcode, k->ds, k->fm, k->imm);
		CHECK_EQ(w[12], k->imm >> 24); /* the immediate goes out big-endian */
		if (type == KR_DEVX_QP_DCI)
			check_av(w + 16, k->wr.av);
		if (k->raddr) {
			check_raddr(w + off, k->wr.remote_addr, k->wr.rkey);
			off += 16;
		}
		if (k->atomic) {
			CHECK_EQ(be64_at(w + off), k->swap);
			CHECK_EQ(be64_at(w + off + 8), k->cmp);
			off += 16;
		}
		for (uint32_t s = 0; s < k->wr.num_sge; s++)
			check_data(w + off + 16 * s, &k->wr.sge[s]);
		check_posted(f, pi, k->wqebbs, k->wr.wr_id);
		pi += k->wqebbs;
	}
	return pi;
}

static void test_rc_opcodes(void)
{
	struct fake_qp f;

	fake_qp_init(&f, KR_DEVX_QP_RC, 64);
	run_op_cases(&f, KR_DEVX_QP_RC);
	CHECK_EQ(db.count, 0); /* nothing rung yet */
	fake_qp_fini(&f);
}

/* ---- inline ---- */

static void test_inline(void)
{
	struct fake_qp f;
	uint8_t a[300], b[64];
	struct kr_devx_sge sg[2];
	struct kr_devx_wr wr;
	uint8_t *w;
	int i;

	for (i = 0; i < (int)sizeof(a); i++)
		a[i] = (uint8_t)(i * 3 + 1);
	for (i = 0; i < (int)sizeof(b); i++)
		b[i] = (uint8_t)(0xf0 - i);
	fake_qp_init(&f, KR_DEVX_QP_RC, 64);

	/* WRITE inline of 13 + 7 bytes: ctrl | raddr | hdr+20 bytes -> 2 ds; ds 4 */
	sg[0] = (struct kr_devx_sge){(uintptr_t)a, 13, 0xdead};
	sg[1] = (struct kr_devx_sge){(uintptr_t)b, 7, 0xbeef};
	wr = (struct kr_devx_wr){.wr_id = 21,
				 .opcode = KR_WR_RDMA_WRITE,
				 .flags = KR_WR_INLINE | KR_WR_SIGNALED,
				 .sge = sg,
				 .num_sge = 2,
				 .remote_addr = 0x1000,
				 .rkey = 5};
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	w = wqebb(&f, 0);
	check_ctrl(w, 0, MLX5_OPCODE_RDMA_WRITE, 4, MLX5_WQE_CTRL_CQ_UPDATE, 0);
	check_raddr(w + 16, 0x1000, 5);
	CHECK_EQ(be32_at(w + 32), 20u | 0x80000000u);
	CHECK(memcmp(w + 36, a, 13) == 0);
	CHECK(memcmp(w + 49, b, 7) == 0);
	check_posted(&f, 0, 1, 21);

	/* SEND inline of 60 bytes: hdr + 60 = 64 -> 4 ds, +ctrl = 5 ds, 2 WQEBBs */
	sg[0] = (struct kr_devx_sge){(uintptr_t)a, 60, 0};
	wr = (struct kr_devx_wr){.wr_id = 22,
				 .opcode = KR_WR_SEND_IMM,
				 .flags = KR_WR_INLINE,
				 .imm = 7,
				 .sge = sg,
				 .num_sge = 1};
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	w = wqebb(&f, 1);
	check_ctrl(w, 1, MLX5_OPCODE_SEND_IMM, 5, 0, 7);
	CHECK_EQ(be32_at(w + 16), 60u | 0x80000000u);
	CHECK(memcmp(w + 20, a, 60) == 0);
	check_posted(&f, 1, 2, 22);

	/* 61 bytes: hdr + 61 = 65 -> 5 ds (padded), 6 ds total */
	sg[0].length = 61;
	wr.wr_id = 23;
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	check_ctrl(wqebb(&f, 3), 3, MLX5_OPCODE_SEND_IMM, 6, 0, 7);
	CHECK(memcmp(wqebb(&f, 3) + 20, a, 61) == 0);
	check_posted(&f, 3, 2, 23);

	/* the limit, KR_DEVX_MAX_INLINE bytes in two pieces: (4 + 256 + 15) / 16 = 17, +1 */
	sg[0] = (struct kr_devx_sge){(uintptr_t)a, KR_DEVX_MAX_INLINE - 10, 0};
	sg[1] = (struct kr_devx_sge){(uintptr_t)b, 10, 0};
	wr = (struct kr_devx_wr){
	    .wr_id = 24, .opcode = KR_WR_SEND, .flags = KR_WR_INLINE, .sge = sg, .num_sge = 2};
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	w = wqebb(&f, 5);
	check_ctrl(w, 5, MLX5_OPCODE_SEND, 18, 0, 0);
	CHECK_EQ(be32_at(w + 16), KR_DEVX_MAX_INLINE | 0x80000000u);
	CHECK(memcmp(w + 20, a, KR_DEVX_MAX_INLINE - 10) == 0);
	CHECK(memcmp(w + 20 + KR_DEVX_MAX_INLINE - 10, b, 10) == 0);
	check_posted(&f, 5, 5, 24);

	/* inline with no data: ctrl only (no empty inline segment) */
	wr = (struct kr_devx_wr){.wr_id = 25, .opcode = KR_WR_SEND, .flags = KR_WR_INLINE};
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	check_ctrl(wqebb(&f, 10), 10, MLX5_OPCODE_SEND, 1, 0, 0);
	check_posted(&f, 10, 1, 25);
	fake_qp_fini(&f);
}

/* ---- DCI: AV after ctrl ---- */

static void test_dci_opcodes(void)
{
	struct fake_qp f;
	struct kr_devx_wr wr;
	uint32_t pi;
	uint8_t *w;

	fake_qp_init(&f, KR_DEVX_QP_DCI, 64);
	pi = run_op_cases(&f, KR_DEVX_QP_DCI);

	/* inline WRITE on a DCI */
	{
		uint8_t pay[40];
		struct kr_devx_sge isg = {(uintptr_t)pay, sizeof(pay), 0};

		memset(pay, 0x3c, sizeof(pay));
		wr = (struct kr_devx_wr){.wr_id = 37,
					 .opcode = KR_WR_RDMA_WRITE,
					 .flags = KR_WR_INLINE,
					 .sge = &isg,
					 .num_sge = 1,
					 .remote_addr = 0x20,
					 .rkey = 3,
					 .av = &test_av};
		CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
		w = wqebb(&f, pi);
		/* 1 + 3 + 1 + (4 + 40 + 15) / 16 = 8 ds */
		check_ctrl(w, pi, MLX5_OPCODE_RDMA_WRITE, 8, 0, 0);
		check_av(w + 16, &test_av);
		check_raddr(w + 64, 0x20, 3);
		CHECK_EQ(be32_at(w + 80), 40u | 0x80000000u);
		CHECK(memcmp(w + 84, pay, 40) == 0);
		check_posted(&f, pi, 2, 37);
	}
	fake_qp_fini(&f);
}

/* ---- wrap at the ring end, WQE index above 16 bits ---- */

static void test_wrap(void)
{
	struct fake_qp f;
	struct kr_devx_sge sg = {0x4000, 64, 0x42};
	uint8_t pay[100];
	struct kr_devx_sge isg = {(uintptr_t)pay, sizeof(pay), 0};
	struct kr_devx_wr wr;
	uint8_t *w;
	int i;

	for (i = 0; i < (int)sizeof(pay); i++)
		pay[i] = (uint8_t)(200 - i);
	fake_qp_init(&f, KR_DEVX_QP_DCI, 8);

	/* a 2-WQEBB DCI WRITE at the last WQEBB: ctrl+av at 7, raddr+data at 0 */
	fake_qp_at(&f, 0x1fff7);
	wr = (struct kr_devx_wr){.wr_id = 41,
				 .opcode = KR_WR_RDMA_WRITE,
				 .flags = KR_WR_SIGNALED,
				 .sge = &sg,
				 .num_sge = 1,
				 .remote_addr = 0xabc0,
				 .rkey = 0x99,
				 .av = &test_av};
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	w = wqebb(&f, 7);
	check_ctrl(w, 0xfff7, MLX5_OPCODE_RDMA_WRITE, 6, MLX5_WQE_CTRL_CQ_UPDATE, 0);
	CHECK_EQ(be32_at(w) >> 8, 0xfff7); /* WQE index is the 16-bit producer counter */
	check_av(w + 16, &test_av);
	check_raddr(wqebb(&f, 0), 0xabc0, 0x99);
	check_data(wqebb(&f, 0) + 16, &sg);
	CHECK_EQ(f.qp.sq_pi, 0x1fff9);
	CHECK_EQ(f.qp.sq_wqe_next[7], 0x1fff9);
	CHECK_EQ(f.qp.sq_wrid[7], 41);
	fake_qp_fini(&f);

	/* RC inline SEND of 100 bytes from the last WQEBB: payload splits at the end */
	fake_qp_init(&f, KR_DEVX_QP_RC, 8);
	fake_qp_at(&f, 7);
	wr = (struct kr_devx_wr){
	    .wr_id = 42, .opcode = KR_WR_SEND, .flags = KR_WR_INLINE, .sge = &isg, .num_sge = 1};
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	w = wqebb(&f, 7);
	check_ctrl(w, 7, MLX5_OPCODE_SEND, 1 + (4 + 100 + 15) / 16, 0, 0);
	CHECK_EQ(be32_at(w + 16), 100u | 0x80000000u);
	CHECK(memcmp(w + 20, pay, 44) == 0);
	CHECK(memcmp(wqebb(&f, 0), pay + 44, 56) == 0);
	CHECK_EQ(wqebb(&f, 0)[56], RING_FILL); /* nothing beyond the payload */
	check_posted(&f, 7, 2, 42);

	/* RC WRITE with 5 SGEs at the last WQEBB: data segs 3, 4 land at the start */
	{
		struct kr_devx_sge s5[5];

		for (i = 0; i < 5; i++)
			s5[i] = (struct kr_devx_sge){0x1000u * (i + 1), 16u + i, 0x10u + i};
		fake_qp_at(&f, 15);
		wr = (struct kr_devx_wr){.wr_id = 43,
					 .opcode = KR_WR_RDMA_WRITE,
					 .sge = s5,
					 .num_sge = 5,
					 .remote_addr = 0x77,
					 .rkey = 0x66};
		CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
		w = wqebb(&f, 7);
		check_ctrl(w, 15, MLX5_OPCODE_RDMA_WRITE, 7, 0, 0);
		check_raddr(w + 16, 0x77, 0x66);
		check_data(w + 32, &s5[0]);
		check_data(w + 48, &s5[1]);
		for (i = 2; i < 5; i++)
			check_data(wqebb(&f, 0) + 16 * (i - 2), &s5[i]);
		check_posted(&f, 15, 2, 43);
	}
	fake_qp_fini(&f);
}

/* ---- inline payload read back from the ring (a flushed request's re-post) ---- */

static void test_inline_read(void)
{
	struct kr_devx_sge sg = {0x4000, 64, 0x42};
	uint8_t pay[200], back[KR_DEVX_MAX_INLINE];
	struct kr_devx_sge isg = {(uintptr_t)pay, 0, 0};
	struct kr_devx_wr wr;
	struct fake_qp f;

	for (int i = 0; i < (int)sizeof(pay); i++)
		pay[i] = (uint8_t)(7 * i + 1);
	fake_qp_init(&f, KR_DEVX_QP_DCI, 8);
	/* DCI WRITE_IMM starting in the last WQEBB: raddr and payload wrap to the start */
	fake_qp_at(&f, 0x1fff7);
	isg.length = 150;
	wr = (struct kr_devx_wr){.wr_id = 50,
				 .opcode = KR_WR_RDMA_WRITE_IMM,
				 .flags = KR_WR_INLINE,
				 .sge = &isg,
				 .num_sge = 1,
				 .imm = 9,
				 .remote_addr = 0x40,
				 .rkey = 5,
				 .av = &test_av};
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	memset(back, 0, sizeof(back));
	CHECK_EQ(kr_devx_sq_inline_read(&f.qp, 0xfff7, back, sizeof(back)), 150);
	CHECK(memcmp(back, pay, 150) == 0);
	CHECK_EQ(kr_devx_sq_inline_read(&f.qp, 0xfff7, back, 149), -EPROTO); /* no room */
	CHECK_EQ(kr_devx_sq_inline_read(&f.qp, 0xfff8, back, sizeof(back)), -EPROTO); /* mid-WQE */
	/* a DCI SEND_IMM: no raddr; the payload splits inside the ring */
	fake_qp_at(&f, 6);
	isg.length = 100;
	wr = (struct kr_devx_wr){.wr_id = 51,
				 .opcode = KR_WR_SEND_IMM,
				 .flags = KR_WR_INLINE,
				 .sge = &isg,
				 .num_sge = 1,
				 .imm = 3,
				 .av = &test_av};
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	memset(back, 0, sizeof(back));
	CHECK_EQ(kr_devx_sq_inline_read(&f.qp, 6, back, sizeof(back)), 100);
	CHECK(memcmp(back, pay, 100) == 0);
	/* a WRITE from a data segment has no inline payload */
	fake_qp_at(&f, 2);
	wr = (struct kr_devx_wr){.wr_id = 52,
				 .opcode = KR_WR_RDMA_WRITE,
				 .sge = &sg,
				 .num_sge = 1,
				 .remote_addr = 0x40,
				 .rkey = 5,
				 .av = &test_av};
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	CHECK_EQ(kr_devx_sq_inline_read(&f.qp, 2, back, sizeof(back)), -EPROTO);
	fake_qp_fini(&f);
	/* RC inline WRITE: raddr right after ctrl */
	fake_qp_init(&f, KR_DEVX_QP_RC, 8);
	fake_qp_at(&f, 7);
	isg.length = 200;
	wr = (struct kr_devx_wr){.wr_id = 53,
				 .opcode = KR_WR_RDMA_WRITE,
				 .flags = KR_WR_INLINE,
				 .sge = &isg,
				 .num_sge = 1,
				 .remote_addr = 0x40,
				 .rkey = 5};
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	memset(back, 0, sizeof(back));
	CHECK_EQ(kr_devx_sq_inline_read(&f.qp, 7, back, sizeof(back)), 200);
	CHECK(memcmp(back, pay, 200) == 0);
	f.qp.qpn ^= 1; /* another QP's ring */
	CHECK_EQ(kr_devx_sq_inline_read(&f.qp, 7, back, sizeof(back)), -EPROTO);
	fake_qp_fini(&f);
}

/* ---- queue full ---- */

static void test_full(void)
{
	struct fake_qp f;
	struct kr_devx_sge sg = {0x4000, 64, 0x42};
	struct kr_devx_wr wr = {.wr_id = 51,
				.opcode = KR_WR_RDMA_WRITE,
				.sge = &sg,
				.num_sge = 1,
				.remote_addr = 0x1,
				.rkey = 1,
				.av = &test_av};
	uint8_t snap[8 * 64];
	uint32_t i;

	fake_qp_init(&f, KR_DEVX_QP_DCI, 8);
	/* 4 two-WQEBB WQEs fill the ring */
	for (i = 0; i < 4; i++)
		CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	CHECK_EQ(f.qp.sq_pi, 8);
	memcpy(snap, f.qp.sq_buf, sizeof(snap));
	CHECK_ERR(kr_devx_qp_post_send(&f.qp, &wr), -EAGAIN);
	CHECK_EQ(f.qp.sq_pi, 8);
	CHECK(memcmp(snap, f.qp.sq_buf, sizeof(snap)) == 0);

	/* one WQEBB consumed: a 2-WQEBB WQE still does not fit, nothing written */
	f.qp.sq_ci = 1;
	CHECK_ERR(kr_devx_qp_post_send(&f.qp, &wr), -EAGAIN);
	CHECK_EQ(f.qp.sq_pi, 8);
	CHECK(memcmp(snap, f.qp.sq_buf, sizeof(snap)) == 0);
	/* a 1-WQEBB one does (SEND_IMM with no data: ctrl + av = 4 ds) */
	wr.opcode = KR_WR_SEND_IMM;
	wr.num_sge = 0;
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	CHECK_EQ(f.qp.sq_pi, 9);
	CHECK_ERR(kr_devx_qp_post_send(&f.qp, &wr), -EAGAIN);
	/* the poller frees two WQEs */
	f.qp.sq_ci = 5;
	wr.opcode = KR_WR_RDMA_WRITE;
	wr.num_sge = 1;
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	CHECK_EQ(f.qp.sq_pi, 13);
	CHECK_ERR(kr_devx_qp_post_send(&f.qp, &wr), -EAGAIN);
	fake_qp_fini(&f);
}

/* ---- malformed requests: -EINVAL, nothing written ---- */

static void expect_einval(struct fake_qp *f, const struct kr_devx_wr *wr, const char *what)
{
	size_t len = (size_t)f->qp.sq_wqebb_cnt * 64;
	uint8_t *snap = malloc(len);
	uint32_t pi = f->qp.sq_pi;
	int rc;

	CHECK(snap);
	memcpy(snap, f->qp.sq_buf, len);
	rc = kr_devx_qp_post_send(&f->qp, wr);
	if (rc != -EINVAL)
		KR_FAIL("%s: post returned %d, expected -EINVAL", what, rc);
	if (f->qp.sq_pi != pi || memcmp(snap, f->qp.sq_buf, len) != 0)
		KR_FAIL("%s: the ring changed", what);
	free(snap);
}

static void test_einval(void)
{
	struct fake_qp rc, dci, small;
	struct kr_devx_sge sg = {0x4000, 64, 0x42}, sg8 = {0x5000, 8, 0x43}, sg4 = {0x5000, 4, 1};
	struct kr_devx_sge zero = {0x4000, 0, 0x42}, huge = {0x4000, 0x80000000u, 0x42};
	struct kr_devx_sge two8[2] = {{0x5000, 8, 1}, {0x6000, 8, 1}};
	struct kr_devx_sge many[64];
	uint8_t big[KR_DEVX_MAX_INLINE + 1];
	struct kr_devx_sge inl_big = {(uintptr_t)big, sizeof(big), 0};
	struct kr_devx_sge inl_split[2] = {{(uintptr_t)big, KR_DEVX_MAX_INLINE, 0},
					   {(uintptr_t)big, 1, 0}};
	int i;

	memset(big, 1, sizeof(big));
	for (i = 0; i < 64; i++)
		many[i] = (struct kr_devx_sge){0x1000, 8, 1};
	fake_qp_init(&rc, KR_DEVX_QP_RC, 64);
	fake_qp_init(&dci, KR_DEVX_QP_DCI, 64);
	fake_qp_init(&small, KR_DEVX_QP_RC, 8);
	fake_qp_at(&rc, 3);
	fake_qp_at(&dci, 5);

#define RC_WR(...) ((struct kr_devx_wr){.wr_id = 99, __VA_ARGS__})
	expect_einval(&rc, &RC_WR(.opcode = (enum kr_devx_wr_opcode)7), "opcode 7");
	expect_einval(&rc, &RC_WR(.opcode = (enum kr_devx_wr_opcode) - 1), "opcode -1");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_SEND, .flags = 1u << 5), "unknown flag");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_SEND, .av = &test_av), "RC with av");
	expect_einval(&dci, &RC_WR(.opcode = KR_WR_SEND, .sge = &sg, .num_sge = 1),
		      "DCI without av");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_RDMA_READ), "READ without SGE");
	expect_einval(
	    &rc, &RC_WR(.opcode = KR_WR_RDMA_READ, .flags = KR_WR_INLINE, .sge = &sg, .num_sge = 1),
	    "inline READ");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_SEND, .num_sge = 1), "num_sge without sge");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_ATOMIC_CS), "CAS without SGE");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_ATOMIC_CS, .sge = two8, .num_sge = 2),
		      "CAS with 2 SGEs");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_ATOMIC_FA, .sge = &sg4, .num_sge = 1),
		      "FAA of 4 bytes");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_ATOMIC_FA, .sge = &sg, .num_sge = 1),
		      "FAA of 64 bytes");
	expect_einval(
	    &rc,
	    &RC_WR(.opcode = KR_WR_ATOMIC_CS, .sge = &sg8, .num_sge = 1, .remote_addr = 0x1004),
	    "CAS at unaligned remote address");
	expect_einval(
	    &rc,
	    &RC_WR(.opcode = KR_WR_ATOMIC_FA, .flags = KR_WR_INLINE, .sge = &sg8, .num_sge = 1),
	    "inline FAA");
	expect_einval(&dci,
		      &RC_WR(.opcode = KR_WR_ATOMIC_FA, .sge = &sg8, .num_sge = 1,
			     .remote_addr = 0x1001, .av = &test_av),
		      "DCI FAA at unaligned remote address");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_RDMA_WRITE, .sge = &zero, .num_sge = 1),
		      "zero-length SGE (WRITE)");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_RDMA_READ, .sge = &zero, .num_sge = 1),
		      "zero-length SGE (READ)");
	expect_einval(
	    &rc, &RC_WR(.opcode = KR_WR_SEND, .flags = KR_WR_INLINE, .sge = &zero, .num_sge = 1),
	    "zero-length inline SGE");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_SEND, .sge = &huge, .num_sge = 1), "2 GiB SGE");
	expect_einval(
	    &rc, &RC_WR(.opcode = KR_WR_SEND, .flags = KR_WR_INLINE, .sge = &inl_big, .num_sge = 1),
	    "inline of 257 bytes");
	expect_einval(&rc,
		      &RC_WR(.opcode = KR_WR_RDMA_WRITE, .flags = KR_WR_INLINE, .sge = inl_split,
			     .num_sge = 2),
		      "inline of 256 + 1 bytes");
	/* WQE size: ds is 6 bits (63 x 16 bytes) and the device max is 1024 bytes */
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_RDMA_WRITE, .sge = many, .num_sge = 62),
		      "RC WRITE with 62 SGEs (64 ds)");
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_SEND, .sge = many, .num_sge = 63),
		      "RC SEND with 63 SGEs (64 ds)");
	expect_einval(&dci,
		      &RC_WR(.opcode = KR_WR_SEND, .sge = many, .num_sge = 60, .av = &test_av),
		      "DCI SEND with 60 SGEs (64 ds)");
	/* a smaller device limit */
	rc.ctx.caps.max_wqe_sz_sq = 256;
	expect_einval(&rc, &RC_WR(.opcode = KR_WR_SEND, .sge = many, .num_sge = 16),
		      "17 ds over a 256-byte max WQE");
	CHECK_OK(
	    kr_devx_qp_post_send(&rc.qp, &RC_WR(.opcode = KR_WR_SEND, .sge = many, .num_sge = 15)));
	rc.ctx.caps.max_wqe_sz_sq = 1024;
	CHECK_OK(kr_devx_qp_post_send(
	    &rc.qp, &RC_WR(.opcode = KR_WR_RDMA_WRITE, .sge = many, .num_sge = 61)));
	CHECK_EQ(rc.qp.sq_pi, 3 + 4 + 16);
	dci.ctx.caps.max_wqe_sz_sq_dc = 128;
	expect_einval(&dci, &RC_WR(.opcode = KR_WR_SEND, .sge = many, .num_sge = 5, .av = &test_av),
		      "DCI: 9 ds over a 128-byte max WQE");
	/* a WQE larger than the whole ring can never fit: -EINVAL, not -EAGAIN */
	expect_einval(&small, &RC_WR(.opcode = KR_WR_SEND, .sge = many, .num_sge = 40),
		      "WQE of 11 WQEBBs on an 8-WQEBB ring");
#undef RC_WR

	fake_qp_fini(&rc);
	fake_qp_fini(&dci);
	fake_qp_fini(&small);
}

/* ---- doorbell batching ---- */

static void test_doorbell(void)
{
	struct fake_qp f;
	struct kr_devx_sge sg = {0x4000, 64, 0x42};
	struct kr_devx_wr wr = {
	    .opcode = KR_WR_RDMA_WRITE, .sge = &sg, .num_sge = 1, .remote_addr = 0x1000, .rkey = 7};
	uint64_t expect;
	int i;

	memset(&db, 0, sizeof(db));
	fake_qp_init(&f, KR_DEVX_QP_RC, 64);
	f.dbrec[MLX5_SND_DBR] = 0xffffffff;
	kr_devx_qp_ring(&f.qp); /* nothing posted: no doorbell */
	CHECK_EQ(db.count, 0);
	CHECK_EQ(f.dbrec[MLX5_SND_DBR], 0xffffffff);

	for (i = 0; i < 3; i++) {
		wr.wr_id = 60 + i;
		wr.flags = i == 2 ? KR_WR_SIGNALED : 0;
		CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	}
	CHECK_EQ(db.count, 0);
	CHECK_EQ(f.dbrec[MLX5_SND_DBR], 0xffffffff);
	kr_devx_qp_ring(&f.qp);
	CHECK_EQ(db.count, 1);
	CHECK(db.uar == &f.uar);
	CHECK_EQ(f.dbrec[MLX5_SND_DBR], htobe32(3));
	/* the doorbell carries the last ctrl's first 8 bytes as they sit in memory */
	memcpy(&expect, wqebb(&f, 2), 8);
	CHECK_EQ(db.last, expect);
	CHECK_EQ(be32_at((const uint8_t *)&db.last), (2u << 8) | MLX5_OPCODE_RDMA_WRITE);
	CHECK_EQ(be32_at((const uint8_t *)&db.last + 4), (QPN << 8) | 3);
	CHECK_EQ(f.qp.sq_db_pi, 3);
	kr_devx_qp_ring(&f.qp);
	CHECK_EQ(db.count, 1);

	/* record carries the low 16 bits of the producer counter */
	fake_qp_at(&f, 0x2fffe);
	wr.wr_id = 70;
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	CHECK_OK(kr_devx_qp_post_send(&f.qp, &wr));
	kr_devx_qp_ring(&f.qp);
	CHECK_EQ(db.count, 2);
	CHECK_EQ(f.dbrec[MLX5_SND_DBR], htobe32(0x0001));
	memcpy(&expect, wqebb(&f, 0x30000), 8);
	CHECK_EQ(db.last, expect);
	CHECK_EQ(be32_at((const uint8_t *)&db.last) >> 8, 0x0000);
	fake_qp_fini(&f);
}

/* ---- receive WQEs: RQ and SRQ ---- */

static void check_recv_wqe(const uint8_t *w, const struct kr_devx_sge *sge, uint32_t n,
			   uint32_t slots)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		check_data(w + 16 * i, &sge[i]);
	if (n < slots) {
		CHECK_EQ(be32_at(w + 16 * n), 0);
		CHECK_EQ(be32_at(w + 16 * n + 4), MLX5_INVALID_LKEY);
	}
}

static void test_recv(void)
{
	struct fake_qp f;
	struct kr_devx_srq srq;
	struct kr_devx_srq dummy_srq;
	uint32_t srq_dbrec[2] = {0};
	struct kr_devx_sge sg[5] = {
	    {0x1000, 10, 1}, {0x2000, 20, 2}, {0x3000, 30, 3}, {0x4000, 40, 4}, {0x5000, 50, 5}};
	struct kr_devx_sge zero = {0x1000, 0, 1};
	uint8_t *w;
	uint32_t i;

	/* RQ of 4 WQEs, 64-byte stride (4 SGE slots) */
	fake_qp_init(&f, KR_DEVX_QP_RC, 8);
	f.qp.rq_wqe_cnt = 4;
	f.qp.rq_log_stride = 6;
	f.qp.rq_buf = aligned_alloc(64, 4 * 64);
	f.qp.rq_wrid = calloc(4, sizeof(uint64_t));
	CHECK(f.qp.rq_buf && f.qp.rq_wrid);
	memset(f.qp.rq_buf, RING_FILL, 4 * 64);

	CHECK_OK(kr_devx_qp_post_recv(&f.qp, sg, 2, 100));
	check_recv_wqe(f.qp.rq_buf, sg, 2, 4);
	CHECK_EQ(f.qp.rq_wrid[0], 100);
	CHECK_EQ(f.qp.rq_pi, 1);
	CHECK_EQ(f.dbrec[MLX5_RCV_DBR], htobe32(1));
	CHECK_OK(kr_devx_qp_post_recv(&f.qp, sg, 4, 101)); /* all slots: no terminator */
	check_recv_wqe(f.qp.rq_buf + 64, sg, 4, 4);
	CHECK_OK(kr_devx_qp_post_recv(&f.qp, NULL, 0, 102)); /* terminator in slot 0 */
	check_recv_wqe(f.qp.rq_buf + 128, NULL, 0, 4);
	CHECK_ERR(kr_devx_qp_post_recv(&f.qp, sg, 5, 103), -EINVAL);
	CHECK_ERR(kr_devx_qp_post_recv(&f.qp, &zero, 1, 103), -EINVAL);
	CHECK_ERR(kr_devx_qp_post_recv(&f.qp, NULL, 1, 103), -EINVAL);
	CHECK_EQ(f.qp.rq_pi, 3);
	CHECK_OK(kr_devx_qp_post_recv(&f.qp, &sg[4], 1, 103));
	CHECK_ERR(kr_devx_qp_post_recv(&f.qp, sg, 1, 104), -EAGAIN);
	CHECK_EQ(f.dbrec[MLX5_RCV_DBR], htobe32(4));
	f.qp.rq_ci = 1; /* the poller consumed one */
	CHECK_OK(kr_devx_qp_post_recv(&f.qp, &sg[3], 1, 104));
	check_recv_wqe(f.qp.rq_buf, &sg[3], 1, 4);
	CHECK_EQ(f.qp.rq_wrid[0], 104);
	CHECK_EQ(f.dbrec[MLX5_RCV_DBR], htobe32(5));
	/* an SRQ-attached QP or a QP without RQ has nothing to post into */
	f.qp.srq = &dummy_srq;
	CHECK_ERR(kr_devx_qp_post_recv(&f.qp, sg, 1, 1), -EINVAL);
	f.qp.srq = NULL;
	f.qp.rq_wqe_cnt = 0;
	CHECK_ERR(kr_devx_qp_post_recv(&f.qp, sg, 1, 1), -EINVAL);
	fake_qp_fini(&f);

	/* SRQ of 4 WQEs, 32-byte stride (2 slots) */
	memset(&srq, 0, sizeof(srq));
	srq.nwqe = 4;
	srq.log_stride = 5;
	srq.wq_buf = aligned_alloc(64, 4 * 32);
	srq.wrid = calloc(4, sizeof(uint64_t));
	srq.dbrec = srq_dbrec;
	CHECK(srq.wq_buf && srq.wrid);
	CHECK_OK(kr_devx_srq_post_recv(&srq, sg, 1, 200));
	check_recv_wqe(srq.wq_buf, sg, 1, 2);
	CHECK_OK(kr_devx_srq_post_recv(&srq, sg, 2, 201));
	check_recv_wqe(srq.wq_buf + 32, sg, 2, 2);
	CHECK_ERR(kr_devx_srq_post_recv(&srq, sg, 3, 202), -EINVAL);
	CHECK_ERR(kr_devx_srq_post_recv(&srq, &zero, 1, 202), -EINVAL);
	CHECK_OK(kr_devx_srq_post_recv(&srq, sg, 1, 202));
	CHECK_OK(kr_devx_srq_post_recv(&srq, sg, 1, 203));
	CHECK_ERR(kr_devx_srq_post_recv(&srq, sg, 1, 204), -EAGAIN);
	CHECK_EQ(srq.pi, 4);
	CHECK_EQ(srq_dbrec[0], htobe32(4));
	for (i = 0; i < 4; i++)
		CHECK_EQ(srq.wrid[i], 200 + i);
	srq.ci = 2;
	CHECK_OK(kr_devx_srq_post_recv(&srq, &sg[2], 1, 204));
	w = srq.wq_buf;
	check_recv_wqe(w, &sg[2], 1, 2);
	CHECK_EQ(srq.wrid[0], 204);
	CHECK_EQ(srq_dbrec[0], htobe32(5));
	free(srq.wq_buf);
	free(srq.wrid);
}

/* ---- the vQP's post: the same WQE as the checked one ---- */

/* Post wr on a (kr_devx_qp_post_send) and on b (kr_devx_qp_post_checked); same bytes and books. */
static void post_both(struct fake_qp *a, struct fake_qp *b, const struct kr_devx_wr *wr,
		      const struct kr_devx_av_wqe *enc)
{
	struct kr_devx_wr w = *wr;
	size_t ring = (size_t)a->qp.sq_wqebb_cnt * 64;

	CHECK_OK(kr_devx_qp_post_send(&a->qp, wr));
	if (a->qp.type == KR_DEVX_QP_DCI)
		w.av_wqe = enc; /* the checked post reads the address encoded */
	CHECK_OK(kr_devx_qp_post_checked(&b->qp, &w));
	CHECK_EQ(a->qp.sq_pi, b->qp.sq_pi);
	CHECK((uint8_t *)a->qp.sq_last_ctrl - a->qp.sq_buf ==
	      (uint8_t *)b->qp.sq_last_ctrl - b->qp.sq_buf);
	CHECK(memcmp(a->qp.sq_buf, b->qp.sq_buf, ring) == 0);
	CHECK(memcmp(a->qp.sq_wrid, b->qp.sq_wrid, a->qp.sq_wqebb_cnt * sizeof(uint64_t)) == 0);
	CHECK(memcmp(a->qp.sq_wqe_next, b->qp.sq_wqe_next,
		     a->qp.sq_wqebb_cnt * sizeof(uint32_t)) == 0);
}

/*
 * Every op case, inline WRITE and SEND, and a wrap, through both posts on
 * twin QPs: kr_devx_qp_post_checked (inline into the vQP, the AV copied from
 * kr_devx_dc_av_encode) writes what kr_devx_qp_post_send writes.
 */
static void test_checked_same_wqe(void)
{
	static const enum kr_devx_qp_type types[] = {KR_DEVX_QP_RC, KR_DEVX_QP_DCI};
	struct kr_devx_av_wqe enc;
	uint8_t pay[200];

	kr_devx_dc_av_encode(&test_av, &enc);
	check_av(enc.bytes, &test_av);
	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(i * 7 + 3);
	for (size_t t = 0; t < 2; t++) {
		struct fake_qp a, b;
		const struct kr_devx_dc_av *av = types[t] == KR_DEVX_QP_DCI ? &test_av : NULL;
		struct kr_devx_sge isg = {(uintptr_t)pay, sizeof(pay), 0};
		struct kr_devx_wr wr;

		fake_qp_init(&a, types[t], 16);
		fake_qp_init(&b, types[t], 16);
		/* twice round the 16-WQEBB ring: the second time wraps */
		for (int round = 0; round < 2; round++) {
			for (size_t i = 0; i < sizeof(op_cases) / sizeof(op_cases[0]); i++) {
				if (op_cases[i].type != types[t])
					continue;
				printf("checked case: %s\n", op_cases[i].what);
				post_both(&a, &b, &op_cases[i].wr, &enc);
				a.qp.sq_ci = a.qp.sq_pi; /* completed: room for the next */
				b.qp.sq_ci = b.qp.sq_pi;
			}
			wr = (struct kr_devx_wr){.wr_id = 41,
						 .opcode = KR_WR_RDMA_WRITE,
						 .flags = KR_WR_INLINE | KR_WR_SIGNALED,
						 .sge = &isg,
						 .num_sge = 1,
						 .remote_addr = 0x40,
						 .rkey = 4,
						 .av = av};
			post_both(&a, &b, &wr, &enc);
			wr.opcode = KR_WR_SEND_IMM;
			wr.imm = 0x01020304;
			post_both(&a, &b, &wr, &enc);
			a.qp.sq_ci = a.qp.sq_pi;
			b.qp.sq_ci = b.qp.sq_pi;
		}
		CHECK(a.qp.sq_pi > 16); /* it did wrap */
		fake_qp_fini(&a);
		fake_qp_fini(&b);
	}
}

int main(void)
{
	test_rc_opcodes();
	test_inline();
	test_dci_opcodes();
	test_wrap();
	test_inline_read();
	test_full();
	test_einval();
	test_doorbell();
	test_recv();
	test_checked_same_wqe();
	KR_PASS("devx_wqe_build");
}
