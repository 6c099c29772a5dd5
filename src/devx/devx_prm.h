/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PRM mailbox access: big-endian bit fields addressed by the offsets in
 * devx_prm_fields.h, plus the command opcodes and enum values krcore uses.
 * Values here are facts of the PRM; tests/devx/test_devx_prm_layout.c checks
 * them against the kernel's mlx5_ifc.h.
 */
#ifndef KR_DEVX_PRM_H
#define KR_DEVX_PRM_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

/* Offsets and widths in bits, as enum constants KR_PRM_OFF_<s>__<f>. */
#define KR_PRM(s, f, off, w) KR_PRM_OFF_##s##__##f = (off), KR_PRM_W_##s##__##f = (w),
#define KR_PRM_AS(s, f, off, w, k) KR_PRM(s, f, off, w)
#define KR_PRM_DOC(s, f, off, w, src) KR_PRM(s, f, off, w)
#define KR_PRM_SIZE(s, bits) KR_PRM_BITS_##s = (bits),
enum kr_prm_layout {
#include "devx/devx_prm_fields.h"
};
#undef KR_PRM
#undef KR_PRM_AS
#undef KR_PRM_DOC
#undef KR_PRM_SIZE

/* Bytes of a mailbox or context, e.g. KR_PRM_BYTES(create_qp_in). */
#define KR_PRM_BYTES(s) (KR_PRM_BITS_##s / 8)
#define KR_PRM_OFF(s, f) KR_PRM_OFF_##s##__##f
#define KR_PRM_W(s, f) KR_PRM_W_##s##__##f

static inline void kr_prm_set(void *p, unsigned int off, unsigned int w, uint32_t v)
{
	uint32_t *dw = (uint32_t *)p + off / 32;
	unsigned int shift = 32 - w - (off % 32);
	uint32_t mask = (w == 32) ? ~0u : (((1u << w) - 1) << shift);
	uint32_t cur = be32toh(*dw);

	*dw = htobe32((cur & ~mask) | ((v << shift) & mask));
}

static inline uint32_t kr_prm_get(const void *p, unsigned int off, unsigned int w)
{
	uint32_t cur = be32toh(*((const uint32_t *)p + off / 32));
	unsigned int shift = 32 - w - (off % 32);

	return (w == 32) ? cur : (cur >> shift) & ((1u << w) - 1);
}

static inline void kr_prm_set64(void *p, unsigned int off, uint64_t v)
{
	uint64_t be = htobe64(v);

	memcpy((uint8_t *)p + off / 8, &be, sizeof(be));
}

static inline uint64_t kr_prm_get64(const void *p, unsigned int off)
{
	uint64_t be;

	memcpy(&be, (const uint8_t *)p + off / 8, sizeof(be));
	return be64toh(be);
}

#define KR_PRM_SET(s, p, f, v)                                                                     \
	do {                                                                                       \
		_Static_assert(KR_PRM_W(s, f) <= 32, #s "." #f " is wider than 32 bits");          \
		kr_prm_set((p), KR_PRM_OFF(s, f), KR_PRM_W(s, f), (uint32_t)(v));                  \
	} while (0)
#define KR_PRM_GET(s, p, f) kr_prm_get((p), KR_PRM_OFF(s, f), KR_PRM_W(s, f))
#define KR_PRM_SET64(s, p, f, v)                                                                   \
	do {                                                                                       \
		_Static_assert(KR_PRM_W(s, f) == 64, #s "." #f " is not 64 bits");                 \
		kr_prm_set64((p), KR_PRM_OFF(s, f), (v));                                          \
	} while (0)
#define KR_PRM_GET64(s, p, f) kr_prm_get64((p), KR_PRM_OFF(s, f))
/* Address of a byte-aligned sub-structure or array field (qpc, ads, rgid_rip). */
#define KR_PRM_ADDR(s, p, f) ((void *)((uint8_t *)(p) + KR_PRM_OFF(s, f) / 8))

/* ads.rmac_47_32 and ads.rmac_31_0 are six consecutive bytes: the MAC in wire order. */
_Static_assert(KR_PRM_OFF(ads, rmac_31_0) == KR_PRM_OFF(ads, rmac_47_32) + 16 &&
		   KR_PRM_OFF(ads, rmac_47_32) % 8 == 0,
	       "ads.rmac is not one byte string");
#define KR_PRM_ADS_RMAC(ads) KR_PRM_ADDR(ads, ads, rmac_47_32)

/* Command opcodes (PRM "Command Reference"). */
enum kr_prm_cmd_op {
	KR_CMD_OP_QUERY_HCA_CAP = 0x100,
	KR_CMD_OP_CREATE_MKEY = 0x200,
	KR_CMD_OP_QUERY_MKEY = 0x201,
	KR_CMD_OP_DESTROY_MKEY = 0x202,
	KR_CMD_OP_CREATE_CQ = 0x400,
	KR_CMD_OP_DESTROY_CQ = 0x401,
	KR_CMD_OP_QUERY_CQ = 0x402,
	KR_CMD_OP_CREATE_QP = 0x500,
	KR_CMD_OP_DESTROY_QP = 0x501,
	KR_CMD_OP_RST2INIT_QP = 0x502,
	KR_CMD_OP_INIT2RTR_QP = 0x503,
	KR_CMD_OP_RTR2RTS_QP = 0x504,
	KR_CMD_OP_RTS2RTS_QP = 0x505,
	KR_CMD_OP_2ERR_QP = 0x507,
	KR_CMD_OP_2RST_QP = 0x50a,
	KR_CMD_OP_QUERY_QP = 0x50b,
	KR_CMD_OP_CREATE_DCT = 0x710,
	KR_CMD_OP_DESTROY_DCT = 0x711,
	KR_CMD_OP_DRAIN_DCT = 0x712,
	KR_CMD_OP_QUERY_DCT = 0x713,
	KR_CMD_OP_ALLOC_PD = 0x800,
	KR_CMD_OP_DEALLOC_PD = 0x801,
	KR_CMD_OP_ALLOC_UAR = 0x802,
	KR_CMD_OP_DEALLOC_UAR = 0x803,
	KR_CMD_OP_CREATE_RMP = 0x90c,
	KR_CMD_OP_DESTROY_RMP = 0x90e,
	KR_CMD_OP_QUERY_RMP = 0x90f,
};

/* Command status (mbox_out.status). */
enum kr_prm_cmd_status {
	KR_CMD_STAT_OK = 0x0,
	KR_CMD_STAT_INT_ERR = 0x1,
	KR_CMD_STAT_BAD_OP_ERR = 0x2,
	KR_CMD_STAT_BAD_PARAM_ERR = 0x3,
	KR_CMD_STAT_BAD_SYS_STATE_ERR = 0x4,
	KR_CMD_STAT_BAD_RES_ERR = 0x5,
	KR_CMD_STAT_RES_BUSY = 0x6,
	KR_CMD_STAT_LIM_ERR = 0x8,
	KR_CMD_STAT_BAD_RES_STATE_ERR = 0x9,
	KR_CMD_STAT_IX_ERR = 0xa,
	KR_CMD_STAT_NO_RES_ERR = 0xf,
	KR_CMD_STAT_BAD_INP_LEN_ERR = 0x50,
	KR_CMD_STAT_BAD_OUTP_LEN_ERR = 0x51,
};

/* QUERY_HCA_CAP op_mod: (capability type << 1) | current. */
enum {
	KR_HCA_CAP_GENERAL = 0x0,
	KR_HCA_CAP_ROCE = 0x4,
	KR_HCA_CAP_OPMOD_GET_MAX = 0,
	KR_HCA_CAP_OPMOD_GET_CUR = 1,
};

enum kr_prm_qp_state {
	KR_QPC_STATE_RST = 0x0,
	KR_QPC_STATE_INIT = 0x1,
	KR_QPC_STATE_RTR = 0x2,
	KR_QPC_STATE_RTS = 0x3,
	KR_QPC_STATE_SQER = 0x4,
	KR_QPC_STATE_ERR = 0x6,
};

enum {
	KR_QPC_ST_RC = 0x0,
	KR_QPC_ST_DCI = 0x5,
	KR_QPC_PM_STATE_MIGRATED = 0x3,
	KR_QPC_RQ_TYPE_REGULAR = 0x0,
	KR_QPC_RQ_TYPE_SRQ_RMP_XRC = 0x1,
	KR_QPC_RQ_TYPE_ZERO_SIZE_RQ = 0x3,
	KR_QPC_ATOMIC_MODE_IB_SPEC = 0x1,
	KR_QPC_ATOMIC_MODE_UP_TO_8B = 0x3,
	KR_MTU_256 = 0x1,
	KR_MTU_512 = 0x2,
	KR_MTU_1K = 0x3,
	KR_MTU_2K = 0x4,
	KR_MTU_4K = 0x5,
	KR_DCTC_STATE_ACTIVE = 0x0,
	KR_DCTC_STATE_DRAINING = 0x1,
	KR_DCTC_STATE_DRAINED = 0x2,
	KR_RMPC_STATE_RDY = 0x1,
	KR_RMPC_STATE_ERR = 0x3,
	KR_WQ_TYPE_LINKED_LIST = 0x0,
	KR_WQ_TYPE_CYCLIC = 0x1,
	KR_MKC_ACCESS_MODE_MTT = 0x1,
	KR_CQE_SIZE_64 = 0x0,
	KR_PORT_TYPE_IB = 0x0,
	KR_PORT_TYPE_ETH = 0x1,
	/* cap.sq_ts_format / rq_ts_format: what the device can stamp */
	KR_TS_CAP_FREE_RUNNING = 0x0,
	KR_TS_CAP_REAL_TIME = 0x1,
	KR_TS_CAP_FREE_RUNNING_AND_REAL_TIME = 0x2,
	/* qpc.ts_format */
	KR_TS_FORMAT_FREE_RUNNING = 0x0,
	KR_TS_FORMAT_DEFAULT = 0x1,
	KR_TS_FORMAT_REAL_TIME = 0x2,
};

/* Optional-parameter bits of the modify commands (kernel include/linux/mlx5/qp.h). */
enum {
	KR_QP_OPTPAR_RAE = 1u << 2,
};

#endif /* KR_DEVX_PRM_H */
