/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim firmware refuses bad command mailboxes the way hardware does: exact
 * status and syndrome, nothing created or changed, and the device keeps
 * working. Mailboxes are built raw here (KR_PRM_SET) so each case can break
 * exactly one thing; everything goes through ctx->ops as the devx layer does.
 *
 * After every refused command a good QP still walks RST -> INIT -> RTR -> RTS,
 * and a fresh create gets the object number a probe got before the bad
 * command (lowest free index): the bad command leaked nothing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kr_test.h"
#include "sim/sim.h"

#define UMEM_BYTES (1u << 20)
#define DBR_AREA   0xf0000u /* doorbell records live here in the umem */

struct env {
	struct kr_devx_ctx *ctx;
	struct kr_devx_uar *uar;
	struct kr_devx_umem *umem;
	void *mem;
	struct kr_devx_obj *pd;
	struct kr_devx_obj *cq_a;
	struct kr_devx_obj *cq_b;
	struct kr_devx_obj *good_qp; /* walks the state machine after each bad command */
	uint32_t next_dbr;
};

static struct env E;

/* ---- mailboxes ---- */

typedef uint32_t mbox_t[KR_PRM_BYTES(create_qp_in) / 4 + 8]; /* big enough for any in/out */

static uint32_t new_dbr(void)
{
	uint32_t off = DBR_AREA + E.next_dbr;

	E.next_dbr += 64;
	CHECK(off + 64 <= UMEM_BYTES);
	return off;
}

static void expect_status(uint8_t status, uint32_t syndrome)
{
	CHECK_EQ(E.ctx->last_err.status, status);
	CHECK_EQ(E.ctx->last_err.syndrome, syndrome);
}

static void build_cq(uint32_t *in, uint32_t log_size, uint64_t umem_off, uint32_t umem_id)
{
	void *cqc = KR_PRM_ADDR(create_cq_in, in, cq_context);

	memset(in, 0, KR_PRM_BYTES(create_cq_in));
	KR_PRM_SET(create_cq_in, in, opcode, KR_CMD_OP_CREATE_CQ);
	KR_PRM_SET(create_cq_in, in, cq_umem_id, umem_id);
	KR_PRM_SET64(create_cq_in, in, cq_umem_offset, umem_off);
	KR_PRM_SET(create_cq_in, in, cq_umem_valid, 1);
	KR_PRM_SET(cqc, cqc, cqe_sz, KR_CQE_SIZE_64);
	KR_PRM_SET(cqc, cqc, log_cq_size, log_size);
	KR_PRM_SET(cqc, cqc, uar_page, E.uar->page_id);
	KR_PRM_SET(cqc, cqc, c_eqn_or_apu_element, 0);
	KR_PRM_SET(cqc, cqc, dbr_umem_valid, 1);
	KR_PRM_SET(cqc, cqc, dbr_umem_id, umem_id);
	KR_PRM_SET64(cqc, cqc, dbr_addr, new_dbr());
}

static int create(const uint32_t *in, size_t inlen, struct kr_devx_obj **obj)
{
	mbox_t out;

	return E.ctx->ops->obj_create(E.ctx, in, inlen, out, KR_PRM_BYTES(create_qp_out), obj);
}

static struct kr_devx_obj *good_cq(uint32_t log_size, uint64_t umem_off)
{
	struct kr_devx_obj *obj = NULL;
	mbox_t in;

	build_cq(in, log_size, umem_off, E.umem->id);
	CHECK_OK(create(in, KR_PRM_BYTES(create_cq_in), &obj));
	return obj;
}

struct qp_args {
	uint32_t st, pdn, cqn_snd, cqn_rcv, uar, rq_type, srqn;
	uint32_t log_sq, log_rq, log_rq_stride;
	uint32_t wq_umem, dbr_umem;
	uint64_t wq_off, dbr_off;
};

static struct qp_args rc_args(void)
{
	return (struct qp_args){
	    .st = KR_QPC_ST_RC,
	    .pdn = E.pd->id,
	    .cqn_snd = E.cq_a->id,
	    .cqn_rcv = E.cq_b->id,
	    .uar = E.uar->page_id,
	    .rq_type = KR_QPC_RQ_TYPE_REGULAR,
	    .log_sq = 6,
	    .log_rq = 5,
	    .log_rq_stride = 2, /* 64-byte receive WQEs */
	    .wq_umem = E.umem->id,
	    .dbr_umem = E.umem->id,
	    .wq_off = 0x40000,
	    .dbr_off = DBR_AREA - 64,
	};
}

static void build_qp(uint32_t *in, const struct qp_args *a)
{
	void *qpc = KR_PRM_ADDR(create_qp_in, in, qpc);

	memset(in, 0, KR_PRM_BYTES(create_qp_in));
	KR_PRM_SET(create_qp_in, in, opcode, KR_CMD_OP_CREATE_QP);
	KR_PRM_SET(create_qp_in, in, wq_umem_id, a->wq_umem);
	KR_PRM_SET64(create_qp_in, in, wq_umem_offset, a->wq_off);
	KR_PRM_SET(create_qp_in, in, wq_umem_valid, 1);
	KR_PRM_SET(qpc, qpc, st, a->st);
	KR_PRM_SET(qpc, qpc, pm_state, KR_QPC_PM_STATE_MIGRATED);
	KR_PRM_SET(qpc, qpc, pd, a->pdn);
	KR_PRM_SET(qpc, qpc, uar_page, a->uar);
	KR_PRM_SET(qpc, qpc, user_index, 7);
	KR_PRM_SET(qpc, qpc, log_sq_size, a->log_sq);
	KR_PRM_SET(qpc, qpc, rq_type, a->rq_type);
	KR_PRM_SET(qpc, qpc, log_rq_size, a->log_rq);
	KR_PRM_SET(qpc, qpc, log_rq_stride, a->log_rq_stride);
	KR_PRM_SET(qpc, qpc, srqn_rmpn_xrqn, a->srqn);
	KR_PRM_SET(qpc, qpc, cqn_snd, a->cqn_snd);
	KR_PRM_SET(qpc, qpc, cqn_rcv, a->cqn_rcv);
	KR_PRM_SET(qpc, qpc, dbr_umem_valid, 1);
	KR_PRM_SET(qpc, qpc, dbr_umem_id, a->dbr_umem);
	KR_PRM_SET64(qpc, qpc, dbr_addr, a->dbr_off);
}

static struct kr_devx_obj *good_qp(void)
{
	struct qp_args a = rc_args();
	struct kr_devx_obj *obj = NULL;
	mbox_t in;

	build_qp(in, &a);
	CHECK_OK(create(in, KR_PRM_BYTES(create_qp_in), &obj));
	return obj;
}

/* Expect a create to fail with status/syndrome and leave no object behind. */
static void expect_create_fails(const uint32_t *in, size_t inlen, uint8_t status, uint32_t syndrome)
{
	struct kr_devx_obj *obj = NULL;

	CHECK_ERR(create(in, inlen, &obj), -EREMOTEIO);
	CHECK(obj == NULL);
	expect_status(status, syndrome);
}

/* ---- QP transitions ---- */

static void build_transition(uint32_t *in, uint16_t op, uint32_t qpn)
{
	void *qpc = KR_PRM_ADDR(rst2init_qp_in, in, qpc);
	void *ads = KR_PRM_ADDR(qpc, qpc, primary_address_path);
	static const uint8_t rgid[16] = {[10] = 0xff, [11] = 0xff, 127, 0, 0, 9};

	memset(in, 0, KR_PRM_BYTES(rst2init_qp_in));
	KR_PRM_SET(mbox_in, in, opcode, op);
	KR_PRM_SET(qp_2rst_in, in, qpn, qpn);
	if (op == KR_CMD_OP_2ERR_QP || op == KR_CMD_OP_2RST_QP)
		return;
	KR_PRM_SET(ads, ads, vhca_port_num, 1);
	switch (op) {
	case KR_CMD_OP_RST2INIT_QP:
		KR_PRM_SET(qpc, qpc, rre, 1);
		KR_PRM_SET(qpc, qpc, rwe, 1);
		KR_PRM_SET(qpc, qpc, rae, 1);
		KR_PRM_SET(qpc, qpc, atomic_mode, KR_QPC_ATOMIC_MODE_IB_SPEC);
		break;
	case KR_CMD_OP_INIT2RTR_QP:
		KR_PRM_SET(qpc, qpc, mtu, KR_MTU_1K);
		KR_PRM_SET(qpc, qpc, log_msg_max, 30);
		KR_PRM_SET(qpc, qpc, remote_qpn, 0x123);
		KR_PRM_SET(qpc, qpc, next_rcv_psn, 0x1000);
		KR_PRM_SET(qpc, qpc, min_rnr_nak, 12);
		KR_PRM_SET(qpc, qpc, log_rra_max, 2);
		memcpy(KR_PRM_ADDR(ads, ads, rgid_rip), rgid, 16);
		KR_PRM_SET(ads, ads, hop_limit, 64);
		break;
	case KR_CMD_OP_RTR2RTS_QP:
		KR_PRM_SET(qpc, qpc, retry_count, 7);
		KR_PRM_SET(qpc, qpc, rnr_retry, 7);
		KR_PRM_SET(qpc, qpc, next_send_psn, 0x2000);
		KR_PRM_SET(qpc, qpc, log_sra_max, 2);
		KR_PRM_SET(ads, ads, ack_timeout, 12);
		break;
	default:
		break;
	}
}

static int transition(struct kr_devx_obj *qp, uint16_t op)
{
	mbox_t in, out;

	build_transition(in, op, qp->id);
	return E.ctx->ops->obj_modify(qp, in, KR_PRM_BYTES(rst2init_qp_in), out,
				      KR_PRM_BYTES(rst2init_qp_out));
}

static void query_qp(struct kr_devx_obj *qp, uint32_t *out)
{
	mbox_t in;

	memset(in, 0, sizeof(in));
	KR_PRM_SET(query_qp_in, in, opcode, KR_CMD_OP_QUERY_QP);
	KR_PRM_SET(query_qp_in, in, qpn, qp->id);
	CHECK_OK(E.ctx->ops->obj_query(qp, in, KR_PRM_BYTES(query_qp_in), out,
				       KR_PRM_BYTES(query_qp_out)));
}

static uint32_t qp_state(struct kr_devx_obj *qp)
{
	mbox_t out;

	query_qp(qp, out);
	return KR_PRM_GET(qpc, KR_PRM_ADDR(query_qp_out, out, qpc), state);
}

static void expect_bad_transition(struct kr_devx_obj *qp, uint16_t op)
{
	uint32_t before = qp_state(qp);

	CHECK_ERR(transition(qp, op), -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_QP_BAD_TRANSITION);
	CHECK_EQ(E.ctx->last_err.opcode, op);
	CHECK_EQ(qp_state(qp), before);
}

/* The good QP still walks the whole state machine. */
static void good_qp_still_works(void)
{
	mbox_t out;
	void *qpc;

	CHECK_OK(transition(E.good_qp, KR_CMD_OP_2RST_QP));
	CHECK_EQ(qp_state(E.good_qp), KR_QPC_STATE_RST);
	CHECK_OK(transition(E.good_qp, KR_CMD_OP_RST2INIT_QP));
	CHECK_EQ(qp_state(E.good_qp), KR_QPC_STATE_INIT);
	CHECK_OK(transition(E.good_qp, KR_CMD_OP_INIT2RTR_QP));
	CHECK_EQ(qp_state(E.good_qp), KR_QPC_STATE_RTR);
	CHECK_OK(transition(E.good_qp, KR_CMD_OP_RTR2RTS_QP));
	query_qp(E.good_qp, out);
	qpc = KR_PRM_ADDR(query_qp_out, out, qpc);
	CHECK_EQ(KR_PRM_GET(qpc, qpc, state), KR_QPC_STATE_RTS);
	CHECK_EQ(KR_PRM_GET(qpc, qpc, next_send_psn), 0x2000);
	CHECK_EQ(KR_PRM_GET(qpc, qpc, next_rcv_psn), 0x1000);
	CHECK_EQ(KR_PRM_GET(qpc, qpc, remote_qpn), 0x123);
	CHECK_EQ(KR_PRM_GET(qpc, qpc, cqn_snd), E.cq_a->id);
	CHECK_EQ(KR_PRM_GET(qpc, qpc, user_index), 7);
	CHECK_EQ(KR_PRM_GET(qpc, qpc, hw_sq_wqebb_counter), 0);
}

/* A create after the bad command gets the number a probe got before it. */
static uint32_t probe_qpn(void)
{
	struct kr_devx_obj *qp = good_qp();
	uint32_t qpn = qp->id;

	CHECK_OK(E.ctx->ops->obj_destroy(qp));
	return qpn;
}

static uint32_t probe_cqn(void)
{
	struct kr_devx_obj *cq = good_cq(4, 0x20000);
	uint32_t cqn = cq->id;

	CHECK_OK(E.ctx->ops->obj_destroy(cq));
	return cqn;
}

/* ---- cases ---- */

static void test_illegal_transitions(void)
{
	struct kr_devx_obj *qp = good_qp();

	CHECK_EQ(qp_state(qp), KR_QPC_STATE_RST);
	expect_bad_transition(qp, KR_CMD_OP_INIT2RTR_QP); /* RST2RTR */
	expect_bad_transition(qp, KR_CMD_OP_RTR2RTS_QP);  /* RST2RTS */
	CHECK_OK(transition(qp, KR_CMD_OP_RST2INIT_QP));
	expect_bad_transition(qp, KR_CMD_OP_RTR2RTS_QP);  /* INIT2RTS */
	expect_bad_transition(qp, KR_CMD_OP_RST2INIT_QP); /* INIT2INIT via RST2INIT */
	CHECK_OK(transition(qp, KR_CMD_OP_INIT2RTR_QP));
	expect_bad_transition(qp, KR_CMD_OP_RST2INIT_QP); /* RTR2INIT */
	expect_bad_transition(qp, KR_CMD_OP_INIT2RTR_QP); /* RTR2RTR */
	CHECK_OK(transition(qp, KR_CMD_OP_RTR2RTS_QP));
	expect_bad_transition(qp, KR_CMD_OP_RST2INIT_QP);
	expect_bad_transition(qp, KR_CMD_OP_INIT2RTR_QP);
	expect_bad_transition(qp, KR_CMD_OP_RTR2RTS_QP);
	CHECK_OK(transition(qp, KR_CMD_OP_2ERR_QP));
	CHECK_EQ(qp_state(qp), KR_QPC_STATE_ERR);
	expect_bad_transition(qp, KR_CMD_OP_RST2INIT_QP); /* ERR2INIT */
	expect_bad_transition(qp, KR_CMD_OP_RTR2RTS_QP);
	CHECK_OK(transition(qp, KR_CMD_OP_2RST_QP));
	CHECK_EQ(qp_state(qp), KR_QPC_STATE_RST);
	CHECK_OK(transition(qp, KR_CMD_OP_RST2INIT_QP));
	CHECK_OK(E.ctx->ops->obj_destroy(qp));
	good_qp_still_works();
}

static void test_reserved_bits(void)
{
	uint32_t qpn = probe_qpn(), cqn = probe_cqn();
	struct qp_args a = rc_args();
	struct kr_devx_obj *obj;
	uint32_t in[KR_PRM_BYTES(create_qp_in) / 4 + 4];
	const unsigned int qpc_off = KR_PRM_OFF(create_qp_in, qpc);
	const unsigned int ads_off = qpc_off + KR_PRM_OFF(qpc, primary_address_path);
	const unsigned int cqc_off = KR_PRM_OFF(create_cq_in, cq_context);
	/* reserved bits: header, qpc (reserved and a kernel field the table lacks), ads */
	const unsigned int qp_bits[] = {
	    0x20,	    0x48,	   qpc_off + 0x10,
	    qpc_off + 0x12, ads_off + 0x2, KR_PRM_OFF(create_qp_in, wq_umem_valid) + 1};
	const unsigned int cq_bits[] = {0x20, 0x40, cqc_off + 0x4, cqc_off + 0x40};

	for (size_t i = 0; i < sizeof(qp_bits) / sizeof(qp_bits[0]); i++) {
		build_qp(in, &a);
		kr_prm_set(in, qp_bits[i], 1, 1);
		expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_PARAM_ERR,
				    SIM_SYND_RSVD_CREATE_QP);
		good_qp_still_works();
	}
	/* a set byte past the end of the struct counts as reserved too */
	memset(in, 0, sizeof(in));
	build_qp(in, &a);
	in[KR_PRM_BYTES(create_qp_in) / 4 + 1] = htobe32(1);
	expect_create_fails(in, sizeof(in), KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RSVD_CREATE_QP);
	/* ... and zeros there are fine */
	memset(in, 0, sizeof(in));
	build_qp(in, &a);
	CHECK_OK(create(in, sizeof(in), &obj));
	CHECK_EQ(obj->id, qpn);
	CHECK_OK(E.ctx->ops->obj_destroy(obj));

	for (size_t i = 0; i < sizeof(cq_bits) / sizeof(cq_bits[0]); i++) {
		build_cq(in, 4, 0x20000, E.umem->id);
		kr_prm_set(in, cq_bits[i], 1, 1);
		expect_create_fails(in, KR_PRM_BYTES(create_cq_in), KR_CMD_STAT_BAD_PARAM_ERR,
				    SIM_SYND_RSVD_CREATE_CQ);
	}
	/* reserved bit in a transition: refused, state unchanged */
	{
		mbox_t m, out;

		CHECK_OK(transition(E.good_qp, KR_CMD_OP_2RST_QP));
		build_transition(m, KR_CMD_OP_RST2INIT_QP, E.good_qp->id);
		kr_prm_set(m, KR_PRM_OFF(rst2init_qp_in, qpc) + 0x10, 1, 1);
		CHECK_ERR(E.ctx->ops->obj_modify(E.good_qp, m, KR_PRM_BYTES(rst2init_qp_in), out,
						 KR_PRM_BYTES(rst2init_qp_out)),
			  -EREMOTEIO);
		expect_status(KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RSVD_RST2INIT_QP);
		CHECK_EQ(KR_PRM_GET(mbox_out, out, status), KR_CMD_STAT_BAD_PARAM_ERR);
		CHECK_EQ(KR_PRM_GET(mbox_out, out, syndrome), SIM_SYND_RSVD_RST2INIT_QP);
		CHECK_EQ(qp_state(E.good_qp), KR_QPC_STATE_RST);
	}
	/* nothing leaked: the next creates reuse the probed numbers */
	obj = good_qp();
	CHECK_EQ(obj->id, qpn);
	CHECK_OK(E.ctx->ops->obj_destroy(obj));
	obj = good_cq(4, 0x20000);
	CHECK_EQ(obj->id, cqn);
	CHECK_OK(E.ctx->ops->obj_destroy(obj));
	good_qp_still_works();
}

/* Every field of krcore's layout table, to check that none counts as reserved. */
static const struct {
	const char *s;
	unsigned int off, w;
} fields[] = {
#define KR_PRM(s, f, off, w)	      {#s, (off), (w)},
#define KR_PRM_AS(s, f, off, w, k)    KR_PRM(s, f, off, w)
#define KR_PRM_DOC(s, f, off, w, src) KR_PRM(s, f, off, w)
#define KR_PRM_SIZE(s, bits)
#include "devx/devx_prm_fields.h"
#undef KR_PRM
#undef KR_PRM_AS
#undef KR_PRM_DOC
#undef KR_PRM_SIZE
};

/* Set every bit of every field of struct s at bit base (sub-contexts excluded). */
static void set_all_fields(uint32_t *in, const char *s, unsigned int base, const char *skip1,
			   unsigned int skip1_off)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (strcmp(fields[i].s, s) || (skip1 && fields[i].off == skip1_off))
			continue;
		for (unsigned int b = 0; b < fields[i].w; b++)
			kr_prm_set(in, base + fields[i].off + b, 1, 1);
	}
}

/* All defined bits set: refused for what the values mean, never as reserved. */
static void test_defined_bits_are_not_reserved(void)
{
	const unsigned int qpc = KR_PRM_OFF(create_qp_in, qpc);
	const unsigned int ads = qpc + KR_PRM_OFF(qpc, primary_address_path);
	uint32_t in[KR_PRM_BYTES(create_qp_in) / 4];
	struct kr_devx_obj *obj = NULL;

	memset(in, 0, sizeof(in));
	set_all_fields(in, "mbox_in", 0, NULL, 0);
	set_all_fields(in, "create_qp_in", 0, "qpc", qpc);
	set_all_fields(in, "qpc", qpc, "primary_address_path",
		       KR_PRM_OFF(qpc, primary_address_path));
	set_all_fields(in, "ads", ads, NULL, 0);
	KR_PRM_SET(create_qp_in, in, opcode, KR_CMD_OP_CREATE_QP);
	KR_PRM_SET(create_qp_in, in, op_mod, 0);
	CHECK_ERR(create(in, sizeof(in), &obj), -EREMOTEIO);
	CHECK(E.ctx->last_err.syndrome != SIM_SYND_RSVD_CREATE_QP);
	CHECK_EQ(E.ctx->last_err.syndrome, SIM_SYND_QP_BAD_ST); /* st = 0xff */

	memset(in, 0, sizeof(in));
	set_all_fields(in, "create_cq_in", 0, "cq_context", KR_PRM_OFF(create_cq_in, cq_context));
	set_all_fields(in, "cqc", KR_PRM_OFF(create_cq_in, cq_context), NULL, 0);
	KR_PRM_SET(create_cq_in, in, opcode, KR_CMD_OP_CREATE_CQ);
	KR_PRM_SET(create_cq_in, in, op_mod, 0);
	CHECK_ERR(create(in, KR_PRM_BYTES(create_cq_in), &obj), -EREMOTEIO);
	CHECK_EQ(E.ctx->last_err.syndrome, SIM_SYND_CQ_SIZE); /* log_cq_size = 31 */

	memset(in, 0, sizeof(in));
	set_all_fields(in, "create_mkey_in", 0, "memory_key_mkey_entry",
		       KR_PRM_OFF(create_mkey_in, memory_key_mkey_entry));
	set_all_fields(in, "mkc", KR_PRM_OFF(create_mkey_in, memory_key_mkey_entry), NULL, 0);
	KR_PRM_SET(create_mkey_in, in, opcode, KR_CMD_OP_CREATE_MKEY);
	KR_PRM_SET(create_mkey_in, in, op_mod, 0);
	CHECK_ERR(create(in, KR_PRM_BYTES(create_mkey_in), &obj), -EREMOTEIO);
	CHECK_EQ(E.ctx->last_err.syndrome, SIM_SYND_MKEY_ACCESS_MODE);
	CHECK(obj == NULL);
	good_qp_still_works();
}

static void test_unknown_objects(void)
{
	uint32_t qpn = probe_qpn();
	struct kr_devx_obj *tmp_cq = good_cq(4, 0x20000), *obj;
	struct qp_args a;
	mbox_t in;

	/* unknown PD, with a good temporary CQ: it must not keep a reference */
	a = rc_args();
	a.cqn_snd = tmp_cq->id;
	a.pdn = 200;
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_PD);
	CHECK_OK(E.ctx->ops->obj_destroy(tmp_cq)); /* not busy: no reference leaked */

	a = rc_args();
	a.cqn_snd = 999;
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_CQ_SND);
	a = rc_args();
	a.cqn_rcv = 0;
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_CQ_RCV);
	a = rc_args();
	a.uar = 33;
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_UAR);
	a = rc_args();
	a.wq_umem = 77;
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_BUF_UMEM);
	a = rc_args();
	a.dbr_umem = 78;
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_DBR_UMEM);
	a = rc_args();
	a.rq_type = KR_QPC_RQ_TYPE_SRQ_RMP_XRC;
	a.srqn = 5;
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_SRQ);

	/* bad parameters */
	a = rc_args();
	a.st = 0x3; /* UD */
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_QP_BAD_ST);
	a = rc_args();
	a.st = KR_QPC_ST_DCI; /* with a regular RQ */
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_QP_DCI_RQ);
	a = rc_args();
	a.log_sq = 14; /* 1 MiB of SQ from offset 0x40000: past the umem */
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_QP_WQ_RANGE);
	a = rc_args();
	a.dbr_off = UMEM_BYTES - 4;
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_QP_DBR_RANGE);
	a = rc_args();
	a.log_rq_stride = 6; /* 1 KiB receive WQEs > max_wqe_sz_rq */
	build_qp(in, &a);
	expect_create_fails(in, KR_PRM_BYTES(create_qp_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_QP_RQ_STRIDE);

	/* a DCI done right: zero-size RQ, no receive CQ needed */
	a = rc_args();
	a.st = KR_QPC_ST_DCI;
	a.rq_type = KR_QPC_RQ_TYPE_ZERO_SIZE_RQ;
	a.log_rq = 0;
	a.log_rq_stride = 0;
	a.cqn_rcv = 0;
	build_qp(in, &a);
	CHECK_OK(create(in, KR_PRM_BYTES(create_qp_in), &obj));
	CHECK_EQ(obj->id, qpn);
	CHECK_OK(E.ctx->ops->obj_destroy(obj));
	good_qp_still_works();
}

static void test_lengths_and_opcodes(void)
{
	struct qp_args a = rc_args();
	struct kr_devx_obj *obj = NULL;
	uint32_t cap_out[KR_PRM_BYTES(query_hca_cap_out) / 4];
	mbox_t in, out;
	void *cap;

	/* short inlen */
	build_qp(in, &a);
	CHECK_ERR(create(in, KR_PRM_BYTES(create_qp_in) - 4, &obj), -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_INP_LEN_ERR, SIM_SYND_INLEN);
	/* too short for a header: no firmware status at all */
	CHECK_ERR(create(in, 8, &obj), -EINVAL);
	CHECK(obj == NULL);

	/* short outlen: QUERY_QP wants the whole qpc back */
	memset(in, 0, sizeof(in));
	KR_PRM_SET(query_qp_in, in, opcode, KR_CMD_OP_QUERY_QP);
	KR_PRM_SET(query_qp_in, in, qpn, E.good_qp->id);
	memset(out, 0xa5, sizeof(out));
	CHECK_ERR(E.ctx->ops->obj_query(E.good_qp, in, KR_PRM_BYTES(query_qp_in), out, 16),
		  -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_OUTP_LEN_ERR, SIM_SYND_OUTLEN);
	CHECK_EQ(KR_PRM_GET(mbox_out, out, status), KR_CMD_STAT_BAD_OUTP_LEN_ERR);
	CHECK_EQ(be32toh(out[2]), 0);		/* the rest of out was zeroed */
	CHECK_EQ(be32toh(out[4]), 0xa5a5a5a5u); /* and nothing past outlen touched */

	/* QUERY_HCA_CAP: short out, bad op_mod, then the real caps */
	memset(in, 0, sizeof(in));
	KR_PRM_SET(query_hca_cap_in, in, opcode, KR_CMD_OP_QUERY_HCA_CAP);
	KR_PRM_SET(query_hca_cap_in, in, op_mod, KR_HCA_CAP_OPMOD_GET_CUR);
	CHECK_ERR(E.ctx->ops->general_cmd(E.ctx, in, 16, out, 64), -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_OUTP_LEN_ERR, SIM_SYND_OUTLEN);
	KR_PRM_SET(query_hca_cap_in, in, op_mod, (1 << 1) | 1); /* another capability type */
	CHECK_ERR(E.ctx->ops->general_cmd(E.ctx, in, 16, cap_out, sizeof(cap_out)), -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_CAP_TYPE);
	KR_PRM_SET(query_hca_cap_in, in, op_mod, KR_HCA_CAP_OPMOD_GET_CUR);
	CHECK_OK(E.ctx->ops->general_cmd(E.ctx, in, 16, cap_out, sizeof(cap_out)));
	cap = KR_PRM_ADDR(query_hca_cap_out, cap_out, capability);
	CHECK_EQ(KR_PRM_GET(cmd_hca_cap, cap, log_max_qp), SIM_LOG_MAX_QP);
	CHECK_EQ(KR_PRM_GET(cmd_hca_cap, cap, log_max_cq_sz), SIM_LOG_MAX_CQ_SZ);
	CHECK_EQ(KR_PRM_GET(cmd_hca_cap, cap, dct), 1);
	CHECK_EQ(KR_PRM_GET(cmd_hca_cap, cap, rc), 1);
	CHECK_EQ(KR_PRM_GET(cmd_hca_cap, cap, roce), 1);
	CHECK_EQ(KR_PRM_GET(cmd_hca_cap, cap, port_type), KR_PORT_TYPE_ETH);
	CHECK_EQ(KR_PRM_GET(cmd_hca_cap, cap, cqe_version), 1);
	CHECK_EQ(KR_PRM_GET(cmd_hca_cap, cap, max_wqe_sz_sq), SIM_MAX_WQE_SZ_SQ);
	/* op_mod on a command that takes none */
	memset(in, 0, sizeof(in));
	KR_PRM_SET(alloc_pd_in, in, opcode, KR_CMD_OP_ALLOC_PD);
	KR_PRM_SET(alloc_pd_in, in, op_mod, 1);
	expect_create_fails(in, 16, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_OP_MOD);

	/* unknown and unimplemented opcodes */
	memset(in, 0, sizeof(in));
	KR_PRM_SET(mbox_in, in, opcode, 0x7ff);
	CHECK_ERR(E.ctx->ops->general_cmd(E.ctx, in, 16, out, 16), -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_OP_ERR, SIM_SYND_BAD_OPCODE);
	CHECK_EQ(E.ctx->last_err.opcode, 0x7ff);
	build_transition(in, KR_CMD_OP_RTS2RTS_QP, E.good_qp->id);
	CHECK_ERR(E.ctx->ops->obj_modify(E.good_qp, in, KR_PRM_BYTES(rst2init_qp_in), out, 16),
		  -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_OP_ERR, SIM_SYND_UNSUPPORTED_OP);

	/* the DEVX gate: object commands only through obj_*, on the right object */
	build_qp(in, &a);
	CHECK_ERR(E.ctx->ops->general_cmd(E.ctx, in, KR_PRM_BYTES(create_qp_in), out, 16), -EINVAL);
	build_transition(in, KR_CMD_OP_2ERR_QP, E.good_qp->id + 1);
	CHECK_ERR(E.ctx->ops->obj_modify(E.good_qp, in, 16, out, 16), -EINVAL);
	build_transition(in, KR_CMD_OP_2ERR_QP, E.good_qp->id);
	CHECK_ERR(E.ctx->ops->obj_modify(E.cq_a, in, 16, out, 16), -EINVAL);
	CHECK_ERR(E.ctx->ops->obj_query(E.good_qp, in, 16, out, 16), -EINVAL);
	good_qp_still_works();
}

static void test_cq(void)
{
	uint32_t cqn = probe_cqn();
	struct kr_devx_obj *obj;
	struct kr_devx_obj unknown = {.ctx = E.ctx, .create_op = KR_CMD_OP_CREATE_CQ, .id = 500};
	mbox_t in;

	build_cq(in, SIM_LOG_MAX_CQ_SZ + 1, 0, E.umem->id);
	expect_create_fails(in, KR_PRM_BYTES(create_cq_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_CQ_SIZE);
	build_cq(in, 16, 0, E.umem->id); /* 4 MiB of CQEs in a 1 MiB umem */
	expect_create_fails(in, KR_PRM_BYTES(create_cq_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_CQ_RANGE);
	build_cq(in, 4, 0, E.umem->id);
	KR_PRM_SET(cqc, KR_PRM_ADDR(create_cq_in, in, cq_context), cqe_sz, 1); /* 128 B */
	expect_create_fails(in, KR_PRM_BYTES(create_cq_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_CQ_CQE_SZ);
	build_cq(in, 4, 0, E.umem->id);
	KR_PRM_SET(cqc, KR_PRM_ADDR(create_cq_in, in, cq_context), uar_page, 40);
	expect_create_fails(in, KR_PRM_BYTES(create_cq_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_UAR);
	build_cq(in, 4, 0, 99);
	expect_create_fails(in, KR_PRM_BYTES(create_cq_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_BUF_UMEM);

	/* a CQ in use cannot go, and keeps working */
	CHECK_ERR(E.ctx->ops->obj_destroy(E.cq_a), -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_CQ_BUSY);
	CHECK_EQ(E.ctx->last_err.opcode, KR_CMD_OP_DESTROY_CQ);
	good_qp_still_works();

	/* destroy of an unknown CQ */
	CHECK_ERR(E.ctx->ops->obj_destroy(&unknown), -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_CQ);
	obj = good_cq(4, 0x20000);
	CHECK_EQ(obj->id, cqn);

	/* QUERY_CQ: unknown CQ, reserved bit, then a fresh CQ's counters and size */
	{
		mbox_t out;
		void *cqc = KR_PRM_ADDR(query_cq_out, out, cq_context);

		memset(in, 0, sizeof(in));
		KR_PRM_SET(query_cq_in, in, opcode, KR_CMD_OP_QUERY_CQ);
		KR_PRM_SET(query_cq_in, in, cqn, 500);
		CHECK_ERR(E.ctx->ops->obj_query(&unknown, in, KR_PRM_BYTES(query_cq_in), out,
						KR_PRM_BYTES(query_cq_out)),
			  -EREMOTEIO);
		expect_status(KR_CMD_STAT_BAD_RES_ERR, SIM_SYND_NO_CQ);
		KR_PRM_SET(query_cq_in, in, cqn, obj->id);
		kr_prm_set(in, 0x60, 1, 1);
		CHECK_ERR(E.ctx->ops->obj_query(obj, in, KR_PRM_BYTES(query_cq_in), out,
						KR_PRM_BYTES(query_cq_out)),
			  -EREMOTEIO);
		expect_status(KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_RSVD_QUERY_CQ);
		kr_prm_set(in, 0x60, 1, 0);
		memset(out, 0xff, sizeof(out));
		CHECK_OK(E.ctx->ops->obj_query(obj, in, KR_PRM_BYTES(query_cq_in), out,
					       KR_PRM_BYTES(query_cq_out)));
		CHECK_EQ(KR_PRM_GET(cqc, cqc, log_cq_size), 4);
		CHECK_EQ(KR_PRM_GET(cqc, cqc, producer_counter), 0);
		CHECK_EQ(KR_PRM_GET(cqc, cqc, consumer_counter), 0);
	}
	CHECK_OK(E.ctx->ops->obj_destroy(obj));
}

static void test_umem_and_pd(void)
{
	struct kr_devx_umem *u = NULL;
	char byte;

	CHECK_ERR(E.ctx->ops->umem_dereg(E.umem), -EBUSY);
	CHECK_ERR(E.ctx->ops->umem_reg(E.ctx, NULL, 4096, 0, &u), -EINVAL);
	CHECK_ERR(E.ctx->ops->umem_reg(E.ctx, E.mem, 0, 0, &u), -EINVAL);
	/* any address is fine, even unaligned */
	CHECK_OK(E.ctx->ops->umem_reg(E.ctx, &byte, 1, 0, &u));
	CHECK_OK(E.ctx->ops->umem_dereg(u));

	/* PD in use */
	{
		struct kr_devx_obj *pd = E.pd;

		CHECK_ERR(E.ctx->ops->obj_destroy(pd), -EREMOTEIO);
		expect_status(KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_PD_BUSY);
	}
	good_qp_still_works();
}

static void test_mkey(void)
{
	const size_t mr_off = 0x80000, mr_len = 0x10000;
	uint64_t iova = (uint64_t)(uintptr_t)E.mem + mr_off;
	struct kr_devx_obj *mk = NULL;
	uint8_t *p;
	uint32_t key;
	mbox_t in;
	void *mkc = KR_PRM_ADDR(create_mkey_in, in, memory_key_mkey_entry);
	struct sim_dev *dev = sim_dev_of(E.ctx);

	memset(in, 0, KR_PRM_BYTES(create_mkey_in));
	KR_PRM_SET(create_mkey_in, in, opcode, KR_CMD_OP_CREATE_MKEY);
	KR_PRM_SET(create_mkey_in, in, mkey_umem_valid, 1);
	KR_PRM_SET(create_mkey_in, in, mkey_umem_id, E.umem->id);
	KR_PRM_SET64(create_mkey_in, in, mkey_umem_offset, mr_off);
	KR_PRM_SET(mkc, mkc, access_mode_1_0, KR_MKC_ACCESS_MODE_MTT);
	KR_PRM_SET(mkc, mkc, lr, 1);
	KR_PRM_SET(mkc, mkc, lw, 1);
	KR_PRM_SET(mkc, mkc, rr, 1);
	KR_PRM_SET(mkc, mkc, rw, 0);
	KR_PRM_SET(mkc, mkc, a, 0);
	KR_PRM_SET(mkc, mkc, qpn, 0xffffff);
	KR_PRM_SET(mkc, mkc, mkey_7_0, 0x5a);
	KR_PRM_SET(mkc, mkc, pd, E.pd->id);
	KR_PRM_SET64(mkc, mkc, start_addr, iova);
	/* 4 KiB entries, a table for the whole umem and more (sim_rejects_mkey_page_size) */
	KR_PRM_SET(mkc, mkc, log_page_size, 12);
	KR_PRM_SET(mkc, mkc, translations_octword_size, UMEM_BYTES >> 12);
	KR_PRM_SET64(mkc, mkc, len, UMEM_BYTES - mr_off + 1); /* one byte past the umem */
	expect_create_fails(in, KR_PRM_BYTES(create_mkey_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_MKEY_RANGE);
	KR_PRM_SET64(mkc, mkc, len, mr_len);
	KR_PRM_SET(mkc, mkc, access_mode_1_0, 0); /* PA mode */
	expect_create_fails(in, KR_PRM_BYTES(create_mkey_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_MKEY_ACCESS_MODE);
	KR_PRM_SET(mkc, mkc, access_mode_1_0, KR_MKC_ACCESS_MODE_MTT);
	KR_PRM_SET(mkc, mkc, pd, 77);
	expect_create_fails(in, KR_PRM_BYTES(create_mkey_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_PD);
	KR_PRM_SET(mkc, mkc, pd, E.pd->id);
	CHECK_OK(create(in, KR_PRM_BYTES(create_mkey_in), &mk));
	key = (mk->id << 8) | 0x5a;

	/* translation: rights, PD, variant, range */
	sim_lock(dev);
	p = sim_mem_translate(dev, key, E.pd->id, iova + 16, 32, KR_ACCESS_REMOTE_READ, true);
	CHECK(p == (uint8_t *)E.mem + mr_off + 16);
	CHECK(sim_mem_translate(dev, key, E.pd->id, iova, mr_len, 0, false) != NULL);
	CHECK(sim_mem_translate(dev, key, E.pd->id, iova, 8, KR_ACCESS_LOCAL_WRITE, false));
	CHECK(!sim_mem_translate(dev, key, E.pd->id, iova, 8, KR_ACCESS_REMOTE_WRITE, true));
	CHECK(!sim_mem_translate(dev, key, E.pd->id, iova, 8, KR_ACCESS_REMOTE_ATOMIC, true));
	CHECK(!sim_mem_translate(dev, key, E.pd->id + 1, iova, 8, KR_ACCESS_REMOTE_READ, true));
	CHECK(!sim_mem_translate(dev, key ^ 1, E.pd->id, iova, 8, KR_ACCESS_REMOTE_READ, true));
	CHECK(!sim_mem_translate(dev, key + 0x100, E.pd->id, iova, 8, 0, false));
	CHECK(!sim_mem_translate(dev, key, E.pd->id, iova - 1, 8, 0, false));
	CHECK(!sim_mem_translate(dev, key, E.pd->id, iova + mr_len - 7, 8, 0, false));
	CHECK(!sim_mem_translate(dev, key, E.pd->id, iova + 8, UINT64_MAX, 0, false));
	CHECK(!sim_mem_translate(dev, key, E.pd->id, UINT64_MAX - 3, 8, 0, false));
	CHECK(sim_umem_ptr(dev, E.umem->id, UMEM_BYTES - 8, 8) != NULL);
	CHECK(sim_umem_ptr(dev, E.umem->id, UMEM_BYTES - 8, 9) == NULL);
	CHECK(sim_umem_ptr(dev, E.umem->id, 8, UINT64_MAX) == NULL);
	sim_unlock(dev);

	CHECK_OK(E.ctx->ops->obj_destroy(mk));
	sim_lock(dev);
	CHECK(!sim_mem_translate(dev, key, E.pd->id, iova, 8, 0, false));
	sim_unlock(dev);
	good_qp_still_works();
}

static void build_rmp(uint32_t *in, uint32_t wq_type, uint64_t dbr_off)
{
	void *rmpc = KR_PRM_ADDR(create_rmp_in, in, ctx);
	void *wq = KR_PRM_ADDR(rmpc, rmpc, wq);

	memset(in, 0, KR_PRM_BYTES(create_rmp_in));
	KR_PRM_SET(create_rmp_in, in, opcode, KR_CMD_OP_CREATE_RMP);
	KR_PRM_SET(rmpc, rmpc, state, KR_RMPC_STATE_RDY);
	KR_PRM_SET(rmpc, rmpc, basic_cyclic_rcv_wqe, 1);
	KR_PRM_SET(wq, wq, wq_type, wq_type);
	KR_PRM_SET(wq, wq, pd, E.pd->id);
	KR_PRM_SET(wq, wq, log_wq_stride, 6);
	KR_PRM_SET(wq, wq, log_wq_sz, 6);
	KR_PRM_SET(wq, wq, wq_umem_valid, 1);
	KR_PRM_SET(wq, wq, wq_umem_id, E.umem->id);
	KR_PRM_SET(wq, wq, dbr_umem_valid, 1);
	KR_PRM_SET(wq, wq, dbr_umem_id, E.umem->id);
	KR_PRM_SET64(wq, wq, dbr_addr, dbr_off);
}

static void build_dct(uint32_t *in, uint32_t srqn)
{
	void *dctc = KR_PRM_ADDR(create_dct_in, in, dct_context_entry);

	memset(in, 0, KR_PRM_BYTES(create_dct_in));
	KR_PRM_SET(create_dct_in, in, opcode, KR_CMD_OP_CREATE_DCT);
	KR_PRM_SET(dctc, dctc, pd, E.pd->id);
	KR_PRM_SET(dctc, dctc, cqn, E.cq_b->id);
	KR_PRM_SET(dctc, dctc, srqn_xrqn, srqn);
	KR_PRM_SET(dctc, dctc, user_index, 9);
	KR_PRM_SET64(dctc, dctc, dc_access_key, 0x1122334455667788ull);
	KR_PRM_SET(dctc, dctc, rre, 1);
	KR_PRM_SET(dctc, dctc, mtu, KR_MTU_1K);
	KR_PRM_SET(dctc, dctc, port, 1);
}

static uint32_t dct_state(struct kr_devx_obj *dct, uint64_t *key)
{
	mbox_t in, out;
	void *dctc = KR_PRM_ADDR(query_dct_out, out, dct_context_entry);

	memset(in, 0, sizeof(in));
	KR_PRM_SET(query_dct_in, in, opcode, KR_CMD_OP_QUERY_DCT);
	KR_PRM_SET(query_dct_in, in, dctn, dct->id);
	CHECK_OK(E.ctx->ops->obj_query(dct, in, KR_PRM_BYTES(query_dct_in), out,
				       KR_PRM_BYTES(query_dct_out)));
	if (key)
		*key = KR_PRM_GET64(dctc, dctc, dc_access_key);
	return KR_PRM_GET(dctc, dctc, state);
}

static void test_srq_dct(void)
{
	struct kr_devx_obj *rmp = NULL, *dct = NULL;
	uint32_t rmpn;
	uint64_t key;
	mbox_t in, out;

	build_rmp(in, KR_WQ_TYPE_LINKED_LIST, new_dbr());
	expect_create_fails(in, KR_PRM_BYTES(create_rmp_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_RMP_NOT_CYCLIC);
	build_rmp(in, KR_WQ_TYPE_CYCLIC, new_dbr());
	KR_PRM_SET(rmpc, KR_PRM_ADDR(create_rmp_in, in, ctx), basic_cyclic_rcv_wqe, 0);
	expect_create_fails(in, KR_PRM_BYTES(create_rmp_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_RMP_NOT_BASIC);
	build_rmp(in, KR_WQ_TYPE_CYCLIC, new_dbr());
	CHECK_OK(create(in, KR_PRM_BYTES(create_rmp_in), &rmp));
	rmpn = rmp->id;

	/* DCT naming an SRQ that does not exist */
	build_dct(in, rmpn + 1);
	expect_create_fails(in, KR_PRM_BYTES(create_dct_in), KR_CMD_STAT_BAD_RES_ERR,
			    SIM_SYND_NO_SRQ);
	build_dct(in, rmpn);
	KR_PRM_SET(dctc, KR_PRM_ADDR(create_dct_in, in, dct_context_entry), port, 2);
	expect_create_fails(in, KR_PRM_BYTES(create_dct_in), KR_CMD_STAT_BAD_PARAM_ERR,
			    SIM_SYND_DCT_PORT);
	build_dct(in, rmpn);
	CHECK_OK(create(in, KR_PRM_BYTES(create_dct_in), &dct));
	CHECK_EQ(dct->id, SIM_DCTN_BASE);
	CHECK_EQ(dct_state(dct, &key), KR_DCTC_STATE_ACTIVE);
	CHECK(key == 0x1122334455667788ull);

	/* SRQ in use by the DCT */
	CHECK_ERR(E.ctx->ops->obj_destroy(rmp), -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_SRQ_BUSY);

	/* drain: ACTIVE -> DRAINED once */
	memset(in, 0, sizeof(in));
	KR_PRM_SET(drain_dct_in, in, opcode, KR_CMD_OP_DRAIN_DCT);
	KR_PRM_SET(drain_dct_in, in, dctn, dct->id);
	CHECK_OK(E.ctx->ops->obj_modify(dct, in, 16, out, 16));
	CHECK_EQ(dct_state(dct, NULL), KR_DCTC_STATE_DRAINED);
	CHECK_ERR(E.ctx->ops->obj_modify(dct, in, 16, out, 16), -EREMOTEIO);
	expect_status(KR_CMD_STAT_BAD_RES_STATE_ERR, SIM_SYND_DCT_NOT_ACTIVE);

	/* QUERY_RMP */
	memset(in, 0, sizeof(in));
	KR_PRM_SET(query_rmp_in, in, opcode, KR_CMD_OP_QUERY_RMP);
	KR_PRM_SET(query_rmp_in, in, rmpn, rmpn);
	{
		uint32_t rout[KR_PRM_BYTES(query_rmp_out) / 4];
		void *rmpc = KR_PRM_ADDR(query_rmp_out, rout, rmp_context);

		CHECK_OK(E.ctx->ops->obj_query(rmp, in, 16, rout, sizeof(rout)));
		CHECK_EQ(KR_PRM_GET(rmpc, rmpc, state), KR_RMPC_STATE_RDY);
		CHECK_EQ(KR_PRM_GET(wq, KR_PRM_ADDR(rmpc, rmpc, wq), log_wq_sz), 6);
	}

	CHECK_OK(E.ctx->ops->obj_destroy(dct));
	CHECK_OK(E.ctx->ops->obj_destroy(rmp));
	good_qp_still_works();
}

static void test_device(void)
{
	struct kr_devx_ctx *dup = NULL;
	struct kr_devx_dev_info info[4];
	uint8_t gid[16], want[16];
	int n;

	CHECK_ERR(sim_open("h3-bad-input", &dup), -EEXIST);
	CHECK_ERR(sim_open("", &dup), -EINVAL);
	struct kr_devx_gid_entry e;
	struct kr_devx_port p;

	CHECK_OK(E.ctx->ops->query_gid_entry(E.ctx, 1, 3, &e));
	memcpy(gid, e.gid, 16);
	CHECK_EQ(e.type, KR_GID_TYPE_ROCE_V2);
	/* the port a context sends from: the RoCE v2 IPv4 entry, or a forced one */
	CHECK_OK(kr_devx_caps_query(E.ctx, &E.ctx->caps));
	CHECK_EQ(E.ctx->caps.gid_table_len, 8);
	CHECK_OK(kr_devx_port_select(E.ctx, 1, -1, &p));
	CHECK_EQ(p.gid_index, 3);
	CHECK(!memcmp(p.addr.gid, gid, 16) && !memcmp(p.addr.mac, e.mac, 6) && p.roce);
	CHECK_OK(kr_devx_port_select(E.ctx, 1, 0, &p)); /* forced: RoCE v1 link-local, warned */
	CHECK_EQ(p.gid_type, KR_GID_TYPE_ROCE_V1);
	CHECK_EQ(p.addr.gid[0], 0xfe);
	CHECK_ERR(kr_devx_port_select(E.ctx, 1, 5, &p), -EINVAL); /* an empty entry */
	CHECK_ERR(kr_devx_port_select(E.ctx, 1, 300, &p), -EINVAL); /* beyond the table */
	sim_gid_of_name("h3-bad-input", want);
	CHECK(!memcmp(gid, want, 16));
	CHECK_EQ(gid[10], 0xff);
	CHECK_EQ(gid[12], 127);
	CHECK(gid[13] >= 1 && gid[13] <= 254 && gid[15] >= 1 && gid[15] <= 254);
	CHECK_ERR(E.ctx->ops->query_gid_entry(E.ctx, 1, 4, &e), -ENODATA); /* empty */
	CHECK_ERR(E.ctx->ops->query_gid_entry(E.ctx, 1, 8, &e), -EINVAL);	 /* beyond */
	CHECK_ERR(E.ctx->ops->query_gid_entry(E.ctx, 2, 0, &e), -EINVAL);	 /* no port 2 */
	CHECK(sim_dev_lookup_gid(want) == sim_dev_of(E.ctx));
	n = sim_list(info, 4);
	CHECK(n >= 1);
	CHECK(!strcmp(info[0].name, "sim:h3-bad-input") && info[0].backend == &kr_sim_backend);

	/* the syndrome table: distinct values, every one named */
	{
		static const uint32_t all[] = {
#define X(n, v, w) v,
		    SIM_SYNDROMES(X)
#undef X
		};
		size_t cnt = sizeof(all) / sizeof(all[0]);

		for (size_t i = 0; i < cnt; i++) {
			CHECK(sim_syndrome_name(all[i]) != NULL);
			CHECK(sim_syndrome_str(all[i]) != NULL);
			for (size_t j = i + 1; j < cnt; j++)
				CHECK(all[i] != all[j]);
		}
		CHECK(!strcmp(sim_syndrome_name(SIM_SYND_NO_PD), "SIM_SYND_NO_PD"));
		CHECK(sim_syndrome_name(0x12345678) == NULL);
	}
}

int main(void)
{
	mbox_t in;

	CHECK_OK(kr_devx_backend_add(&kr_sim_backend)); /* kr_devx_list lists its hosts */
	CHECK_OK(sim_open("h3-bad-input", &E.ctx));
	CHECK(sim_is_host(E.ctx));
	E.mem = aligned_alloc(4096, UMEM_BYTES);
	CHECK(E.mem);
	memset(E.mem, 0, UMEM_BYTES);
	CHECK_OK(E.ctx->ops->umem_reg(E.ctx, E.mem, UMEM_BYTES, 0, &E.umem));
	CHECK_OK(E.ctx->ops->alloc_uar(E.ctx, 0, &E.uar));
	CHECK(E.uar->reg_addr == (uint8_t *)E.uar->base_addr + SIM_UAR_DB_OFFSET);
	memset(in, 0, sizeof(in));
	KR_PRM_SET(alloc_pd_in, in, opcode, KR_CMD_OP_ALLOC_PD);
	CHECK_OK(create(in, KR_PRM_BYTES(alloc_pd_in), &E.pd));
	CHECK_EQ(E.pd->id, 1);
	E.cq_a = good_cq(6, 0);
	E.cq_b = good_cq(6, 0x1000);
	E.good_qp = good_qp();
	CHECK_EQ(E.good_qp->id, SIM_QPN_BASE);
	good_qp_still_works();

	test_illegal_transitions();
	test_reserved_bits();
	test_defined_bits_are_not_reserved();
	test_unknown_objects();
	test_lengths_and_opcodes();
	test_cq();
	test_umem_and_pd();
	test_mkey();
	test_srq_dct();
	test_device();

	/* teardown in dependency order; each step must now succeed */
	CHECK_OK(E.ctx->ops->obj_destroy(E.good_qp));
	CHECK_OK(E.ctx->ops->obj_destroy(E.cq_a));
	CHECK_OK(E.ctx->ops->obj_destroy(E.cq_b));
	CHECK_OK(E.ctx->ops->obj_destroy(E.pd));
	E.ctx->ops->free_uar(E.uar);
	CHECK_OK(E.ctx->ops->umem_dereg(E.umem));
	E.ctx->ops->close(E.ctx);
	free(E.mem);
	KR_PASS("sim_cmd_bad_input");
}
