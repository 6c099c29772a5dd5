/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sim firmware's front door: one command mailbox in, status and syndrome
 * out, checked in the order firmware checks them:
 *
 *   1. the opcode names a command the firmware knows     (BAD_OP)
 *   2. outlen holds that command's output                (BAD_OUTP_LEN)
 *   3. inlen holds that command's input                  (BAD_INP_LEN)
 *   4. op_mod is one the command accepts                 (BAD_PARAM)
 *   5. no reserved bit is set                            (BAD_PARAM)
 *   6. the handler validates its fields and objects, and only then changes
 *      anything                                          (per handler)
 *
 * Reserved bits: every field krcore's layout table (devx_prm_fields.h) gives
 * the command's input struct is "defined", recursing into the contexts it
 * embeds (qpc, ads, cqc, dctc, mkc, rmpc, wq); the generic header (opcode,
 * uid, op_mod) is defined for every command. Any other set bit, and any set
 * bit past the struct's end, is reserved. Fields the kernel knows but the table
 * lacks therefore count as reserved: strict on purpose, krcore only writes
 * fields of the table. The masks are built once, on first use.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/kr_log.h"
#include "sim/sim.h"

#define SIM_CMD_IN_MAX 0x110 /* bytes of the largest input mailbox (0x880 bits) */
_Static_assert(KR_PRM_BYTES(create_qp_in) <= SIM_CMD_IN_MAX &&
		   KR_PRM_BYTES(create_cq_in) <= SIM_CMD_IN_MAX &&
		   KR_PRM_BYTES(create_rmp_in) <= SIM_CMD_IN_MAX &&
		   KR_PRM_BYTES(create_mkey_in) <= SIM_CMD_IN_MAX &&
		   KR_PRM_BYTES(create_dct_in) <= SIM_CMD_IN_MAX &&
		   KR_PRM_BYTES(rst2init_qp_in) <= SIM_CMD_IN_MAX &&
		   KR_PRM_BYTES(init2rtr_qp_in) <= SIM_CMD_IN_MAX &&
		   KR_PRM_BYTES(rtr2rts_qp_in) <= SIM_CMD_IN_MAX,
	       "an input mailbox is larger than the reserved-bit masks");

struct sim_cmd_desc {
	uint16_t opcode;
	const char *in_struct; /* layout name; NULL: the sim does not run it */
	uint16_t in_bytes;
	uint16_t out_bytes;
	uint16_t max_op_mod;
	uint32_t rsvd_synd;
	uint8_t (*exec)(struct sim_cmd *c);
};

#define SIM_CMD(op, in, out, opmod, fn)                                                            \
	{                                                                                          \
		KR_CMD_OP_##op, #in, KR_PRM_BYTES(in), KR_PRM_BYTES(out), (opmod),                 \
		    SIM_SYND_RSVD_##op, (fn)                                                       \
	}
#define SIM_CMD_UNSUPPORTED(op)                                                                    \
	{                                                                                          \
		KR_CMD_OP_##op, NULL, 0, 0, 0, 0, NULL                                             \
	}

static const struct sim_cmd_desc sim_cmds[] = {
    SIM_CMD(QUERY_HCA_CAP, query_hca_cap_in, query_hca_cap_out, 0xffff, sim_cmd_query_hca_cap),
    SIM_CMD(CREATE_MKEY, create_mkey_in, create_mkey_out, 0, sim_cmd_create_mkey),
    SIM_CMD_UNSUPPORTED(QUERY_MKEY),
    SIM_CMD(DESTROY_MKEY, destroy_mkey_in, mbox_out, 0, sim_cmd_destroy_mkey),
    SIM_CMD(CREATE_CQ, create_cq_in, create_cq_out, 0, sim_cmd_create_cq),
    SIM_CMD(DESTROY_CQ, destroy_cq_in, mbox_out, 0, sim_cmd_destroy_cq),
    SIM_CMD(QUERY_CQ, query_cq_in, query_cq_out, 0, sim_cmd_query_cq),
    SIM_CMD(CREATE_QP, create_qp_in, create_qp_out, 0, sim_cmd_create_qp),
    SIM_CMD(DESTROY_QP, destroy_qp_in, mbox_out, 0, sim_cmd_destroy_qp),
    SIM_CMD(RST2INIT_QP, rst2init_qp_in, rst2init_qp_out, 0, sim_cmd_modify_qp),
    SIM_CMD(INIT2RTR_QP, init2rtr_qp_in, init2rtr_qp_out, 0, sim_cmd_modify_qp),
    SIM_CMD(RTR2RTS_QP, rtr2rts_qp_in, rtr2rts_qp_out, 0, sim_cmd_modify_qp),
    SIM_CMD_UNSUPPORTED(RTS2RTS_QP),
    SIM_CMD(2ERR_QP, qp_2err_in, qp_2err_out, 0, sim_cmd_modify_qp),
    SIM_CMD(2RST_QP, qp_2rst_in, qp_2rst_out, 0, sim_cmd_modify_qp),
    SIM_CMD(QUERY_QP, query_qp_in, query_qp_out, 0, sim_cmd_query_qp),
    SIM_CMD(CREATE_DCT, create_dct_in, create_dct_out, 0, sim_cmd_create_dct),
    SIM_CMD(DESTROY_DCT, destroy_dct_in, mbox_out, 0, sim_cmd_destroy_dct),
    SIM_CMD(DRAIN_DCT, drain_dct_in, drain_dct_out, 0, sim_cmd_drain_dct),
    SIM_CMD(QUERY_DCT, query_dct_in, query_dct_out, 0, sim_cmd_query_dct),
    SIM_CMD(ALLOC_PD, alloc_pd_in, alloc_pd_out, 0, sim_cmd_alloc_pd),
    SIM_CMD(DEALLOC_PD, dealloc_pd_in, mbox_out, 0, sim_cmd_dealloc_pd),
    SIM_CMD_UNSUPPORTED(ALLOC_UAR), /* UARs come from ops->alloc_uar */
    SIM_CMD_UNSUPPORTED(DEALLOC_UAR),
    SIM_CMD(CREATE_RMP, create_rmp_in, create_rmp_out, 0, sim_cmd_create_rmp),
    SIM_CMD(DESTROY_RMP, destroy_rmp_in, mbox_out, 0, sim_cmd_destroy_rmp),
    SIM_CMD(QUERY_RMP, query_rmp_in, query_rmp_out, 0, sim_cmd_query_rmp),
};

#define SIM_NCMDS (sizeof(sim_cmds) / sizeof(sim_cmds[0]))

/* ---- syndromes ---- */

static const struct {
	uint32_t value;
	const char *name;
	const char *what;
} sim_syndromes[] = {
#define SIM_SYND_ROW_(n, v, w) {(v), #n, (w)},
    SIM_SYNDROMES(SIM_SYND_ROW_)
#undef SIM_SYND_ROW_
};

/* sim_syndrome_name() - "SIM_SYND_NO_PD" for a sim syndrome, NULL if unknown. */
const char *sim_syndrome_name(uint32_t syndrome)
{
	for (size_t i = 0; i < sizeof(sim_syndromes) / sizeof(sim_syndromes[0]); i++)
		if (sim_syndromes[i].value == syndrome)
			return sim_syndromes[i].name;
	return NULL;
}

/* sim_syndrome_str() - what a sim syndrome means, NULL if unknown. */
const char *sim_syndrome_str(uint32_t syndrome)
{
	for (size_t i = 0; i < sizeof(sim_syndromes) / sizeof(sim_syndromes[0]); i++)
		if (sim_syndromes[i].value == syndrome)
			return sim_syndromes[i].what;
	return NULL;
}

/* ---- reserved-bit masks from the layout table ---- */

struct sim_prm_field {
	const char *s;
	const char *f; /* NULL: a KR_PRM_SIZE line, off holds the size in bits */
	uint32_t off;
	uint32_t w;
};

static const struct sim_prm_field sim_prm_fields[] = {
#define KR_PRM(s, f, off, w)	      {#s, #f, (off), (w)},
#define KR_PRM_AS(s, f, off, w, k)    KR_PRM(s, f, off, w)
#define KR_PRM_DOC(s, f, off, w, src) KR_PRM(s, f, off, w)
#define KR_PRM_SIZE(s, bits)	      {#s, NULL, (bits), 0},
#include "devx/devx_prm_fields.h"
#undef KR_PRM
#undef KR_PRM_AS
#undef KR_PRM_DOC
#undef KR_PRM_SIZE
};

/* Fields that are whole contexts: their bits are defined by the context's own fields. */
static const struct {
	const char *s;
	const char *f;
	const char *sub;
} sim_prm_subs[] = {
    {"create_qp_in", "qpc", "qpc"},
    {"rst2init_qp_in", "qpc", "qpc"},
    {"init2rtr_qp_in", "qpc", "qpc"},
    {"rtr2rts_qp_in", "qpc", "qpc"},
    {"qpc", "primary_address_path", "ads"},
    {"create_cq_in", "cq_context", "cqc"},
    {"create_dct_in", "dct_context_entry", "dctc"},
    {"create_mkey_in", "memory_key_mkey_entry", "mkc"},
    {"create_rmp_in", "ctx", "rmpc"},
    {"rmpc", "wq", "wq"},
};

static uint8_t sim_cmd_masks[SIM_NCMDS][SIM_CMD_IN_MAX];
static pthread_once_t sim_cmd_masks_once = PTHREAD_ONCE_INIT;

static const char *sim_prm_sub_of(const char *s, const char *f)
{
	for (size_t i = 0; i < sizeof(sim_prm_subs) / sizeof(sim_prm_subs[0]); i++)
		if (!strcmp(sim_prm_subs[i].s, s) && !strcmp(sim_prm_subs[i].f, f))
			return sim_prm_subs[i].sub;
	return NULL;
}

static void sim_mask_set_bits(uint8_t *mask, uint32_t off, uint32_t w)
{
	/* PRM bit n is bit (7 - n % 8) of byte n / 8: big-endian dwords, MSB first. */
	for (uint32_t b = off; b < off + w && b / 8 < SIM_CMD_IN_MAX; b++)
		mask[b / 8] |= (uint8_t)(0x80u >> (b % 8));
}

static void sim_mask_add(uint8_t *mask, const char *s, uint32_t base, int depth)
{
	if (depth > 4)
		return;
	for (size_t i = 0; i < sizeof(sim_prm_fields) / sizeof(sim_prm_fields[0]); i++) {
		const struct sim_prm_field *fl = &sim_prm_fields[i];
		const char *sub;

		if (!fl->f || strcmp(fl->s, s))
			continue;
		sub = sim_prm_sub_of(s, fl->f);
		if (sub)
			sim_mask_add(mask, sub, base + fl->off, depth + 1);
		else
			sim_mask_set_bits(mask, base + fl->off, fl->w);
	}
}

static void sim_cmd_masks_build(void)
{
	for (size_t i = 0; i < SIM_NCMDS; i++) {
		if (!sim_cmds[i].in_struct)
			continue;
		sim_mask_add(sim_cmd_masks[i], "mbox_in", 0, 0);
		sim_mask_add(sim_cmd_masks[i], sim_cmds[i].in_struct, 0, 0);
	}
}

/* Bit offset of the first reserved bit set in in[0, inlen), or -1. */
static long sim_cmd_first_reserved(size_t cmd, const uint8_t *in, size_t inlen)
{
	const struct sim_cmd_desc *d = &sim_cmds[cmd];

	for (size_t i = 0; i < inlen; i++) {
		uint8_t allowed = i < d->in_bytes ? sim_cmd_masks[cmd][i] : 0;
		uint8_t bad = in[i] & (uint8_t)~allowed;

		if (bad)
			return (long)(i * 8 + (size_t)(__builtin_clz(bad) - 24));
	}
	return -1;
}

/* ---- execution ---- */

static const struct sim_cmd_desc *sim_cmd_find(uint16_t opcode, size_t *idx)
{
	for (size_t i = 0; i < SIM_NCMDS; i++) {
		if (sim_cmds[i].opcode == opcode) {
			*idx = i;
			return &sim_cmds[i];
		}
	}
	return NULL;
}

static uint8_t sim_cmd_check_and_run(struct sim_cmd *c, size_t inlen, size_t outlen)
{
	uint16_t opcode = (uint16_t)KR_PRM_GET(mbox_in, c->in, opcode);
	uint16_t op_mod = (uint16_t)KR_PRM_GET(mbox_in, c->in, op_mod);
	const struct sim_cmd_desc *d;
	size_t idx = 0;
	long bit;

	d = sim_cmd_find(opcode, &idx);
	if (!d)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_OP_ERR, SIM_SYND_BAD_OPCODE);
	if (!d->exec)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_OP_ERR, SIM_SYND_UNSUPPORTED_OP);
	if (outlen < d->out_bytes)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_OUTP_LEN_ERR, SIM_SYND_OUTLEN);
	if (inlen < d->in_bytes)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_INP_LEN_ERR, SIM_SYND_INLEN);
	if (op_mod > d->max_op_mod)
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, SIM_SYND_OP_MOD);

	pthread_once(&sim_cmd_masks_once, sim_cmd_masks_build);
	bit = sim_cmd_first_reserved(idx, c->in, inlen);
	if (bit >= 0) {
		KR_INFO("sim", "%s: opcode 0x%x: reserved bit 0x%lx set in %s", c->dev->ctx.name,
			opcode, (unsigned long)bit, d->in_struct);
		return sim_cmd_fail(c, KR_CMD_STAT_BAD_PARAM_ERR, d->rsvd_synd);
	}
	return d->exec(c);
}

/*
 * sim_cmd_exec() - run one command mailbox as firmware would; sh->lock held.
 * Returns 0 (status OK), -EREMOTEIO (bad status in out; nothing changed), or
 * -EINVAL (in or out cannot hold a command header; out untouched).
 */
int sim_cmd_exec(struct sim_dev *dev, const void *in, size_t inlen, void *out, size_t outlen,
		 uint32_t *obj_id)
{
	struct sim_cmd c = {.dev = dev, .in = in, .out = out};
	uint8_t status;

	if (!in || !out || inlen < KR_PRM_BYTES(mbox_in) || outlen < KR_PRM_BYTES(mbox_out))
		return -EINVAL;

	/* the firmware's time for the command, sh->lock released meanwhile */
	sim_cost_charge_locked(dev, sim_cost_cmd_of((uint16_t)KR_PRM_GET(mbox_in, in, opcode)));
	memset(out, 0, outlen);
	status = sim_cmd_check_and_run(&c, inlen, outlen);
	KR_PRM_SET(mbox_out, out, status, status);
	if (status != KR_CMD_STAT_OK) {
		const char *name = sim_syndrome_name(c.syndrome);

		KR_PRM_SET(mbox_out, out, syndrome, c.syndrome);
		KR_INFO("sim", "%s: opcode 0x%x failed: status 0x%x syndrome 0x%08x (%s: %s)",
			dev->ctx.name, KR_PRM_GET(mbox_in, in, opcode), status, c.syndrome,
			name ? name : "?", name ? sim_syndrome_str(c.syndrome) : "?");
		return -EREMOTEIO;
	}
	if (obj_id)
		*obj_id = c.obj_id;
	return 0;
}
