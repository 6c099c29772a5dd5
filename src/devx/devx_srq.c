/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues as RMPs over a cyclic WQ (rmpc.basic_cyclic_rcv_wqe):
 * receive WQEs are plain data segments, consumed strictly in order, like an
 * RQ's. Buffer (one umem, 4096-byte aligned): nwqe WQEs, then a 64-byte
 * doorbell record area whose first word is the receive counter.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_math.h"
#include "common/kr_log.h"

#define KR_DBREC_BYTES	     64u
#define KR_SRQ_MIN_STRIDE    16u /* one data segment */
#define KR_WQ_LOG_SZ_MAX     31u /* wq.log_wq_sz is 5 bits */
#define KR_WQ_LOG_STRIDE_MAX 15u /* wq.log_wq_stride is 4 bits */

static uint32_t kr_srq_log_stride(uint32_t max_sge)
{
	uint32_t log = max_sge <= 1 ? 4 : kr_log2((uint64_t)max_sge * 16 - 1) + 1;

	return log < kr_log2(KR_SRQ_MIN_STRIDE) ? kr_log2(KR_SRQ_MIN_STRIDE) : log;
}

static size_t kr_srq_wq_bytes(const struct kr_devx_srq_attr *attr)
{
	return (size_t)attr->nwqe << kr_srq_log_stride(attr->max_sge);
}

/* kr_devx_srq_buf_size() - bytes of the SRQ buffer for attr (0 if attr is NULL). */
size_t kr_devx_srq_buf_size(const struct kr_devx_srq_attr *attr)
{
	if (!attr)
		return 0;
	return kr_align_up(kr_srq_wq_bytes(attr) + KR_DBREC_BYTES, KR_DEVX_QBUF_ALIGN);
}

static int kr_srq_check(struct kr_devx_ctx *ctx, const struct kr_devx_srq_attr *attr)
{
	uint32_t log_stride;

	/* the WQEs hold data segments only (no next segment): the basic cyclic form */
	if (!ctx->caps.basic_cyclic_rcv_wqe) {
		KR_ERR("devx", "%s: no basic cyclic receive WQEs (cap.basic_cyclic_rcv_wqe 0): "
		       "krcore's SRQs need them", ctx->name);
		return -EOPNOTSUPP;
	}
	if (!kr_is_pow2(attr->nwqe) || kr_log2(attr->nwqe) > ctx->caps.log_max_srq_sz ||
	    kr_log2(attr->nwqe) > KR_WQ_LOG_SZ_MAX)
		return -EINVAL;
	if (attr->max_sge == 0 || attr->max_sge > (ctx->caps.max_wqe_sz_rq / 16u))
		return -EINVAL;
	log_stride = kr_srq_log_stride(attr->max_sge);
	if (log_stride > KR_WQ_LOG_STRIDE_MAX || (1u << log_stride) > ctx->caps.max_wqe_sz_rq)
		return -EINVAL;
	if (attr->buf && (((uintptr_t)attr->buf & (KR_DEVX_QBUF_ALIGN - 1)) ||
			  attr->buf_len < kr_devx_srq_buf_size(attr)))
		return -EINVAL;
	return 0;
}

static void kr_srq_build(uint8_t *in, const struct kr_devx_srq_attr *attr, uint32_t umem_id)
{
	void *rmpc = KR_PRM_ADDR(create_rmp_in, in, ctx);
	void *wq = KR_PRM_ADDR(rmpc, rmpc, wq);

	KR_PRM_SET(create_rmp_in, in, opcode, KR_CMD_OP_CREATE_RMP);
	KR_PRM_SET(rmpc, rmpc, state, KR_RMPC_STATE_RDY);
	KR_PRM_SET(rmpc, rmpc, basic_cyclic_rcv_wqe, 1);

	KR_PRM_SET(wq, wq, wq_type, KR_WQ_TYPE_CYCLIC);
	KR_PRM_SET(wq, wq, pd, attr->pdn);
	KR_PRM_SET(wq, wq, log_wq_stride, kr_srq_log_stride(attr->max_sge)); /* log2 bytes */
	KR_PRM_SET(wq, wq, log_wq_sz, kr_log2(attr->nwqe));
	KR_PRM_SET(wq, wq, log_wq_pg_sz, 0); /* 4 KiB pages: log2(4096) - 12 */
	KR_PRM_SET(wq, wq, wq_umem_valid, 1);
	KR_PRM_SET(wq, wq, wq_umem_id, umem_id);
	KR_PRM_SET(wq, wq, dbr_umem_valid, 1);
	KR_PRM_SET(wq, wq, dbr_umem_id, umem_id);
	KR_PRM_SET64(wq, wq, dbr_addr, kr_srq_wq_bytes(attr));
}

/*
 * kr_devx_srq_create() - create an SRQ (RMP, cyclic) in RDY. Returns 0,
 * -EINVAL (NULL arguments, nwqe not a power of two or above the device limit,
 * max_sge 0 or above the device's receive WQE size, misaligned or short
 * buffer), -ENOMEM, -EREMOTEIO (ctx->last_err set) or a backend errno.
 */
int kr_devx_srq_create(struct kr_devx_ctx *ctx, const struct kr_devx_srq_attr *attr,
		       struct kr_devx_srq *srq)
{
	uint8_t in[KR_PRM_BYTES(create_rmp_in)] = {0};
	uint8_t out[KR_PRM_BYTES(create_rmp_out)] = {0};
	size_t size;
	uint8_t *buf;
	void *qbuf;
	int rc;

	if (!ctx || !attr || !srq)
		return -EINVAL;
	rc = kr_srq_check(ctx, attr);
	if (rc)
		return rc;
	memset(srq, 0, sizeof(*srq));
	size = kr_devx_srq_buf_size(attr);
	srq->wrid = calloc(attr->nwqe, sizeof(*srq->wrid));
	if (!srq->wrid)
		return -ENOMEM;
	rc = kr_devx_qmem_alloc(ctx, attr->buf, size, "SRQ", &qbuf, &srq->own_buf, &srq->umem);
	if (rc)
		goto err_free_wrid;
	buf = qbuf;
	kr_srq_build(in, attr, srq->umem->id);
	rc = kr_devx_cmd_create(ctx, in, sizeof(in), out, sizeof(out), &srq->obj);
	if (rc)
		goto err_free_qmem;

	srq->ctx = ctx;
	srq->srqn = KR_PRM_GET(create_rmp_out, out, rmpn);
	srq->buf = buf;
	srq->wq_buf = buf;
	srq->nwqe = attr->nwqe;
	srq->log_stride = kr_srq_log_stride(attr->max_sge);
	srq->pi = 0;
	srq->dbrec = (volatile uint32_t *)(buf + kr_srq_wq_bytes(attr));
	return 0;

err_free_qmem:
	kr_devx_qmem_free(ctx, &srq->umem, buf, srq->own_buf, "SRQ");
err_free_wrid:
	free(srq->wrid);
	memset(srq, 0, sizeof(*srq));
	return rc;
}

/*
 * kr_devx_srq_destroy() - destroy an SRQ no QP or DCT uses any more. Returns 0,
 * -EINVAL, or the errno of the step that failed (the RMP failing to be
 * destroyed leaves srq valid).
 */
int kr_devx_srq_destroy(struct kr_devx_srq *srq)
{
	int rc;

	if (!srq || !srq->ctx)
		return -EINVAL;
	if (srq->obj) {
		rc = kr_devx_cmd_destroy(srq->obj);
		if (rc)
			return rc;
		srq->obj = NULL;
	}
	rc = kr_devx_qmem_free(srq->ctx, &srq->umem, srq->buf, srq->own_buf, "SRQ");
	if (rc)
		return rc;
	free(srq->wrid);
	memset(srq, 0, sizeof(*srq));
	return 0;
}
