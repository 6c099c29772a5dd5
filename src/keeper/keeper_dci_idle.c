/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DCI its job gives back idle (KR_RELEASE_F_IDLE: nothing in flight, no
 * error seen) goes back FREE without a reset, as UCX's dc_mlx5 shares its
 * DCIs among endpoints without one: a DC initiator keeps no state per
 * target, and the next holder goes on from the send and completion counters
 * where this one stopped (job_lease.c reads the send counter from the
 * doorbell record, the completion counter from the zone descriptor). A
 * reset costs four firmware commands (~6.5 ms on the connectx4 profile), so
 * a job whose threads come and go would drain the tenant's DCIs faster than
 * the worker resets them, and its threads' first connects would wait.
 *
 * A trusted keeper only (no kmod-min): there a tenant's jobs can write any
 * of its queues anyway, and the check below catches a library that is
 * wrong, not a job that lies. A fenced keeper resets every DCI that comes
 * back, as before. The check reads the DCI's rings in the zone: the CQE the
 * consumer index names next was not written (all that came was read), and
 * either both counters stand where they stood when it went FREE (nothing
 * was posted: a DCI leased ahead and not used) or the last CQE read is a
 * successful completion, of this QP, of the WQE that ends where the
 * doorbell record's send counter stands (nothing posted after it). A QP in
 * error completes every later WQE in error, so a success last means no
 * error. Anything else: the reset.
 */
#include <endian.h>

#include "devx/devx.h"
#include "keeper/keeper.h"

/* The consumer index q's holder published, if everything before it was read and nothing after. */
static bool cq_drained(const struct kr_devx_cq *cq, uint32_t *ci)
{
	uint8_t opcode;

	*ci = be32toh(__atomic_load_n(cq->dbrec, __ATOMIC_ACQUIRE)) & 0xffffff;
	return !kr_devx_cqe_at(cq, *ci, &opcode);
}

/* The CQE before ci completes, successfully, q's WQE that ends at send counter pi. */
static bool last_wqe_done(const struct kr_keeper_qp *q, uint32_t ci, uint16_t pi)
{
	const struct mlx5_cqe64 *cqe;
	uint16_t end;
	uint8_t opcode;

	cqe = kr_devx_cqe_at(&q->cq, ci - 1, &opcode);
	if (!cqe || opcode != MLX5_CQE_REQ ||
	    (be32toh(cqe->srqn_uidx) & 0xffffff) != q->qp.user_index)
		return false;
	return !kr_devx_sq_wqe_end(&q->qp, be16toh(cqe->wqe_counter), &end) && end == pi;
}

/* kr_keeper_dci_idle() - see keeper.h. */
bool kr_keeper_dci_idle(struct kr_keeper *k, struct kr_keeper_qp *q)
{
	uint16_t pi;
	uint32_t ci;

	if (k->krmin_fd >= 0 || q->kind != KR_SLOT_DCI)
		return false;
	pi = (uint16_t)be32toh(__atomic_load_n(&q->qp.dbrec[MLX5_SND_DBR], __ATOMIC_ACQUIRE));
	if (!cq_drained(&q->cq, &ci))
		return false;
	if (!(pi == q->free_pi && ci == (q->cq.cons_index & 0xffffff)) && !last_wqe_done(q, ci, pi))
		return false;
	/* the next holder reads from here (the zone descriptor), as after a reset */
	q->cq.cons_index = ci;
	q->free_pi = pi;
	kr_keeper_zone_dci(&k->tenant[q->tenant], q->index)->cq_ci = ci;
	k->seg->idle_returns++;
	return true;
}
