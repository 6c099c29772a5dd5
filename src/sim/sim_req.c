/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requester: send WQEs from the SQ ring -> request packets.
 *
 * Who owns what: software writes WQEs and the producer counter
 * dbrec[MLX5_SND_DBR] (16 bits, big-endian); the engine owns every index
 * below and only reads the ring. sh->qp[].sq_ci is the completion counter the
 * engine publishes (WQEBBs software may reuse).
 *
 *   head <= send <= fetch <= producer         (free-running WQEBB counters)
 *   head:  oldest WQE taken and not completed (== sh->qp[].sq_ci)
 *   send:  WQE being transmitted, send_pkt its next packet; moved back by
 *          sim_req_rewind() for go-back-N retransmission
 *   fetch: next WQE to take from the ring
 *
 * Taking a WQE copies it into a shadow ring (software cannot change a WQE in
 * flight under us), checks it like hardware (opcode, size, segments, local
 * keys), gives it its PSNs and records it. A WQE that fails a check is
 * recorded with its syndrome and completes with that error when it reaches
 * the head, after the WQEs before it; nothing after it is taken.
 *
 * Gates (hardware rules), checked before a WQE is taken:
 *   - fence: earlier READ/atomics must be complete;
 *   - at most 1 << log_sra_max READ/atomics outstanding;
 *   - DCI: the target (DCT number and GID) changes only when nothing is
 *     outstanding; every start from idle is a new DC connection, numbered
 *     from one counter per host (24 bits, increasing: a DCT tells a late
 *     packet of an earlier connection by it, see sim_resp.c).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"

#define SIM_REQ_WINDOW	 256u /* packets in flight per QP */
#define SIM_REQ_BURST	 64u  /* packets per QP per pass */
#define SIM_ACKREQ_EVERY 32u  /* ask for an ACK at least this often */
#define SIM_WQEBB	 64u
#define SIM_SHADOW_EXTRA (SIM_MAX_WQE_SZ_SQ / SIM_WQEBB)

static bool sim_op_is_rd_atomic(uint8_t op)
{
	return op == MLX5_OPCODE_RDMA_READ || op == MLX5_OPCODE_ATOMIC_CS ||
	       op == MLX5_OPCODE_ATOMIC_FA;
}

static uint64_t sim_sq_offset(const struct sim_qp *q)
{
	uint64_t rq = 0;

	if (q->st == KR_QPC_ST_RC && q->rq_type == KR_QPC_RQ_TYPE_REGULAR)
		rq = (1ull << q->log_rq_size) * (16ull << q->log_rq_stride);
	return q->wq_umem_offset + ((rq + 63) & ~63ull);
}

static uint8_t *sim_sq_ring(struct sim_engine *eng, uint32_t qpi)
{
	const struct sim_qp *q = &eng->sh->qp[qpi];

	if (q->log_sq_size > SIM_LOG_MAX_QP_SZ || q->log_rq_size > SIM_LOG_MAX_QP_SZ ||
	    q->log_rq_stride > 7)
		return NULL;
	return sim_umem_ptr(eng->dev, q->wq_umem_id, sim_sq_offset(q),
			    (uint64_t)SIM_WQEBB << q->log_sq_size);
}

/* WQEBBs software produced, from the 16-bit doorbell record counter. */
static bool sim_sq_producer(struct sim_engine *eng, uint32_t qpi, uint16_t *pi)
{
	volatile uint32_t *dbrec = sim_qp_dbrec(eng, qpi);

	if (!dbrec)
		return false;
	/* acquire: the producer counter before the WQE bytes it publishes */
	*pi = (uint16_t)(be32toh(__atomic_load_n(&dbrec[MLX5_SND_DBR], __ATOMIC_ACQUIRE)) & 0xffff);
	return true;
}

/*
 * The producer counter as of the last doorbell rung through the QP's own UAR
 * page: hardware takes new WQEs when that page is rung, and a doorbell
 * written through any other page (another tenant's) says nothing about this
 * QP. The record is read again only after such a ring; what it said then
 * stays fetchable (a fetch held back by the READ window or a fence goes on
 * without another ring). The page's ring count is read before the record
 * (acquire, against sim_doorbell's release), so a ring is never missed.
 */
static bool sim_sq_rung_producer(struct sim_engine *eng, uint32_t qpi, uint16_t *pi)
{
	const struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	struct sim_bell *b;
	uint64_t rung;

	if (!q->uar_page || q->uar_page > SIM_MAX_UAR || !(b = eng->dev->bell[q->uar_page - 1]))
		return false; /* no page to be rung through: nothing is taken */
	rung = atomic_load_explicit(&b->rung, memory_order_acquire);
	if (!r->pi_rung_ok || rung != r->rung_seen) {
		if (!sim_sq_producer(eng, qpi, &r->pi_rung))
			return false;
		r->rung_seen = rung;
		r->pi_rung_ok = true;
	}
	*pi = r->pi_rung;
	return true;
}

void sim_req_reset(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_req *r = &eng->req[qpi];

	free(r->wqe);
	free(r->shadow);
	memset(r, 0, sizeof(*r));
}

static bool sim_req_alloc(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	uint32_t n;

	if (q->log_sq_size > SIM_LOG_MAX_QP_SZ || q->no_sq)
		return false;
	n = 1u << q->log_sq_size;
	r->wqe = calloc(n, sizeof(*r->wqe));
	r->shadow = malloc((size_t)(n + SIM_SHADOW_EXTRA) * SIM_WQEBB);
	if (!r->wqe || !r->shadow) {
		free(r->wqe);
		free(r->shadow);
		r->wqe = NULL;
		r->shadow = NULL;
		return false;
	}
	r->nslots = n;
	r->retry_left = q->retry_count;
	r->rnr_left = q->rnr_retry;
	return true;
}

static const uint8_t *sim_req_shadow(struct sim_req *r, const struct sim_swqe *w)
{
	return r->shadow + (size_t)(w->idx & (r->nslots - 1)) * SIM_WQEBB;
}

/*
 * sim_req_check_ring() - see sim_engine.h. The shadow holds a WQE's WQEBBs
 * contiguously from its slot; the ring wraps.
 */
void sim_req_check_ring(struct sim_engine *eng, uint32_t qpi, const struct sim_swqe *w)
{
	struct sim_req *r = &eng->req[qpi];
	const uint8_t *sq = sim_sq_ring(eng, qpi);
	uint32_t mask = r->nslots - 1, nbb = w->next - w->idx;

	if (!sq || !r->nslots || w->err_synd || nbb > SIM_SHADOW_EXTRA)
		return; /* nothing was copied whole, or the ring is gone */
	for (uint32_t b = 0; b < nbb; b++)
		if (memcmp(sim_req_shadow(r, w) + (size_t)b * SIM_WQEBB,
			   sq + (size_t)((w->idx + b) & mask) * SIM_WQEBB, SIM_WQEBB)) {
			SIM_STAT_INC(eng->sh, sq_rewrites);
			KR_ERR_RATELIMITED("sim",
					   "qp 0x%x: WQE %u rewritten before its completion (a "
					   "ConnectX would send the new bytes)",
					   SIM_QPN_BASE + qpi, w->idx);
			return;
		}
}

/*
 * Parse the WQE at idx (avail WQEBBs published, room free in the shadow) into
 * w. Sets w->err_synd when the WQE is malformed or names memory it may not
 * use. Returns 0, or -EAGAIN when it does not fit before the head yet.
 */
static int sim_req_parse(struct sim_engine *eng, uint32_t qpi, const uint8_t *sq, uint32_t idx,
			 uint32_t avail, uint32_t room, struct sim_swqe *w)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	uint32_t mask = r->nslots - 1, slot = idx & mask, ds, nbb, off, end, b, i, need;
	uint32_t max = q->st == KR_QPC_ST_DCI ? SIM_MAX_WQE_SZ_SQ_DC : SIM_MAX_WQE_SZ_SQ;
	const struct mlx5_wqe_ctrl_seg *ctrl = (const void *)(sq + (size_t)slot * SIM_WQEBB);
	const uint8_t *p;
	uint64_t total = 0;

	memset(w, 0, sizeof(*w));
	w->idx = idx;
	w->next = idx + 1;
	w->opcode = be32toh(ctrl->opmod_idx_opcode) & 0xff;
	ds = be32toh(ctrl->qpn_ds) & 0x3f;
	if (!ds || ds * 16 > max) {
		w->err_synd = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		return 0;
	}
	nbb = (ds * 16 + SIM_WQEBB - 1) / SIM_WQEBB;
	if (nbb > avail) {
		w->err_synd = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		return 0;
	}
	if (nbb > room)
		return -EAGAIN;
	/* copy it, contiguous even where the ring wraps */
	for (b = 0; b < nbb; b++)
		memcpy(r->shadow + (size_t)(slot + b) * SIM_WQEBB,
		       sq + (size_t)((slot + b) & mask) * SIM_WQEBB, SIM_WQEBB);
	p = r->shadow + (size_t)slot * SIM_WQEBB;
	ctrl = (const void *)p;
	w->next = idx + nbb;
	w->fm_ce_se = ctrl->fm_ce_se;
	w->imm = ctrl->imm;
	off = sizeof(struct mlx5_wqe_ctrl_seg);
	end = ds * 16;

	switch (w->opcode) {
	case MLX5_OPCODE_NOP:
		return 0;
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
	case MLX5_OPCODE_SEND:
	case MLX5_OPCODE_SEND_IMM:
	case MLX5_OPCODE_RDMA_READ:
	case MLX5_OPCODE_ATOMIC_CS:
	case MLX5_OPCODE_ATOMIC_FA:
		break;
	default:
		goto bad_wqe;
	}

	/* hardware refuses an atomic from a DCI whose INIT2RTR did not enable them */
	if (q->st == KR_QPC_ST_DCI && !q->rae &&
	    (w->opcode == MLX5_OPCODE_ATOMIC_CS || w->opcode == MLX5_OPCODE_ATOMIC_FA))
		goto bad_wqe;
	if (q->st == KR_QPC_ST_DCI) {
		const struct mlx5_wqe_av *av = (const void *)(p + off);

		if (off + sizeof(*av) > end)
			goto bad_wqe;
		w->dc_key = be64toh(av->key.dc_key);
		w->dctn = be32toh(av->dqp_dct) & 0xffffff;
		w->udp_sport = be16toh(av->rlid);
		memcpy(w->rgid, av->rgid, 16);
		memcpy(w->rmac, av->rmac, 6);
		w->sgid_index = (uint8_t)(be32toh(av->grh_gid_fl) >> 20);
		off += sizeof(*av);
	} else if (q->st != KR_QPC_ST_RC) {
		goto bad_wqe;
	}

	if (w->opcode == MLX5_OPCODE_RDMA_WRITE || w->opcode == MLX5_OPCODE_RDMA_WRITE_IMM ||
	    sim_op_is_rd_atomic(w->opcode)) {
		const struct mlx5_wqe_raddr_seg *ra = (const void *)(p + off);

		if (off + sizeof(*ra) > end)
			goto bad_wqe;
		w->raddr = be64toh(ra->raddr);
		w->rkey = be32toh(ra->rkey);
		off += sizeof(*ra);
	}
	if (w->opcode == MLX5_OPCODE_ATOMIC_CS || w->opcode == MLX5_OPCODE_ATOMIC_FA) {
		const struct mlx5_wqe_atomic_seg *at = (const void *)(p + off);

		if (off + sizeof(*at) > end)
			goto bad_wqe;
		w->swap_add = be64toh(at->swap_add);
		w->compare = w->opcode == MLX5_OPCODE_ATOMIC_CS ? be64toh(at->compare) : 0;
		off += sizeof(*at);
	}

	/* payload: one inline segment, or data segments to the end of the WQE */
	w->sge_off = off;
	if (off + 4 <= end && (be32toh(*(const uint32_t *)(p + off)) & MLX5_INLINE_SEG)) {
		uint32_t len = be32toh(*(const uint32_t *)(p + off)) & ~MLX5_INLINE_SEG;

		if ((w->opcode != MLX5_OPCODE_RDMA_WRITE &&
		     w->opcode != MLX5_OPCODE_RDMA_WRITE_IMM && w->opcode != MLX5_OPCODE_SEND &&
		     w->opcode != MLX5_OPCODE_SEND_IMM) ||
		    off + 4 + len > end)
			goto bad_wqe;
		w->inl = 1;
		w->sge_off = off + 4;
		total = len;
	} else {
		need = sim_op_is_rd_atomic(w->opcode) ? KR_ACCESS_LOCAL_WRITE : 0;
		for (i = off; i + sizeof(struct mlx5_wqe_data_seg) <= end;
		     i += sizeof(struct mlx5_wqe_data_seg)) {
			const struct mlx5_wqe_data_seg *d = (const void *)(p + i);
			uint32_t len = be32toh(d->byte_count);

			if (len & MLX5_INLINE_SEG)
				goto bad_wqe;
			w->nsge++;
			if (!len)
				continue;
			total += len;
			if (!sim_mem_translate(eng->dev, be32toh(d->lkey), q->pdn, be64toh(d->addr),
					       len, need, false)) {
				w->err_synd = MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
				return 0;
			}
		}
	}
	if (total > (1ull << SIM_LOG_MAX_MSG)) {
		w->err_synd = MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
		return 0;
	}
	w->len = (uint32_t)total;
	if (w->opcode == MLX5_OPCODE_ATOMIC_CS || w->opcode == MLX5_OPCODE_ATOMIC_FA) {
		if (w->inl || w->nsge != 1 || w->len != 8)
			goto bad_wqe;
		w->npkts = 1;
	} else {
		uint32_t mtu = sim_mtu_bytes(q->mtu);

		w->npkts = w->len ? (w->len + mtu - 1) / mtu : 1;
	}
	return 0;

bad_wqe:
	w->err_synd = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	return 0;
}

int sim_req_copy(struct sim_engine *eng, uint32_t qpi, const struct sim_swqe *w, uint32_t off,
		 void *data, uint32_t len, bool to_wqe)
{
	struct sim_req *r = &eng->req[qpi];
	const uint8_t *p = sim_req_shadow(r, w) + w->sge_off;
	uint8_t *buf = data;
	uint32_t i;

	if (w->inl) {
		if (to_wqe || off + len > w->len)
			return -EFAULT;
		memcpy(buf, p + off, len);
		return 0;
	}
	for (i = 0; i < w->nsge && len; i++) {
		const struct mlx5_wqe_data_seg *d = (const void *)(p + i * sizeof(*d));
		uint32_t seg = be32toh(d->byte_count), n;
		void *mem;

		if (off >= seg) {
			off -= seg;
			continue;
		}
		n = seg - off < len ? seg - off : len;
		mem = sim_mem_translate(eng->dev, be32toh(d->lkey), eng->sh->qp[qpi].pdn,
					be64toh(d->addr) + off, n,
					to_wqe ? KR_ACCESS_LOCAL_WRITE : 0, false);
		if (!mem)
			return -EFAULT;
		if (to_wqe)
			memcpy(mem, buf, n);
		else
			memcpy(buf, mem, n);
		buf += n;
		len -= n;
		off = 0;
	}
	return len ? -EFAULT : 0;
}

/* Take WQEs from the ring up to the producer counter, as the gates allow. */
static void sim_req_fetch(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	struct sim_swqe w;
	const uint8_t *sq;
	uint16_t pi;

	if (r->blocked || !sim_sq_rung_producer(eng, qpi, &pi) || pi == (uint16_t)r->fetch)
		return;
	sq = sim_sq_ring(eng, qpi);
	if (!sq) {
		KR_ERR_RATELIMITED("sim", "qp 0x%x: send queue outside its umem",
				   SIM_QPN_BASE + qpi);
		return;
	}
	while (!r->blocked) {
		uint32_t avail = (uint16_t)(pi - (uint16_t)r->fetch);
		uint32_t room = r->nslots - (r->fetch - r->head);

		if (!avail || !room)
			break;
		if (avail > r->nslots) {
			/* garbage producer counter: fail the QP at the next WQE */
			memset(&w, 0, sizeof(w));
			w.idx = r->fetch;
			w.next = r->fetch + 1;
			w.err_synd = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		} else if (sim_req_parse(eng, qpi, sq, r->fetch, avail, room, &w)) {
			break; /* software is ahead of completions: not ours to take yet */
		}
		if (!w.err_synd) {
			bool rd_atomic = sim_op_is_rd_atomic(w.opcode);

			/* any fence mode (fm_ce_se bits 7:5) waits for earlier READ/atomics */
			if ((w.fm_ce_se & 0xe0) && r->n_rd_atomic)
				break;
			if (rd_atomic && r->n_rd_atomic >= (1u << q->log_sra_max))
				break;
			if (q->st == KR_QPC_ST_DCI && w.opcode != MLX5_OPCODE_NOP) {
				if (r->head != r->fetch &&
				    (w.dctn != r->dctn || memcmp(w.rgid, r->rgid, 16)))
					break; /* switch targets only when idle */
				if (r->head == r->fetch) {
					r->dc_conn = ++eng->dc_conn_seq & SIM_PSN_MASK;
					r->dc_conn_psn = q->next_send_psn;
					r->dctn = w.dctn;
					memcpy(r->rgid, w.rgid, 16);
				}
			}
			w.first_psn = q->next_send_psn;
			q->next_send_psn = sim_psn_add(q->next_send_psn, w.npkts);
			if (rd_atomic)
				r->n_rd_atomic++;
		} else {
			r->blocked = true;
			KR_DP_LOG("sim", "qp 0x%x: WQE %u fails with syndrome 0x%x",
				  SIM_QPN_BASE + qpi, w.idx, w.err_synd);
		}
		*sim_req_wqe(r, w.idx) = w;
		r->fetch = w.next;
		eng->work = true;
	}
}

static void sim_req_address(struct sim_engine *eng, uint32_t qpi, const struct sim_swqe *w,
			    struct sim_pkt *pkt)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];

	memcpy(pkt->sgid, eng->gid, 16);
	pkt->sqpn = SIM_QPN_BASE + qpi;
	pkt->hop_limit = q->hop_limit;
	if (q->st == KR_QPC_ST_DCI) {
		memcpy(pkt->dgid, w->rgid, 16);
		pkt->dqpn = w->dctn;
		pkt->dc = 1;
		pkt->dc_key = w->dc_key;
		pkt->dc_conn = r->dc_conn;
		pkt->dc_conn_psn = r->dc_conn_psn;
		pkt->udp_sport = w->udp_sport;
		memcpy(pkt->dmac, w->rmac, 6);
		pkt->sgid_index = w->sgid_index;
	} else {
		memcpy(pkt->dgid, q->rgid, 16);
		pkt->dqpn = q->remote_qpn;
		memcpy(pkt->dmac, q->rmac, 6);
		pkt->sgid_index = q->sgid_index;
	}
}

static const uint8_t sim_send_ops[2][2][2] = {
    /* [imm][first][last] */
    {{SIM_OP_SEND_MIDDLE, SIM_OP_SEND_LAST}, {SIM_OP_SEND_FIRST, SIM_OP_SEND_ONLY}},
    {{SIM_OP_SEND_MIDDLE, SIM_OP_SEND_LAST_IMM}, {SIM_OP_SEND_FIRST, SIM_OP_SEND_ONLY_IMM}},
};
static const uint8_t sim_write_ops[2][2][2] = {
    {{SIM_OP_WRITE_MIDDLE, SIM_OP_WRITE_LAST}, {SIM_OP_WRITE_FIRST, SIM_OP_WRITE_ONLY}},
    {{SIM_OP_WRITE_MIDDLE, SIM_OP_WRITE_LAST_IMM}, {SIM_OP_WRITE_FIRST, SIM_OP_WRITE_ONLY_IMM}},
};

/* Send packet k of w. Returns 0, -ENOMEM (try later), -EFAULT (local memory gone). */
static int sim_req_send_pkt(struct sim_engine *eng, uint32_t qpi, struct sim_swqe *w, uint32_t k)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	uint32_t mtu = sim_mtu_bytes(q->mtu), off = k * mtu, plen = 0;
	bool first = k == 0, last = k + 1 == w->npkts;
	struct sim_pkt *pkt;
	int imm;

	switch (w->opcode) {
	case MLX5_OPCODE_SEND:
	case MLX5_OPCODE_SEND_IMM:
	case MLX5_OPCODE_RDMA_WRITE:
	case MLX5_OPCODE_RDMA_WRITE_IMM:
		plen = w->len - off < mtu ? w->len - off : mtu;
		pkt = sim_pkt_alloc(plen);
		if (!pkt)
			return -ENOMEM;
		if (plen && sim_req_copy(eng, qpi, w, off, pkt->payload, plen, false)) {
			sim_pkt_free(pkt);
			return -EFAULT;
		}
		imm = w->opcode == MLX5_OPCODE_SEND_IMM || w->opcode == MLX5_OPCODE_RDMA_WRITE_IMM;
		if (w->opcode == MLX5_OPCODE_SEND || w->opcode == MLX5_OPCODE_SEND_IMM) {
			pkt->opcode = sim_send_ops[imm][first][last];
		} else {
			pkt->opcode = sim_write_ops[imm][first][last];
			if (first) {
				pkt->va = w->raddr;
				pkt->rkey = w->rkey;
				pkt->dma_len = w->len;
			}
		}
		if (imm && last)
			pkt->imm = w->imm;
		pkt->ackreq = last || (k % SIM_ACKREQ_EVERY) == SIM_ACKREQ_EVERY - 1;
		pkt->se = last && (w->fm_ce_se & MLX5_WQE_CTRL_SOLICITED);
		break;
	case MLX5_OPCODE_RDMA_READ:
		pkt = sim_pkt_alloc(0);
		if (!pkt)
			return -ENOMEM;
		pkt->opcode = SIM_OP_READ_REQUEST;
		pkt->va = w->raddr + off;
		pkt->rkey = w->rkey;
		pkt->dma_len = w->len - (off < w->len ? off : w->len);
		pkt->ackreq = 1;
		break;
	default: /* atomics */
		pkt = sim_pkt_alloc(0);
		if (!pkt)
			return -ENOMEM;
		pkt->opcode =
		    w->opcode == MLX5_OPCODE_ATOMIC_CS ? SIM_OP_COMPARE_SWAP : SIM_OP_FETCH_ADD;
		pkt->va = w->raddr;
		pkt->rkey = w->rkey;
		pkt->dma_len = 8;
		pkt->swap_add = w->swap_add;
		pkt->compare = w->compare;
		pkt->ackreq = 1;
		break;
	}
	pkt->psn = sim_psn_add(w->first_psn, k);
	sim_req_address(eng, qpi, w, pkt);
	if (k < w->sent_pkts)
		SIM_STAT_INC(eng->sh, retransmits);
	sim_wire_send(eng, pkt);

	/* a READ request asks for all its remaining responses at once */
	r->send_pkt = w->opcode == MLX5_OPCODE_RDMA_READ ? w->npkts : k + 1;
	if (r->send_pkt > w->sent_pkts)
		w->sent_pkts = r->send_pkt;
	if (!r->rto_deadline) {
		uint64_t rto = sim_rto_ns(q->ack_timeout);

		/* the timer runs from this transmission: eng->now dates from the
		 * start of the pass, which a preempted engine may have left long ago */
		if (rto)
			r->rto_deadline = sim_now_ns() + rto;
	}
	eng->work = true;
	return 0;
}

/* Transmit from the send pointer, within the window and this pass's burst. */
static void sim_req_transmit(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_req *r = &eng->req[qpi];
	uint32_t budget = SIM_REQ_BURST < eng->tx_budget ? SIM_REQ_BURST : eng->tx_budget;

	if (r->rnr_deadline)
		return;
	while (budget && r->send != r->fetch) {
		struct sim_swqe *w = sim_req_wqe(r, r->send);
		const struct sim_swqe *h = sim_req_wqe(r, r->head);
		uint32_t oldest;
		int rc;

		if (w->err_synd)
			break;
		if (r->send_pkt >= w->npkts) { /* NOPs have none */
			r->send = w->next;
			r->send_pkt = 0;
			continue;
		}
		oldest = sim_psn_add(h->first_psn, h->done_pkts);
		if (h->npkts && sim_psn_cmp(sim_psn_add(w->first_psn, r->send_pkt), oldest) >=
				    (int32_t)SIM_REQ_WINDOW)
			break;
		rc = sim_req_send_pkt(eng, qpi, w, r->send_pkt);
		if (rc == -ENOMEM)
			break;
		if (rc) {
			/* local memory went away under a WQE in flight */
			w->err_synd = MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
			r->blocked = true;
			break;
		}
		budget--;
		eng->tx_budget--;
	}
	if (!eng->tx_budget)
		eng->work = true; /* more to send: come back at once */
}

/* Complete WQEs at the head that need no answer: NOPs, and ones that failed. */
static void sim_req_complete_local(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_req *r = &eng->req[qpi];

	while (eng->sh->qp[qpi].state == KR_QPC_STATE_RTS && r->head != r->fetch) {
		const struct sim_swqe *w = sim_req_wqe(r, r->head);

		if (w->err_synd)
			sim_comp_head(eng, qpi, w->err_synd);
		else if (w->opcode == MLX5_OPCODE_NOP)
			sim_comp_head(eng, qpi, 0);
		else
			break;
	}
}

void sim_req_progress(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];

	if (!r->nslots && !sim_req_alloc(eng, qpi))
		return; /* no send queue (or no memory: retried next pass) */
	sim_comp_timers(eng, qpi);
	sim_req_complete_local(eng, qpi);
	if (q->state != KR_QPC_STATE_RTS)
		return;
	sim_req_fetch(eng, qpi);
	sim_req_complete_local(eng, qpi);
	if (q->state != KR_QPC_STATE_RTS)
		return;
	sim_req_transmit(eng, qpi);
	sim_engine_timer(eng, r->rto_deadline);
	sim_engine_timer(eng, r->rnr_deadline);
}

/* sim_req_idle() - see sim_engine.h. */
bool sim_req_idle(struct sim_engine *eng, uint32_t qpi)
{
	const struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	uint16_t pi;

	if (q->state != KR_QPC_STATE_RTS || r->head != r->fetch || r->rnr_deadline || r->blocked)
		return false;
	return !sim_sq_rung_producer(eng, qpi, &pi) || pi == (uint16_t)r->fetch;
}

void sim_req_rewind(struct sim_engine *eng, uint32_t qpi, uint32_t psn)
{
	struct sim_req *r = &eng->req[qpi];
	uint32_t idx;

	for (idx = r->head; idx != r->fetch; idx = sim_req_wqe(r, idx)->next)
		sim_req_check_ring(eng, qpi, sim_req_wqe(r, idx)); /* hardware reads them again */
	for (idx = r->head; idx != r->send; idx = sim_req_wqe(r, idx)->next) {
		struct sim_swqe *w = sim_req_wqe(r, idx);
		int32_t d = sim_psn_cmp(psn, w->first_psn);

		if (w->npkts && d >= 0 && (uint32_t)d < w->npkts) {
			r->send = idx;
			r->send_pkt = (uint32_t)d;
			return;
		}
	}
	if (r->send != r->fetch) {
		struct sim_swqe *w = sim_req_wqe(r, r->send);
		int32_t d = sim_psn_cmp(psn, w->first_psn);

		if (d >= 0 && (uint32_t)d < r->send_pkt)
			r->send_pkt = (uint32_t)d;
	}
}

void sim_req_flush(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	uint32_t n, avail, qpn = SIM_QPN_BASE + qpi;
	const uint8_t *sq;
	uint16_t pi;

	/* taken and not completed */
	while (r->nslots && r->head != r->fetch) {
		const struct sim_swqe *w = sim_req_wqe(r, r->head);

		sim_req_check_ring(eng, qpi, w);
		sim_cqe_write_err(eng, q->cqn_snd, MLX5_CQE_REQ_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
				  w->opcode, qpn, w->idx & 0xffff, q->user_index);
		r->head = w->next;
		eng->work = true;
	}
	r->head = r->send = r->fetch;
	r->send_pkt = 0;
	r->n_rd_atomic = 0;
	r->blocked = false;
	r->read_gap = false;
	r->rto_deadline = 0;
	r->rnr_deadline = 0;

	/* posted and never taken */
	if (q->no_sq || q->log_sq_size > SIM_LOG_MAX_QP_SZ || !sim_sq_producer(eng, qpi, &pi))
		goto out;
	n = 1u << q->log_sq_size;
	avail = (uint16_t)(pi - (uint16_t)r->fetch);
	sq = sim_sq_ring(eng, qpi);
	if (avail > n || !sq) {
		r->fetch += avail; /* garbage: drop it rather than flush a ring many times over */
		goto out;
	}
	while (avail) {
		const struct mlx5_wqe_ctrl_seg *ctrl =
		    (const void *)(sq + (size_t)(r->fetch & (n - 1)) * SIM_WQEBB);
		uint32_t ds = be32toh(ctrl->qpn_ds) & 0x3f;
		uint32_t nbb = (ds * 16 + SIM_WQEBB - 1) / SIM_WQEBB;

		if (!nbb || nbb > avail)
			nbb = 1;
		sim_cqe_write_err(eng, q->cqn_snd, MLX5_CQE_REQ_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR,
				  be32toh(ctrl->opmod_idx_opcode) & 0xff, qpn, r->fetch & 0xffff,
				  q->user_index);
		r->fetch += nbb;
		avail -= nbb;
		eng->work = true;
	}
out:
	r->head = r->send = r->fetch;
	q->sq_ci = r->fetch;
}
