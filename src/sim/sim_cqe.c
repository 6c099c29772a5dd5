/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * CQE production: the device side of a CQ ring.
 *
 * Who owns what: the engine owns the producer index (sh->cq[].pi) and every
 * CQE byte it writes; software owns the consumer index in dbrec[0] (24 bits,
 * big-endian) and only reads CQEs. A slot is handed over by its op_own byte:
 * the engine writes the other 63 bytes first and op_own last, with a release
 * store that pairs with the poller's acquire of op_own (kr_rmb_after_cqe_owner).
 * The engine never overwrites a CQE software has not consumed: when the ring
 * is full the CQE is dropped and counted as an overrun, as hardware reports
 * a CQ overrun instead of corrupting the ring.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"

int sim_cqe_write(struct sim_engine *eng, uint32_t cqn, struct mlx5_cqe64 *cqe, uint8_t opcode)
{
	struct sim_dev *dev = eng->dev;
	struct sim_cq *cq;
	struct mlx5_cqe64 *ring, *slot;
	volatile uint32_t *dbrec;
	uint32_t idx, ncqe, ci;

	if (!sim_num_to_idx(cqn, SIM_MAX_CQ, &idx) || !eng->sh->cq[idx].in_use)
		return -ENOENT;
	cq = &eng->sh->cq[idx];
	if (cq->log_size > SIM_LOG_MAX_CQ_SZ)
		return -EFAULT;
	ncqe = 1u << cq->log_size;
	ring = sim_umem_ptr(dev, cq->umem_id, cq->umem_offset, (uint64_t)ncqe * sizeof(*cqe));
	dbrec = sim_umem_ptr(dev, cq->dbr_umem_id, cq->dbr_offset, 8);
	if (!ring || !dbrec) {
		KR_ERR_RATELIMITED("sim", "cq %u: ring or doorbell record outside its umem", cqn);
		return -EFAULT;
	}
	/* acquire: software's consumer index before we reuse the slots it freed */
	ci = be32toh(__atomic_load_n(&dbrec[0], __ATOMIC_ACQUIRE)) & 0xffffff;
	if (((cq->pi - ci) & 0xffffff) >= ncqe) {
		cq->overruns++;
		KR_ERR_RATELIMITED("sim", "cq %u: overrun, CQE dropped (pi %u ci %u)", cqn, cq->pi,
				   ci);
		return -ENOSPC;
	}
	slot = &ring[cq->pi & (ncqe - 1)];
	memcpy(slot, cqe, offsetof(struct mlx5_cqe64, op_own));
	/* release: the CQE bytes above before the owner byte that hands them over */
	__atomic_store_n(&slot->op_own, (uint8_t)((opcode << 4) | ((cq->pi >> cq->log_size) & 1)),
			 __ATOMIC_RELEASE);
	cq->pi++;
	sim_event_cqe(dev, idx);
	return 0;
}

int sim_cqe_write_err(struct sim_engine *eng, uint32_t cqn, uint8_t opcode, uint8_t synd,
		      uint8_t wqe_op, uint32_t qpn, uint16_t wqe_counter, uint32_t user_index)
{
	struct mlx5_cqe64 cqe;
	struct mlx5_err_cqe *err = (struct mlx5_err_cqe *)&cqe;

	_Static_assert(sizeof(struct mlx5_err_cqe) == sizeof(struct mlx5_cqe64),
		       "error CQE is a CQE");
	memset(&cqe, 0, sizeof(cqe));
	err->srqn = htobe32(user_index & 0xffffff);
	err->syndrome = synd;
	err->vendor_err_synd = 0;
	err->s_wqe_opcode_qpn = htobe32(((uint32_t)wqe_op << 24) | (qpn & 0xffffff));
	err->wqe_counter = htobe16(wqe_counter);
	return sim_cqe_write(eng, cqn, &cqe, opcode);
}
