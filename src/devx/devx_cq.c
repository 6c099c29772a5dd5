/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues, control path. Buffer: ncqe 64-byte CQEs, then a 64-byte
 * doorbell record area (dbrec[0] = consumer index, dbrec[1] = arm), all one
 * umem. CREATE_CQ names the umem for both the ring and the doorbell record.
 * Polling is in devx_cq_poll.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_math.h"
#include "common/kr_log.h"

#define KR_CQE_BYTES   64u
#define KR_DBREC_BYTES 64u

/* kr_devx_cq_buf_size() - bytes for ncqe CQEs plus the doorbell record, page aligned. */
size_t kr_devx_cq_buf_size(uint32_t ncqe)
{
	return kr_align_up((size_t)ncqe * KR_CQE_BYTES + KR_DBREC_BYTES, KR_DEVX_QBUF_ALIGN);
}

static int kr_cq_check(struct kr_devx_ctx *ctx, const struct kr_devx_cq_attr *attr)
{
	if (!kr_is_pow2(attr->ncqe) || !attr->uar)
		return -EINVAL;
	/* cqc.log_cq_size is 5 bits; the device may allow fewer. */
	if (kr_log2(attr->ncqe) > ctx->caps.log_max_cq_sz || kr_log2(attr->ncqe) > 31)
		return -EINVAL;
	if (attr->buf && (((uintptr_t)attr->buf & (KR_DEVX_QBUF_ALIGN - 1)) ||
			  attr->buf_len < kr_devx_cq_buf_size(attr->ncqe)))
		return -EINVAL;
	return 0;
}

static void kr_cq_build(uint8_t *in, const struct kr_devx_ctx *ctx,
			const struct kr_devx_cq_attr *attr, uint32_t umem_id)
{
	void *cqc = KR_PRM_ADDR(create_cq_in, in, cq_context);
	uint64_t dbr_off = (uint64_t)attr->ncqe * KR_CQE_BYTES;

	KR_PRM_SET(create_cq_in, in, opcode, KR_CMD_OP_CREATE_CQ);
	KR_PRM_SET(create_cq_in, in, cq_umem_id, umem_id);
	KR_PRM_SET64(create_cq_in, in, cq_umem_offset, 0);
	KR_PRM_SET(create_cq_in, in, cq_umem_valid, 1);

	KR_PRM_SET(cqc, cqc, cqe_sz, KR_CQE_SIZE_64);
	KR_PRM_SET(cqc, cqc, log_cq_size, kr_log2(attr->ncqe));
	KR_PRM_SET(cqc, cqc, uar_page, attr->uar->page_id);
	KR_PRM_SET(cqc, cqc, c_eqn_or_apu_element, ctx->eqn);
	KR_PRM_SET(cqc, cqc, log_page_size, 0); /* 4 KiB pages: log2(4096) - 12 */
	KR_PRM_SET(cqc, cqc, page_offset, 0);
	KR_PRM_SET(cqc, cqc, dbr_umem_valid, 1);
	KR_PRM_SET(cqc, cqc, dbr_umem_id, umem_id);
	KR_PRM_SET64(cqc, cqc, dbr_addr, dbr_off);
}

/*
 * kr_devx_cq_create() - create a CQ of attr->ncqe entries, in attr->buf
 * (4096-byte aligned, >= kr_devx_cq_buf_size) or in memory of its own.
 * Returns 0, -EINVAL (NULL arguments, ncqe not a power of two or above the
 * device limit, missing UAR, misaligned or short buffer), -ENOMEM, -EREMOTEIO
 * (ctx->last_err set) or a backend errno.
 */
int kr_devx_cq_create(struct kr_devx_ctx *ctx, const struct kr_devx_cq_attr *attr,
		      struct kr_devx_cq *cq)
{
	uint8_t in[KR_PRM_BYTES(create_cq_in)] = {0};
	uint8_t out[KR_PRM_BYTES(create_cq_out)] = {0};
	size_t size;
	void *buf;
	int rc;

	if (!ctx || !attr || !cq)
		return -EINVAL;
	rc = kr_cq_check(ctx, attr);
	if (rc)
		return rc;
	memset(cq, 0, sizeof(*cq));
	size = kr_devx_cq_buf_size(attr->ncqe);
	rc = kr_devx_qmem_alloc(ctx, attr->buf, size, "CQ", &buf, &cq->own_buf, &cq->umem);
	if (rc)
		return rc;
	cq->cqes = buf;
	for (uint32_t i = 0; i < attr->ncqe; i++)
		cq->cqes[i].op_own = (MLX5_CQE_INVALID << 4) | 1;

	kr_cq_build(in, ctx, attr, cq->umem->id);
	rc = kr_devx_cmd_create(ctx, in, sizeof(in), out, sizeof(out), &cq->obj);
	if (rc)
		goto err_free_qmem;

	cq->ctx = ctx;
	cq->cqn = KR_PRM_GET(create_cq_out, out, cqn);
	cq->ncqe = attr->ncqe;
	cq->log_ncqe = kr_log2(attr->ncqe);
	cq->cons_index = 0;
	cq->dbrec = (volatile uint32_t *)((uint8_t *)buf + (size_t)attr->ncqe * KR_CQE_BYTES);
	cq->uar = attr->uar;
	cq->buf = buf;
	return 0;

err_free_qmem:
	kr_devx_qmem_free(ctx, &cq->umem, buf, cq->own_buf, "CQ");
	memset(cq, 0, sizeof(*cq));
	return rc;
}

/*
 * kr_devx_cq_destroy() - destroy a CQ no QP or DCT uses any more. Returns 0,
 * -EINVAL, or the errno of the step that failed (the CQ failing to be
 * destroyed leaves cq valid).
 */
int kr_devx_cq_destroy(struct kr_devx_cq *cq)
{
	int rc;

	if (!cq || !cq->ctx)
		return -EINVAL;
	if (cq->obj) {
		rc = kr_devx_cmd_destroy(cq->obj);
		if (rc)
			return rc;
		cq->obj = NULL;
	}
	rc = kr_devx_qmem_free(cq->ctx, &cq->umem, cq->buf, cq->own_buf, "CQ");
	if (rc)
		return rc;
	memset(cq, 0, sizeof(*cq));
	return 0;
}

/*
 * kr_devx_cq_query() - the device's producer and consumer counters of cq.
 * Returns 0, -EINVAL, -EREMOTEIO (ctx->last_err set) or a backend errno.
 */
int kr_devx_cq_query(struct kr_devx_cq *cq, struct kr_devx_cq_info *info)
{
	uint8_t in[KR_PRM_BYTES(query_cq_in)] = {0};
	uint8_t out[KR_PRM_BYTES(query_cq_out)] = {0};
	void *cqc;
	int rc;

	if (!cq || !cq->obj || !info)
		return -EINVAL;
	KR_PRM_SET(query_cq_in, in, opcode, KR_CMD_OP_QUERY_CQ);
	KR_PRM_SET(query_cq_in, in, cqn, cq->cqn);
	rc = kr_devx_cmd_query(cq->obj, in, sizeof(in), out, sizeof(out));
	if (rc)
		return rc;
	cqc = KR_PRM_ADDR(query_cq_out, out, cq_context);
	memset(info, 0, sizeof(*info));
	info->producer_counter = KR_PRM_GET(cqc, cqc, producer_counter);
	info->consumer_counter = KR_PRM_GET(cqc, cqc, consumer_counter);
	info->log_size = KR_PRM_GET(cqc, cqc, log_cq_size);
	return 0;
}
