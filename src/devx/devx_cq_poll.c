/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data path, consumer side: reap 64-byte CQEs (cqe_version 1: srqn_uidx holds
 * the user_index of the QP or DCT the completion belongs to).
 *
 * A slot is ready when its opcode is not MLX5_CQE_INVALID and its owner bit
 * equals the pass bit of the consumer index ((ci >> log_ncqe) & 1). The device
 * writes op_own last; the rest of the CQE is read after it.
 *
 * devx.h (kr_devx_cqe_at and friends) has the readers this file shares with the one-at-a-time
 * send path.
 *
 * Ownership of the indices:
 *   cq->cons_index, cq->dbrec[0]  this file (and devx.h's inline readers)
 *   qp->sq_ci                     this file (and devx.h's inline readers), from a
 *                                 requester CQE's wqe_counter
 *   qp->rq_ci, srq->ci            this file, one per receive completion
 */
#include <endian.h>
#include <errno.h>

#include "devx/devx.h"
#include "common/kr_barrier.h"
#include "common/kr_log.h"
#include "krcore/krcore.h"

_Static_assert(sizeof(struct mlx5_cqe64) == 64, "cqe64");
_Static_assert(sizeof(struct mlx5_err_cqe) == 64, "err cqe");
_Static_assert(offsetof(struct mlx5_err_cqe, srqn) == offsetof(struct mlx5_cqe64, srqn_uidx),
	       "user_index sits at the same place in both CQE formats");
_Static_assert(offsetof(struct mlx5_err_cqe, wqe_counter) ==
		   offsetof(struct mlx5_cqe64, wqe_counter),
	       "wqe_counter sits at the same place in both CQE formats");

/* Requester completion opcode from the WQE opcode the CQE carries. */
static inline enum kr_devx_wc_opcode kr_req_wc_opcode(uint8_t wqe_opcode)
{
	switch (wqe_opcode) {
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		return KR_WC_RDMA_WRITE;
	case MLX5_OPCODE_RDMA_READ:
		return KR_WC_RDMA_READ;
	case MLX5_OPCODE_ATOMIC_CS:
		return KR_WC_COMP_SWAP;
	case MLX5_OPCODE_ATOMIC_FA:
		return KR_WC_FETCH_ADD;
	default:
		return KR_WC_SEND;
	}
}

/*
 * wr_id of an SRQ receive. The device takes an SRQ's WQEs in ring order, one
 * per message as its first packet arrives, but messages of different
 * senders (QPs, DC initiators) complete in the order their last packets
 * come: a CQE may name a WQE before one already completed. So the consumer
 * counts completions (each completes one WQE) rather than following
 * wqe_counter, which would jump a whole 16-bit lap back.
 */
static inline uint64_t kr_srq_complete(struct kr_devx_srq *srq, uint16_t wqe_counter)
{
	srq->ci++;
	return srq->wrid[wqe_counter & (srq->nwqe - 1)];
}

/* wr_id of a receive on a QP or DCT: from its SRQ, or the QP's own RQ in order. */
static inline uint64_t kr_resp_complete(const struct kr_devx_rsc *rsc, uint16_t wqe_counter)
{
	struct kr_devx_qp *qp;

	if (rsc->type == KR_DEVX_RSC_DCT)
		return kr_srq_complete(((struct kr_devx_dct *)rsc->obj)->srq, wqe_counter);
	qp = rsc->obj;
	if (qp->srq)
		return kr_srq_complete(qp->srq, wqe_counter);
	return qp->rq_wrid[qp->rq_ci++ & (qp->rq_wqe_cnt - 1)];
}

/* The resource a CQE names, or NULL when this process does not know it. */
static inline const struct kr_devx_rsc *kr_cqe_rsc(const struct kr_devx_ctx *ctx,
						   const struct mlx5_cqe64 *cqe, bool requester)
{
	uint32_t uidx = be32toh(cqe->srqn_uidx) & 0xffffff;
	const struct kr_devx_rsc *rsc;

	if (kr_unlikely(uidx == 0 || uidx >= ctx->rsc_cap || !ctx->rsc))
		return NULL;
	rsc = &ctx->rsc[uidx];
	if (kr_unlikely(!rsc->obj))
		return NULL;
	if (requester)
		return kr_likely(rsc->type == KR_DEVX_RSC_QP) ? rsc : NULL;
	return kr_likely(rsc->type == KR_DEVX_RSC_QP || rsc->type == KR_DEVX_RSC_DCT) ? rsc : NULL;
}

/*
 * Parse one ready CQE into wc. Returns 0, or -EIO (nothing changed) when it
 * names an unknown resource or has an opcode this driver never asks for.
 */
static inline int kr_cqe_parse(struct kr_devx_cq *cq, const struct mlx5_cqe64 *cqe, uint8_t opcode,
			       struct kr_devx_wc *wc)
{
	const struct mlx5_err_cqe *ecqe = (const struct mlx5_err_cqe *)cqe;
	const struct kr_devx_rsc *rsc;
	uint16_t wqe_counter = be16toh(cqe->wqe_counter);
	bool requester = opcode == MLX5_CQE_REQ || opcode == MLX5_CQE_REQ_ERR;
	uint32_t w;

	if (kr_unlikely(opcode > MLX5_CQE_RESP_SEND_IMM && opcode != MLX5_CQE_REQ_ERR &&
			opcode != MLX5_CQE_RESP_ERR))
		return -EIO;
	rsc = kr_cqe_rsc(cq->ctx, cqe, requester);
	if (kr_unlikely(!rsc))
		return -EIO;

	switch (opcode) {
	case MLX5_CQE_REQ:
		w = be32toh(cqe->sop_drop_qpn);
		wc->wr_id = kr_devx_sq_complete(rsc->obj, wqe_counter);
		wc->status = KR_WC_SUCCESS;
		wc->opcode = kr_req_wc_opcode(w >> 24);
		wc->byte_len = be32toh(cqe->byte_cnt);
		wc->has_imm = false;
		wc->imm = 0;
		wc->qpn = w & 0xffffff;
		wc->src_qpn = 0;
		wc->syndrome = 0;
		wc->vendor_syndrome = 0;
		return 0;
	case MLX5_CQE_RESP_WR_IMM:
	case MLX5_CQE_RESP_SEND:
	case MLX5_CQE_RESP_SEND_IMM:
		wc->wr_id = kr_resp_complete(rsc, wqe_counter);
		wc->status = KR_WC_SUCCESS;
		wc->opcode = opcode == MLX5_CQE_RESP_WR_IMM ? KR_WC_RECV_RDMA_WITH_IMM : KR_WC_RECV;
		wc->byte_len = be32toh(cqe->byte_cnt);
		wc->has_imm = opcode != MLX5_CQE_RESP_SEND;
		wc->imm = wc->has_imm ? be32toh(cqe->imm_inval_pkey) : 0;
		wc->qpn = be32toh(cqe->sop_drop_qpn) & 0xffffff;
		wc->src_qpn = be32toh(cqe->flags_rqpn) & 0xffffff;
		wc->syndrome = 0;
		wc->vendor_syndrome = 0;
		return 0;
	default: /* MLX5_CQE_REQ_ERR, MLX5_CQE_RESP_ERR */
		w = be32toh(ecqe->s_wqe_opcode_qpn);
		if (requester) {
			wc->wr_id = kr_devx_sq_complete(rsc->obj, wqe_counter);
			wc->opcode = kr_req_wc_opcode(w >> 24);
		} else {
			wc->wr_id = kr_resp_complete(rsc, wqe_counter);
			wc->opcode = KR_WC_RECV;
		}
		wc->syndrome = ecqe->syndrome;
		wc->vendor_syndrome = ecqe->vendor_err_synd;
		wc->status = kr_devx_syndrome_to_status(ecqe->syndrome);
		wc->byte_len = 0;
		wc->has_imm = false;
		wc->imm = 0;
		wc->qpn = w & 0xffffff;
		wc->src_qpn = 0;
		KR_DP_LOG("devx", "cq %u: error CQE qpn 0x%x syndrome 0x%x vendor 0x%x", cq->cqn,
			  wc->qpn, wc->syndrome, wc->vendor_syndrome);
		return 0;
	}
}

/*
 * Reap from the ready CQE at the consumer index on. Out of line so that an
 * empty kr_devx_cq_poll() is a leaf that saves no registers.
 */
static __attribute__((noinline)) int kr_cq_reap(struct kr_devx_cq *cq, struct kr_devx_wc *wc, int n,
						struct mlx5_cqe64 *cqe, uint8_t opcode)
{
	uint32_t ci = cq->cons_index;
	int i = 0, ret = 0;

	do {
		if (kr_unlikely(kr_cqe_parse(cq, cqe, opcode, &wc[i]))) {
			if (i == 0) {
				KR_ERR_RATELIMITED("devx",
						   "cq %u: dropped CQE at ci %u: opcode %u, "
						   "user_index %u (unknown resource or opcode)",
						   cq->cqn, ci, opcode,
						   be32toh(cqe->srqn_uidx) & 0xffffff);
				ci++;
				ret = -EIO;
			}
			break;
		}
		ci++;
		i++;
	} while (i < n && (cqe = kr_devx_cqe_at(cq, ci, &opcode)));

	if (ci != cq->cons_index)
		kr_devx_cq_set_ci(cq, ci);
	return ret ? ret : i;
}

/*
 * kr_devx_cq_poll() - reap up to n completions into wc[].
 * Returns the number reaped (0..n), or -EIO when the next CQE names a resource
 * this process does not know or has an unexpected opcode: that CQE is consumed.
 * A bad CQE behind good ones is left for the next call, so no completion is
 * lost.
 */
int kr_devx_cq_poll(struct kr_devx_cq *cq, struct kr_devx_wc *wc, int n)
{
	struct mlx5_cqe64 *cqe;
	uint8_t opcode;

	/* the common empty poll: one CQE byte read, no stores */
	cqe = kr_devx_cqe_at(cq, cq->cons_index, &opcode);
	if (!cqe || n <= 0)
		return 0;
	return kr_cq_reap(cq, wc, n, cqe, opcode);
}
