/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive queues as the responder sees them: an RC QP's RQ, or an SRQ (an RMP
 * with a cyclic WQ) shared by RC QPs and DCTs.
 *
 * Who owns what: software writes receive WQEs and the producer counter in the
 * doorbell record (RQ: dbrec[MLX5_RCV_DBR], SRQ: dbrec[0], 16 bits,
 * big-endian); the engine owns the consumer counters (sh->qp[].rq_ci,
 * sh->srq[].ci) and only reads WQEs. A WQE is a list of data segments ended by
 * lkey MLX5_INVALID_LKEY or by the end of its stride. A taken WQE is copied,
 * so software rewriting the ring cannot change a message in progress.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"

/* Copy the WQE at ring slot idx into r. */
static void sim_recv_parse(const uint8_t *ring, uint32_t idx, uint32_t cnt, uint32_t stride,
			   struct sim_rwqe *r)
{
	const struct mlx5_wqe_data_seg *seg =
	    (const struct mlx5_wqe_data_seg *)(ring + (uint64_t)(idx & (cnt - 1)) * stride);
	uint32_t nseg = stride / sizeof(*seg), i;

	if (nseg > SIM_RECV_MAX_SGE)
		nseg = SIM_RECV_MAX_SGE;
	r->idx = idx;
	r->nsge = 0;
	for (i = 0; i < nseg; i++) {
		uint32_t lkey = be32toh(seg[i].lkey);
		uint32_t len = be32toh(seg[i].byte_count);

		/* The terminator has byte_count 0 too: a key numbered like it (mkey
		 * index 1, variant 0) still works in a real segment. */
		if (lkey == MLX5_INVALID_LKEY && !len)
			break;
		if (!len)
			continue;
		r->sge[r->nsge].addr = be64toh(seg[i].addr);
		r->sge[r->nsge].len = len;
		r->sge[r->nsge].lkey = lkey;
		r->nsge++;
	}
}

/* Receive WQEs posted and not consumed, from a 16-bit producer counter. */
static uint32_t sim_recv_posted(volatile uint32_t *dbrec_word, uint32_t ci)
{
	/* acquire: the producer counter before the WQEs it publishes */
	uint32_t pi = be32toh(__atomic_load_n(dbrec_word, __ATOMIC_ACQUIRE)) & 0xffff;

	return (pi - ci) & 0xffff;
}

static bool sim_qp_has_rq(const struct sim_qp *q)
{
	return q->rq_type == KR_QPC_RQ_TYPE_REGULAR && q->st == KR_QPC_ST_RC;
}

int sim_recv_take_rq(struct sim_engine *eng, uint32_t qpi, struct sim_rwqe *r)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	volatile uint32_t *dbrec = sim_qp_dbrec(eng, qpi);
	uint32_t cnt, stride, posted;
	const uint8_t *ring;

	if (!sim_qp_has_rq(q) || !dbrec || q->log_rq_size > 15 || q->log_rq_stride > 5)
		return -EINVAL;
	cnt = 1u << q->log_rq_size;
	stride = 16u << q->log_rq_stride;
	ring = sim_umem_ptr(eng->dev, q->wq_umem_id, q->wq_umem_offset, (uint64_t)cnt * stride);
	if (!ring)
		return -EINVAL;
	posted = sim_recv_posted(&dbrec[MLX5_RCV_DBR], q->rq_ci);
	if (!posted)
		return -EAGAIN;
	if (posted > cnt) {
		KR_ERR_RATELIMITED("sim",
				   "qp 0x%x: RQ counter %u ahead of %u by more than the ring",
				   SIM_QPN_BASE + qpi, q->rq_ci, posted);
		return -EINVAL;
	}
	sim_recv_parse(ring, q->rq_ci, cnt, stride, r);
	q->rq_ci++;
	return 0;
}

int sim_recv_take_srq(struct sim_engine *eng, uint32_t srqn, struct sim_rwqe *r)
{
	struct sim_srq *s;
	volatile uint32_t *dbrec;
	uint32_t idx, cnt, stride, posted;
	const uint8_t *ring;

	if (!sim_num_to_idx(srqn, SIM_MAX_SRQ, &idx))
		return -EINVAL;
	s = &eng->sh->srq[idx];
	if (!s->in_use || s->state != KR_RMPC_STATE_RDY || s->log_size > SIM_LOG_MAX_SRQ_SZ ||
	    s->log_stride < 4 || s->log_stride > 9)
		return -EINVAL;
	cnt = 1u << s->log_size;
	stride = 1u << s->log_stride;
	ring = sim_umem_ptr(eng->dev, s->umem_id, s->umem_offset, (uint64_t)cnt * stride);
	dbrec = sim_umem_ptr(eng->dev, s->dbr_umem_id, s->dbr_offset, 4);
	if (!ring || !dbrec)
		return -EINVAL;
	posted = sim_recv_posted(&dbrec[0], s->ci);
	if (!posted)
		return -EAGAIN;
	if (posted > cnt) {
		KR_ERR_RATELIMITED(
		    "sim", "srq %u: counter ahead of the consumer by more than the ring", srqn);
		return -EINVAL;
	}
	sim_recv_parse(ring, s->ci, cnt, stride, r);
	s->ci++;
	return 0;
}

int sim_recv_scatter(struct sim_engine *eng, uint32_t pdn, const struct sim_rwqe *r, uint32_t off,
		     const void *data, uint32_t len)
{
	const uint8_t *src = data;
	uint32_t i;

	for (i = 0; i < r->nsge && len; i++) {
		uint32_t n;
		void *dst;

		if (off >= r->sge[i].len) {
			off -= r->sge[i].len;
			continue;
		}
		n = r->sge[i].len - off;
		if (n > len)
			n = len;
		dst = sim_mem_translate(eng->dev, r->sge[i].lkey, pdn, r->sge[i].addr + off, n,
					KR_ACCESS_LOCAL_WRITE, false);
		if (!dst)
			return -EFAULT;
		memcpy(dst, src, n);
		src += n;
		len -= n;
		off = 0;
	}
	return len ? -EMSGSIZE : 0;
}

void sim_recv_flush_rq(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	volatile uint32_t *dbrec = sim_qp_dbrec(eng, qpi);
	uint32_t posted;

	if (!sim_qp_has_rq(q) || !dbrec || q->log_rq_size > 15)
		return;
	posted = sim_recv_posted(&dbrec[MLX5_RCV_DBR], q->rq_ci);
	if (posted > (1u << q->log_rq_size)) {
		/* garbage counter: forget it rather than flush a ring many times over */
		q->rq_ci += posted;
		return;
	}
	while (posted--) {
		sim_cqe_write_err(eng, q->cqn_rcv, MLX5_CQE_RESP_ERR,
				  MLX5_CQE_SYNDROME_WR_FLUSH_ERR, 0, SIM_QPN_BASE + qpi,
				  q->rq_ci & 0xffff, q->user_index);
		q->rq_ci++;
		eng->work = true;
	}
}
