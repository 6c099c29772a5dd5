/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Send WQEs, producer side: the layout and the builders devx_wqe.c's
 * checked post (kr_devx_qp_post_send) and the vQP's post
 * (kr_devx_qp_post_checked) share. Inline, as the CQ's consumer side in
 * devx.h: the vQP builds its WQE where its opcode and SGE count are known,
 * with no call and no second look at the request (scripts/insn.sh).
 * Included at the end of devx.h; see devx_wqe.c for the layout and who owns
 * which index.
 */
#ifndef KR_DEVX_WQE_H
#define KR_DEVX_WQE_H

/* The ctrl segment's ds field is 6 bits: 63 units of 16 bytes. */
#define KR_WQE_MAX_DS  63u
#define KR_WQEBB_SHIFT 6
#define KR_WQEBB_SIZE  (1u << KR_WQEBB_SHIFT)
#define KR_DS_SIZE     16u

_Static_assert(sizeof(struct mlx5_wqe_ctrl_seg) == 16, "ctrl seg");
_Static_assert(sizeof(struct mlx5_wqe_av) == 48, "av");
_Static_assert(sizeof(struct mlx5_wqe_raddr_seg) == 16, "raddr seg");
_Static_assert(sizeof(struct mlx5_wqe_atomic_seg) == 16, "atomic seg");
_Static_assert(sizeof(struct mlx5_wqe_data_seg) == 16, "data seg");

/*
 * What an opcode needs: its mlx5 opcode, the 16-byte units of the segments
 * between ctrl and the data (raddr, atomic), the SGE count it accepts.
 */
struct kr_wr_kind {
	uint8_t mlx5_opcode;
	uint8_t head_ds; /* ctrl + raddr + atomic, in 16-byte units */
	uint8_t min_sge;
	uint8_t max_sge;
	bool raddr;   /* RDMA/atomic: remote address segment */
	bool atomic;  /* atomic segment, exactly one 8-byte SGE */
	bool has_imm; /* ctrl.imm carries the immediate */
	bool inl_ok;  /* KR_WR_INLINE allowed */
};

#define KR_ANY_SGE KR_WQE_MAX_DS
static const struct kr_wr_kind kr_wr_kinds[] = {
    [KR_WR_RDMA_WRITE] = {MLX5_OPCODE_RDMA_WRITE, 2, 0, KR_ANY_SGE, true, false, false, true},
    [KR_WR_RDMA_WRITE_IMM] = {MLX5_OPCODE_RDMA_WRITE_IMM, 2, 0, KR_ANY_SGE, true, false, true,
			      true},
    [KR_WR_SEND] = {MLX5_OPCODE_SEND, 1, 0, KR_ANY_SGE, false, false, false, true},
    [KR_WR_SEND_IMM] = {MLX5_OPCODE_SEND_IMM, 1, 0, KR_ANY_SGE, false, false, true, true},
    [KR_WR_RDMA_READ] = {MLX5_OPCODE_RDMA_READ, 2, 1, KR_ANY_SGE, true, false, false, false},
    [KR_WR_ATOMIC_CS] = {MLX5_OPCODE_ATOMIC_CS, 3, 1, 1, true, true, false, false},
    [KR_WR_ATOMIC_FA] = {MLX5_OPCODE_ATOMIC_FA, 3, 1, 1, true, true, false, false},
};

#define KR_WR_FLAGS_ALL (KR_WR_SIGNALED | KR_WR_INLINE | KR_WR_FENCE)
#define KR_AV_DS	(sizeof(struct mlx5_wqe_av) / KR_DS_SIZE)

/* Segment after seg (size bytes), wrapping at the end of the send ring. */
static inline uint8_t *kr_sq_next(const struct kr_devx_qp *qp, uint8_t *seg, size_t size,
				  const uint8_t *qend)
{
	seg += size;
	return kr_unlikely(seg == qend) ? qp->sq_buf : seg;
}

static inline void kr_set_ctrl_seg(struct mlx5_wqe_ctrl_seg *ctrl, uint32_t pi, uint8_t opcode,
				   uint32_t qpn, uint32_t ds, uint8_t fm_ce_se, uint32_t imm_be)
{
	ctrl->opmod_idx_opcode = htobe32(((pi & 0xffff) << 8) | opcode);
	ctrl->qpn_ds = htobe32((qpn << 8) | ds);
	ctrl->signature = 0;
	ctrl->dci_stream_channel_id = 0;
	ctrl->fm_ce_se = fm_ce_se;
	ctrl->imm = imm_be;
}

static inline void kr_set_av_seg(struct mlx5_wqe_av *av, const struct kr_devx_dc_av *dc)
{
	av->key.dc_key = htobe64(dc->dc_key);
	av->dqp_dct = htobe32(dc->dctn | MLX5_EXTENDED_UD_AV);
	av->stat_rate_sl = dc->stat_rate_sl;
	av->fl_mlid = 0;
	av->rlid = htobe16(dc->rlid); /* IB: DLID; RoCE v2: UDP source port */
	memset(av->reserved0, 0, sizeof(av->reserved0));
	memcpy(av->rmac, dc->rmac, sizeof(av->rmac));
	av->tclass = dc->tclass;
	av->hop_limit = dc->hop_limit;
	/* grh (bit 30) on IB only; sgid index in 27:20, flow label in 19:0 */
	av->grh_gid_fl = htobe32(((uint32_t)dc->grh << 30) | ((uint32_t)dc->sgid_index << 20) |
				 (dc->flow_label & 0xfffff));
	memcpy(av->rgid, dc->rgid, sizeof(av->rgid));
}

static inline void kr_set_raddr_seg(struct mlx5_wqe_raddr_seg *r, uint64_t addr, uint32_t rkey)
{
	r->raddr = htobe64(addr);
	r->rkey = htobe32(rkey);
	r->reserved = 0;
}

static inline void kr_set_atomic_seg(struct mlx5_wqe_atomic_seg *a, const struct kr_devx_wr *wr)
{
	if (wr->opcode == KR_WR_ATOMIC_CS) {
		a->swap_add = htobe64(wr->swap);
		a->compare = htobe64(wr->compare_add);
	} else {
		a->swap_add = htobe64(wr->compare_add);
		a->compare = 0;
	}
}

static inline void kr_set_data_seg(struct mlx5_wqe_data_seg *d, const struct kr_devx_sge *sge)
{
	d->byte_count = htobe32(sge->length);
	d->lkey = htobe32(sge->lkey);
	d->addr = htobe64(sge->addr);
}

/* Largest WQE the device takes on this QP, in 16-byte units. */
static inline uint32_t kr_max_ds(const struct kr_devx_qp *qp)
{
	uint32_t max_sz = qp->type == KR_DEVX_QP_DCI ? qp->ctx->caps.max_wqe_sz_sq_dc
						     : qp->ctx->caps.max_wqe_sz_sq;
	uint32_t ds = max_sz / KR_DS_SIZE;

	return (ds == 0 || ds > KR_WQE_MAX_DS) ? KR_WQE_MAX_DS : ds;
}

/*
 * Room for a WQE of ds units at the producer index: -EINVAL if it can never
 * fit (device limit; a one-WQEBB WQE always does; not checked when the caller
 * knows it fits), -EAGAIN if the ring is full now. *wqebbs gets its size in
 * WQEBBs.
 */
static inline int kr_sq_reserve(const struct kr_devx_qp *qp, uint32_t ds, uint32_t *wqebbs,
				bool fits)
{
	uint32_t n = (ds * KR_DS_SIZE + KR_WQEBB_SIZE - 1) >> KR_WQEBB_SHIFT;

	if (!fits && kr_unlikely(n > 1 && (ds > kr_max_ds(qp) || n > qp->sq_wqebb_cnt)))
		return -EINVAL;
	if (kr_unlikely(qp->sq_pi - qp->sq_ci + n > qp->sq_wqebb_cnt))
		return -EAGAIN;
	*wqebbs = n;
	return 0;
}

/*
 * Write ctrl, the AV (DCI; av_enc: copied from wr->av_wqe, else encoded from
 * wr->av), raddr and atomic segments at the producer index. Returns where the
 * data segments start.
 */
static inline __attribute__((always_inline)) uint8_t *
kr_sq_set_head(struct kr_devx_qp *qp, const struct kr_devx_wr *wr, const struct kr_wr_kind *kind,
	       uint32_t ds, const uint8_t *qend, bool av_enc)
{
	uint8_t *seg =
	    qp->sq_buf + ((size_t)(qp->sq_pi & (qp->sq_wqebb_cnt - 1)) << KR_WQEBB_SHIFT);
	uint8_t fm_ce_se = ((wr->flags & KR_WR_SIGNALED) ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
			   ((wr->flags & KR_WR_FENCE) ? MLX5_WQE_CTRL_FENCE : 0);

	kr_set_ctrl_seg((struct mlx5_wqe_ctrl_seg *)seg, qp->sq_pi, kind->mlx5_opcode, qp->qpn, ds,
			fm_ce_se, kind->has_imm ? htobe32(wr->imm) : 0);
	qp->sq_last_ctrl = seg;
	/* ctrl and the AV share the first WQEBB: no wrap check between them */
	seg += sizeof(struct mlx5_wqe_ctrl_seg);
	if (qp->type == KR_DEVX_QP_DCI) {
		if (av_enc)
			memcpy(seg, wr->av_wqe, sizeof(struct mlx5_wqe_av));
		else
			kr_set_av_seg((struct mlx5_wqe_av *)seg, wr->av);
		seg = kr_sq_next(qp, seg, sizeof(struct mlx5_wqe_av), qend);
	}
	if (kind->raddr) {
		kr_set_raddr_seg((struct mlx5_wqe_raddr_seg *)seg, wr->remote_addr, wr->rkey);
		seg = kr_sq_next(qp, seg, sizeof(struct mlx5_wqe_raddr_seg), qend);
	}
	if (kind->atomic) {
		kr_set_atomic_seg((struct mlx5_wqe_atomic_seg *)seg, wr);
		seg = kr_sq_next(qp, seg, sizeof(struct mlx5_wqe_atomic_seg), qend);
	}
	return seg;
}

/* Record the WQE that starts at the producer index and advance it. */
static inline void kr_sq_commit(struct kr_devx_qp *qp, uint64_t wr_id, uint32_t wqebbs)
{
	uint32_t idx = qp->sq_pi & (qp->sq_wqebb_cnt - 1);

	qp->sq_wrid[idx] = wr_id;
	qp->sq_pi += wqebbs;
	qp->sq_wqe_next[idx] = qp->sq_pi;
}

/*
 * devx_wqe.c: a WQE with its payload inline (WRITE/SEND with KR_WR_INLINE),
 * out of line so the common path stays small: for kr_devx_qp_post_send, and
 * for kr_devx_qp_post_checked (fits, encoded AV).
 */
int kr_devx_sq_post_inline(struct kr_devx_qp *qp, const struct kr_devx_wr *wr,
			   const struct kr_wr_kind *kind, uint32_t head_ds);
int kr_devx_sq_post_inline_checked(struct kr_devx_qp *qp, const struct kr_devx_wr *wr,
				   const struct kr_wr_kind *kind, uint32_t head_ds);

/*
 * The WQE of a request kr_devx_qp_post_send()'s rules accept; ds is its head
 * without the data; checked: kr_devx_qp_post_checked's (the caller knows it
 * is not larger than the device takes, a DCI's AV comes encoded).
 */
static inline __attribute__((always_inline)) int kr_post_send_checked(struct kr_devx_qp *qp,
								      const struct kr_devx_wr *wr,
								      const struct kr_wr_kind *kind,
								      uint32_t ds, bool checked)
{
	const struct kr_devx_sge *sge = wr->sge;
	uint32_t wqebbs, i, num_sge = wr->num_sge;
	const uint8_t *qend;
	uint8_t *seg;
	int ret;

	if (kr_unlikely(wr->flags & KR_WR_INLINE))
		return checked ? kr_devx_sq_post_inline_checked(qp, wr, kind, ds)
			       : kr_devx_sq_post_inline(qp, wr, kind, ds);
	ds += num_sge;
	ret = kr_sq_reserve(qp, ds, &wqebbs, checked);
	if (kr_unlikely(ret))
		return ret;
	qend = qp->sq_buf + ((size_t)qp->sq_wqebb_cnt << KR_WQEBB_SHIFT);
	seg = kr_sq_set_head(qp, wr, kind, ds, qend, checked);
	for (i = 0; i < num_sge; i++) {
		kr_set_data_seg((struct mlx5_wqe_data_seg *)seg, &sge[i]);
		seg = kr_sq_next(qp, seg, sizeof(struct mlx5_wqe_data_seg), qend);
	}
	kr_sq_commit(qp, wr->wr_id, wqebbs);
	return 0;
}

/*
 * kr_devx_qp_post_checked() - kr_devx_qp_post_send() for a caller that has
 * already checked wr against its rules (the vQP's checks are a superset)
 * and made sure its largest WQE fits (kr_devx_qp_max_wqe_ds): the same WQE
 * without checking again, a DCI's address taken encoded from wr->av_wqe
 * (kr_devx_dc_av_encode). A wr they refuse is undefined behaviour. -EAGAIN
 * (send queue full): nothing written. Inline: built into the caller, where
 * its opcode and SGE count are known.
 */
static inline __attribute__((always_inline)) int kr_devx_qp_post_checked(struct kr_devx_qp *qp,
									 const struct kr_devx_wr *wr)
{
	const struct kr_wr_kind *kind = &kr_wr_kinds[wr->opcode];

	return kr_post_send_checked(
	    qp, wr, kind, kind->head_ds + (qp->type == KR_DEVX_QP_DCI ? KR_AV_DS : 0), true);
}

#endif /* KR_DEVX_WQE_H */
