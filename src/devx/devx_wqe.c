/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data path, producer side: send WQEs, receive WQEs, doorbells.
 *
 * A send WQE is a list of 16-byte segments in 64-byte WQEBBs:
 *   ctrl (16) | DCI: datagram/AV (48) | raddr (16) | atomic (16) | data or inline
 * and may span WQEBBs; it wraps to the ring start at a WQEBB boundary (every
 * segment is 16 bytes or a multiple, and the ring end is 64-byte aligned, so a
 * segment never straddles the end except inline payload bytes, copied in two
 * pieces). Posting never rings: kr_devx_qp_ring() publishes a batch with one
 * doorbell record update and one UAR write.
 *
 * Ownership of the indices (struct kr_devx_qp):
 *   sq_pi     this file (the poster)
 *   sq_ci     kr_devx_cq_poll (from the requester CQE's wqe_counter)
 *   sq_db_pi  kr_devx_qp_ring
 * Single producer per QP: callers serialise posts on one QP.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_barrier.h"

/* kr_devx_sq_wqe_end() - see devx.h. */
int kr_devx_sq_wqe_end(const struct kr_devx_qp *qp, uint16_t counter, uint16_t *end)
{
	const struct mlx5_wqe_ctrl_seg *ctrl =
	    (const struct mlx5_wqe_ctrl_seg *)((const uint8_t *)qp->sq_buf +
					       ((size_t)(counter & (qp->sq_wqebb_cnt - 1))
						<< KR_WQEBB_SHIFT));
	uint32_t qpn_ds = be32toh(ctrl->qpn_ds), ds = qpn_ds & 0x3f;

	if (qpn_ds >> 8 != qp->qpn || !ds ||
	    ((be32toh(ctrl->opmod_idx_opcode) >> 8) & 0xffff) != counter)
		return -EPROTO;
	*end = (uint16_t)(counter + ((ds * KR_DS_SIZE + KR_WQEBB_SIZE - 1) >> KR_WQEBB_SHIFT));
	return 0;
}

/*
 * Copy len bytes to dst inside the send ring, continuing at the ring start
 * when dst reaches qend. Returns the byte after the copy, wrapped (never qend).
 */
static uint8_t *kr_sq_copy(const struct kr_devx_qp *qp, uint8_t *dst, const uint8_t *qend,
			   const void *src, size_t len)
{
	size_t room = (size_t)(qend - dst);

	if (kr_likely(len < room)) {
		memcpy(dst, src, len);
		return dst + len;
	}
	memcpy(dst, src, room);
	memcpy(qp->sq_buf, (const uint8_t *)src + room, len - room);
	return qp->sq_buf + (len - room);
}

/* kr_devx_dc_av_encode() - see devx.h. */
void kr_devx_dc_av_encode(const struct kr_devx_dc_av *av, struct kr_devx_av_wqe *wqe)
{
	_Static_assert(sizeof(*wqe) == sizeof(struct mlx5_wqe_av), "encoded AV");
	kr_set_av_seg((struct mlx5_wqe_av *)wqe->bytes, av);
}

/*
 * WRITE/SEND with KR_WR_INLINE: the payload goes into the WQE as one
 * inl_data_seg header then the bytes, padded to 16 (the padding is covered by
 * ds; its content is not read). No inline segment when there are no bytes.
 * Kept out of line so the common path stays small, once per caller:
 * checked (kr_devx_qp_post_checked: fits, encoded AV) or not (devx_wqe.h).
 */
static inline __attribute__((always_inline)) int
kr_post_inline_body(struct kr_devx_qp *qp, const struct kr_devx_wr *wr,
		    const struct kr_wr_kind *kind, uint32_t head_ds, bool checked)
{
	const uint8_t *qend = qp->sq_buf + ((size_t)qp->sq_wqebb_cnt << KR_WQEBB_SHIFT);
	uint32_t i, total = 0, ds = head_ds, wqebbs;
	uint8_t *seg, *dst;
	int ret;

	if (kr_unlikely(!kind->inl_ok))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		uint32_t len = wr->sge[i].length;

		if (kr_unlikely(len == 0 || len > KR_DEVX_MAX_INLINE))
			return -EINVAL;
		total += len;
		if (kr_unlikely(total > KR_DEVX_MAX_INLINE))
			return -EINVAL;
	}
	if (total)
		ds += (sizeof(struct mlx5_wqe_inl_data_seg) + total + KR_DS_SIZE - 1) / KR_DS_SIZE;
	ret = kr_sq_reserve(qp, ds, &wqebbs, checked);
	if (kr_unlikely(ret))
		return ret;
	seg = kr_sq_set_head(qp, wr, kind, ds, qend, checked);
	if (total) {
		((struct mlx5_wqe_inl_data_seg *)seg)->byte_count =
		    htobe32(total | MLX5_INLINE_SEG);
		dst = seg + sizeof(struct mlx5_wqe_inl_data_seg);
		for (i = 0; i < wr->num_sge; i++)
			dst = kr_sq_copy(qp, dst, qend, (const void *)(uintptr_t)wr->sge[i].addr,
					 wr->sge[i].length);
	}
	kr_sq_commit(qp, wr->wr_id, wqebbs);
	return 0;
}

/* kr_devx_sq_post_inline() - see devx_wqe.h. */
int kr_devx_sq_post_inline(struct kr_devx_qp *qp, const struct kr_devx_wr *wr,
			   const struct kr_wr_kind *kind, uint32_t head_ds)
{
	return kr_post_inline_body(qp, wr, kind, head_ds, false);
}

/* kr_devx_sq_post_inline_checked() - see devx_wqe.h. */
int kr_devx_sq_post_inline_checked(struct kr_devx_qp *qp, const struct kr_devx_wr *wr,
				   const struct kr_wr_kind *kind, uint32_t head_ds)
{
	return kr_post_inline_body(qp, wr, kind, head_ds, true);
}

/* kr_devx_sq_inline_read() - see devx.h. */
int kr_devx_sq_inline_read(const struct kr_devx_qp *qp, uint16_t counter, void *buf, uint32_t cap)
{
	const uint8_t *qend = qp->sq_buf + ((size_t)qp->sq_wqebb_cnt << KR_WQEBB_SHIFT);
	uint8_t *seg = qp->sq_buf + ((size_t)(counter & (qp->sq_wqebb_cnt - 1)) << KR_WQEBB_SHIFT);
	const struct mlx5_wqe_ctrl_seg *ctrl = (const struct mlx5_wqe_ctrl_seg *)seg;
	uint32_t op = be32toh(ctrl->opmod_idx_opcode), len, room;
	uint16_t end;

	if (kr_devx_sq_wqe_end(qp, counter, &end))
		return -EPROTO;
	op &= 0xff;
	if (op != MLX5_OPCODE_RDMA_WRITE && op != MLX5_OPCODE_RDMA_WRITE_IMM &&
	    op != MLX5_OPCODE_SEND && op != MLX5_OPCODE_SEND_IMM)
		return -EPROTO;
	/* the head as kr_sq_set_head() wrote it: ctrl, [AV], [raddr] */
	seg += sizeof(struct mlx5_wqe_ctrl_seg);
	if (qp->type == KR_DEVX_QP_DCI)
		seg = kr_sq_next(qp, seg, sizeof(struct mlx5_wqe_av), qend);
	if (op == MLX5_OPCODE_RDMA_WRITE || op == MLX5_OPCODE_RDMA_WRITE_IMM)
		seg = kr_sq_next(qp, seg, sizeof(struct mlx5_wqe_raddr_seg), qend);
	len = be32toh(((const struct mlx5_wqe_inl_data_seg *)seg)->byte_count);
	if (!(len & MLX5_INLINE_SEG))
		return -EPROTO;
	len &= ~(uint32_t)MLX5_INLINE_SEG;
	if (len > cap || len > KR_DEVX_MAX_INLINE)
		return -EPROTO;
	seg += sizeof(struct mlx5_wqe_inl_data_seg); /* 4 bytes in: never at the end */
	room = (uint32_t)(qend - seg);
	if (len <= room) {
		memcpy(buf, seg, len);
	} else { /* the payload wrapped, as kr_sq_copy() wrote it */
		memcpy(buf, seg, room);
		memcpy((uint8_t *)buf + room, qp->sq_buf, len - room);
	}
	return (int)len;
}

/*
 * kr_devx_qp_post_send() - build one send WQE at the producer index; the
 * doorbell is left to kr_devx_qp_ring().
 * Returns 0, -EINVAL (malformed request: unknown opcode or flag, av missing on
 * a DCI or present on RC, SGE count wrong for the opcode or too many for the
 * device's WQE size, zero-length SGE, atomic not one 8-byte SGE or remote
 * address not 8-byte aligned, inline on READ/atomics or over
 * KR_DEVX_MAX_INLINE; nothing written), or -EAGAIN (send queue full; nothing
 * written).
 */
int kr_devx_qp_post_send(struct kr_devx_qp *qp, const struct kr_devx_wr *wr)
{
	const struct kr_wr_kind *kind;
	uint32_t ds, i, num_sge = wr->num_sge;
	const struct kr_devx_sge *sge = wr->sge;

	if (kr_unlikely((unsigned int)wr->opcode > KR_WR_ATOMIC_FA ||
			(wr->flags & ~KR_WR_FLAGS_ALL)))
		return -EINVAL;
	kind = &kr_wr_kinds[wr->opcode];
	ds = kind->head_ds;
	if (qp->type == KR_DEVX_QP_DCI) {
		if (kr_unlikely(!wr->av))
			return -EINVAL;
		ds += KR_AV_DS;
	} else if (kr_unlikely(wr->av)) {
		return -EINVAL;
	}
	if (kr_unlikely(num_sge && !sge))
		return -EINVAL;
	if (kr_unlikely(wr->flags & KR_WR_INLINE))
		return kr_devx_sq_post_inline(qp, wr, kind, ds);
	if (kr_unlikely(num_sge < kind->min_sge || num_sge > kind->max_sge))
		return -EINVAL;
	for (i = 0; i < num_sge; i++)
		/* zero length is illegal; bit 31 of byte_count is the inline flag */
		if (kr_unlikely(sge[i].length - 1 >= (uint32_t)MLX5_INLINE_SEG - 1))
			return -EINVAL;
	if (kind->atomic && kr_unlikely(sge[0].length != 8 || (wr->remote_addr & 7)))
		return -EINVAL;
	return kr_post_send_checked(qp, wr, kind, ds, false);
}

/* kr_devx_qp_max_wqe_ds() - see devx.h. */
uint32_t kr_devx_qp_max_wqe_ds(const struct kr_devx_qp *qp)
{
	uint32_t ring = qp->sq_wqebb_cnt * (KR_WQEBB_SIZE / KR_DS_SIZE);
	uint32_t ds = kr_max_ds(qp);

	return ds < ring ? ds : ring;
}

/*
 * BlueFlame takes one WQE that fits a buffer (rdma-core: nreq == 1, size <=
 * buf_size / 16), posted since the last ring and not wrapping around the
 * ring's end: then the WQEBBs since the last ring are exactly it.
 */
static inline bool kr_bf_fits(const struct kr_devx_qp *qp, uint32_t n)
{
	uint32_t last =
	    (uint32_t)(((const uint8_t *)qp->sq_last_ctrl - qp->sq_buf) >> KR_WQEBB_SHIFT);

	return (n << KR_WQEBB_SHIFT) <= qp->uar->bf_size &&
	       (qp->sq_db_pi & (qp->sq_wqebb_cnt - 1)) == last && last + n <= qp->sq_wqebb_cnt;
}

/*
 * kr_devx_qp_ring() - publish the WQEs posted since the last ring: the send
 * doorbell record, then one UAR doorbell carrying the last ctrl segment's
 * first 8 bytes, or, on a BlueFlame page, a single small WQE copied whole to
 * the register. No-op when nothing was posted.
 */
void kr_devx_qp_ring(struct kr_devx_qp *qp)
{
	uint32_t n = qp->sq_pi - qp->sq_db_pi;
	uint64_t val;

	if (!n)
		return;
	/* the WQE bytes are in memory before the record that publishes them */
	kr_wmb_before_dbrec();
	qp->dbrec[MLX5_SND_DBR] = htobe32(qp->sq_pi & 0xffff);
	/* the record is in memory before the UAR write: the HCA reads it then */
	kr_wmb_before_doorbell();
	if (qp->uar->bf_size && kr_bf_fits(qp, n)) {
		qp->ctx->ops->bf_copy(qp->uar, qp->sq_last_ctrl, n << KR_WQEBB_SHIFT);
	} else {
		memcpy(&val, qp->sq_last_ctrl, sizeof(val));
		qp->ctx->ops->doorbell(qp->uar, val);
	}
	qp->sq_db_pi = qp->sq_pi;
}

/*
 * Write one receive WQE of 1 << log_stride bytes: the SGEs, then a terminator
 * (byte_count 0, MLX5_INVALID_LKEY) if there are fewer than the slots.
 * Returns -EINVAL for too many SGEs, a zero-length or oversized SGE.
 */
static inline int kr_recv_wqe_check(const struct kr_devx_sge *sge, uint32_t num_sge,
				    uint32_t log_stride)
{
	uint32_t slots = (1u << log_stride) / sizeof(struct mlx5_wqe_data_seg);
	uint32_t i;

	if (kr_unlikely(num_sge > slots || (num_sge && !sge)))
		return -EINVAL;
	for (i = 0; i < num_sge; i++)
		if (kr_unlikely(sge[i].length == 0 || (sge[i].length & MLX5_INLINE_SEG)))
			return -EINVAL;
	return 0;
}

static inline void kr_set_recv_wqe(uint8_t *wqe, const struct kr_devx_sge *sge, uint32_t num_sge,
				   uint32_t log_stride)
{
	struct mlx5_wqe_data_seg *d = (struct mlx5_wqe_data_seg *)wqe;
	uint32_t slots = (1u << log_stride) / sizeof(*d);
	uint32_t i;

	for (i = 0; i < num_sge; i++)
		kr_set_data_seg(&d[i], &sge[i]);
	if (num_sge < slots) {
		d[num_sge].byte_count = 0;
		d[num_sge].lkey = htobe32(MLX5_INVALID_LKEY);
		d[num_sge].addr = 0;
	}
}

/*
 * kr_devx_qp_post_recv() - post one receive WQE on an RC QP's own RQ and update
 * the receive doorbell record.
 * Returns 0, -EINVAL (QP has no RQ, too many SGEs for the stride, zero-length
 * SGE), -EAGAIN (RQ full).
 */
int kr_devx_qp_post_recv(struct kr_devx_qp *qp, const struct kr_devx_sge *sge, uint32_t num_sge,
			 uint64_t wr_id)
{
	uint32_t idx;
	int ret;

	if (kr_unlikely(qp->rq_wqe_cnt == 0 || qp->srq))
		return -EINVAL;
	ret = kr_recv_wqe_check(sge, num_sge, qp->rq_log_stride);
	if (kr_unlikely(ret))
		return ret;
	if (kr_unlikely(qp->rq_pi - qp->rq_ci >= qp->rq_wqe_cnt))
		return -EAGAIN;
	idx = qp->rq_pi & (qp->rq_wqe_cnt - 1);
	kr_set_recv_wqe(qp->rq_buf + ((size_t)idx << qp->rq_log_stride), sge, num_sge,
			qp->rq_log_stride);
	qp->rq_wrid[idx] = wr_id;
	qp->rq_pi++;
	/* the receive WQE is in memory before the record that publishes it */
	kr_wmb_before_dbrec();
	qp->dbrec[MLX5_RCV_DBR] = htobe32(qp->rq_pi & 0xffff);
	return 0;
}

/*
 * kr_devx_srq_post_recv() - post one receive WQE on an SRQ (cyclic RMP) and
 * update its doorbell record.
 * Returns 0, -EINVAL (too many SGEs for the stride, zero-length SGE), -EAGAIN
 * (every WQE is posted and not yet completed).
 */
int kr_devx_srq_post_recv(struct kr_devx_srq *srq, const struct kr_devx_sge *sge, uint32_t num_sge,
			  uint64_t wr_id)
{
	uint32_t idx;
	int ret;

	ret = kr_recv_wqe_check(sge, num_sge, srq->log_stride);
	if (kr_unlikely(ret))
		return ret;
	if (kr_unlikely(srq->pi - srq->ci >= srq->nwqe))
		return -EAGAIN;
	idx = srq->pi & (srq->nwqe - 1);
	kr_set_recv_wqe(srq->wq_buf + ((size_t)idx << srq->log_stride), sge, num_sge,
			srq->log_stride);
	srq->wrid[idx] = wr_id;
	srq->pi++;
	/* the receive WQE is in memory before the record that publishes it */
	kr_wmb_before_dbrec();
	srq->dbrec[0] = htobe32(srq->pi & 0xffff);
	return 0;
}
