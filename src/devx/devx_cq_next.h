/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data path, one send completion at a time, for a caller that owns the QP
 * and wants no struct kr_devx_wc in between (the vQP poll): look at the next
 * CQE, take it only if it is a successful completion of that QP's send
 * queue, and leave anything else (errors, receives, other resources) for
 * kr_devx_cq_poll(), which reads the same consumer index. devx_cq_poll.c is
 * built on the same readers.
 */
#ifndef KR_DEVX_CQ_NEXT_H
#define KR_DEVX_CQ_NEXT_H

#include <endian.h>

#include "devx/devx.h"
#include "common/kr_barrier.h"

/*
 * The CQE at consumer index ci if the device has written it in this pass, else
 * NULL. *opcode gets its opcode.
 */
static inline struct mlx5_cqe64 *kr_devx_cqe_at(const struct kr_devx_cq *cq, uint32_t ci,
						uint8_t *opcode)
{
	struct mlx5_cqe64 *cqe = &cq->cqes[ci & (cq->ncqe - 1)];
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_RELAXED);

	*opcode = op_own >> 4;
	if (*opcode == MLX5_CQE_INVALID ||
	    (op_own & MLX5_CQE_OWNER_MASK) != ((ci >> cq->log_ncqe) & 1))
		return NULL;
	/* owner bit read before the rest of the CQE */
	kr_rmb_after_cqe_owner();
	return cqe;
}

/* A send WQE completed (from its first WQEBB index): its wr_id; the SQ is free up to its end. */
static inline uint64_t kr_devx_sq_complete(struct kr_devx_qp *qp, uint16_t wqe_counter)
{
	uint32_t idx = wqe_counter & (qp->sq_wqebb_cnt - 1);

	qp->sq_ci = qp->sq_wqe_next[idx];
	return qp->sq_wrid[idx];
}

/*
 * kr_devx_cq_next_send() - the next CQE of cq if it is a successful send
 * completion of qp (opcode REQ, qp's user index), with the wr_id its WQE was
 * posted with; nothing is consumed. NULL when the CQ is empty, or when the
 * next CQE is anything else: then *other is set (kr_devx_cq_poll takes it).
 */
static inline const struct mlx5_cqe64 *kr_devx_cq_next_send(const struct kr_devx_cq *cq,
							    const struct kr_devx_qp *qp,
							    uint64_t *wr_id, bool *other)
{
	const struct mlx5_cqe64 *cqe;
	uint8_t opcode;

	cqe = kr_devx_cqe_at(cq, cq->cons_index, &opcode);
	if (!cqe)
		return NULL;
	if (opcode != MLX5_CQE_REQ || (be32toh(cqe->srqn_uidx) & 0xffffff) != qp->user_index) {
		*other = true;
		return NULL;
	}
	*wr_id = qp->sq_wrid[be16toh(cqe->wqe_counter) & (qp->sq_wqebb_cnt - 1)];
	return cqe;
}

/*
 * kr_devx_cq_set_ci() - hand the CQEs before ci back to the device: the
 * consumer index and its doorbell record, once for everything reaped.
 */
static inline void kr_devx_cq_set_ci(struct kr_devx_cq *cq, uint32_t ci)
{
	cq->cons_index = ci;
	/* CQE reads done before the record hands the slots back to the device */
	kr_wmb_before_dbrec();
	cq->dbrec[0] = htobe32(ci & 0xffffff);
}

/*
 * kr_devx_cq_take_send() - consume the CQE kr_devx_cq_next_send() gave: the
 * SQ is free up to its WQE's end, the consumer index moves on and the slot
 * goes back to the device (one record write per CQE: cheaper, for the one
 * completion a poll mostly finds, than keeping the index aside for one
 * write at the end).
 */
static inline void kr_devx_cq_take_send(struct kr_devx_cq *cq, struct kr_devx_qp *qp,
					const struct mlx5_cqe64 *cqe)
{
	kr_devx_sq_complete(qp, be16toh(cqe->wqe_counter));
	kr_devx_cq_set_ci(cq, cq->cons_index + 1);
}

#endif
