/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completer: ACK, NAK, READ and atomic responses -> send CQEs, in WQE order.
 *
 * A response packet is matched against the head WQE (the oldest taken and
 * not completed), as in rxe's completer state machine:
 *   - PSN before the head's first PSN: a duplicate, ignored;
 *   - PSN past the head's last PSN: the head is implicitly acknowledged if it
 *     is a SEND/WRITE (complete it, look at the next WQE); a READ or atomic
 *     whose response never came is retransmitted;
 *   - PSN within the head: ACK (cumulative, may be partial for a long
 *     message), READ response (must be the next expected one: placed, then
 *     the READ completes with its last), atomic ACK (original value to the
 *     local buffer), RNR NAK (wait the responder's timer, resend from there),
 *     sequence NAK (resend from there), other NAKs (error CQE, QP to ERR).
 * Retry counters (retry_count for timeouts and sequence NAKs, rnr_retry for
 * RNR NAKs, 7 = infinite) reset whenever a packet moves the head forward.
 */
#include <endian.h>
#include <string.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"

/* IBTA RNR NAK timer field -> microseconds (table 45; code 0 is the longest). */
/* clang-format off */
static const uint32_t sim_rnr_table_usec[32] = {
	655360, 10,     20,     30,     40,     60,     80,     120,
	160,    240,    320,    480,    640,    960,    1280,   1920,
	2560,   3840,   5120,   7680,   10240,  15360,  20480,  30720,
	40960,  61440,  81920,  122880, 163840, 245760, 327680, 491520,
};
/* clang-format on */

uint32_t sim_rnr_usec(uint8_t code)
{
	return sim_rnr_table_usec[code & 31];
}

uint64_t sim_rto_ns(uint8_t ack_timeout)
{
	/* 4.096 us * 2^ack_timeout; 0 means no timeout (IBTA: infinite) */
	if (!ack_timeout)
		return 0;
	if (ack_timeout > 31)
		ack_timeout = 31;
	return 4096ull << ack_timeout;
}

static bool sim_comp_outstanding(struct sim_req *r)
{
	return r->head != r->fetch && sim_req_wqe(r, r->head)->sent_pkts;
}

/* Something moved forward: fresh retry budget, fresh timer. */
static void sim_comp_progress(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	uint64_t rto = sim_rto_ns(q->ack_timeout);

	r->retry_left = q->retry_count;
	r->rnr_left = q->rnr_retry;
	r->rto_deadline = rto && sim_comp_outstanding(r) ? eng->now + rto : 0;
	eng->work = true;
}

void sim_comp_head(struct sim_engine *eng, uint32_t qpi, uint8_t synd)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	struct sim_swqe *w = sim_req_wqe(r, r->head);
	uint32_t qpn = SIM_QPN_BASE + qpi;

	sim_req_check_ring(eng, qpi, w); /* software left it alone until now */
	if (synd) {
		KR_DP_LOG("sim", "qp 0x%x: WQE %u completes with syndrome 0x%x", qpn, w->idx, synd);
		/* ERR before the CQE: whoever sees the CQE and queries finds ERR */
		q->state = KR_QPC_STATE_ERR;
		sim_cqe_write_err(eng, q->cqn_snd, MLX5_CQE_REQ_ERR, synd, w->opcode, qpn,
				  w->idx & 0xffff, q->user_index);
	} else if (w->fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE) {
		struct mlx5_cqe64 cqe;

		memset(&cqe, 0, sizeof(cqe));
		cqe.sop_drop_qpn = htobe32(((uint32_t)w->opcode << 24) | qpn);
		cqe.wqe_counter = htobe16(w->idx & 0xffff);
		cqe.srqn_uidx = htobe32(q->user_index & 0xffffff);
		if (w->opcode == MLX5_OPCODE_RDMA_READ)
			cqe.byte_cnt = htobe32(w->len);
		else if (w->opcode == MLX5_OPCODE_ATOMIC_CS || w->opcode == MLX5_OPCODE_ATOMIC_FA)
			cqe.byte_cnt = htobe32(8);
		sim_cqe_write(eng, q->cqn_snd, &cqe, MLX5_CQE_REQ);
	}
	if (w->opcode == MLX5_OPCODE_RDMA_READ || w->opcode == MLX5_OPCODE_ATOMIC_CS ||
	    w->opcode == MLX5_OPCODE_ATOMIC_FA)
		if (!w->err_synd && r->n_rd_atomic)
			r->n_rd_atomic--;
	if (r->send == r->head) {
		r->send = w->next;
		r->send_pkt = 0;
	}
	r->head = w->next;
	q->sq_ci = r->head;
	r->read_gap = false;
	/* nothing left in flight: no timer, the next transmission starts a fresh one */
	if (!sim_comp_outstanding(r))
		r->rto_deadline = 0;
	eng->work = true;
	if (synd)
		sim_engine_qp_fail(eng, qpi);
}

/* Transmit again from psn; count a retry. False if the budget is spent (QP failed). */
static bool sim_comp_retry(struct sim_engine *eng, uint32_t qpi, uint32_t psn)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	uint64_t rto = sim_rto_ns(q->ack_timeout);

	if (!r->retry_left) {
		SIM_STAT_INC(eng->sh, retry_exc);
		sim_comp_head(eng, qpi, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
		return false;
	}
	r->retry_left--;
	sim_req_rewind(eng, qpi, psn);
	r->rto_deadline = rto ? eng->now + rto : 0;
	eng->work = true;
	return true;
}

/* PSN the head WQE resumes from: its first packet not yet answered. */
static uint32_t sim_comp_resume_psn(struct sim_req *r)
{
	const struct sim_swqe *w = sim_req_wqe(r, r->head);

	return sim_psn_add(w->first_psn, w->done_pkts);
}

void sim_comp_timers(struct sim_engine *eng, uint32_t qpi)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];

	if (r->rnr_deadline && eng->now >= r->rnr_deadline) {
		uint64_t rto = sim_rto_ns(q->ack_timeout);

		r->rnr_deadline = 0; /* the send pointer was rewound when the NAK came */
		r->rto_deadline = rto ? eng->now + rto : 0;
		eng->work = true;
	}
	if (r->rto_deadline && eng->now >= r->rto_deadline) {
		r->rto_deadline = 0;
		if (!sim_comp_outstanding(r))
			return;
		KR_DP_LOG("sim", "qp 0x%x: retransmission timeout at psn 0x%x", SIM_QPN_BASE + qpi,
			  sim_comp_resume_psn(r));
		SIM_STAT_INC(eng->sh, timeouts);
		sim_comp_retry(eng, qpi, sim_comp_resume_psn(r));
	}
}

static void sim_comp_rnr(struct sim_engine *eng, uint32_t qpi, struct sim_swqe *w,
			 const struct sim_pkt *pkt)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	uint32_t d = (uint32_t)sim_psn_cmp(pkt->psn, w->first_psn);

	if (d > w->done_pkts) {
		w->done_pkts = d; /* a NAK acknowledges the packets before it */
		sim_comp_progress(eng, qpi);
	}
	if (!r->rnr_left) {
		sim_comp_head(eng, qpi, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
		return;
	}
	if (q->rnr_retry != 7)
		r->rnr_left--;
	sim_req_rewind(eng, qpi, pkt->psn);
	r->rnr_deadline = eng->now + (uint64_t)sim_rnr_usec(pkt->syndrome & 0x1f) * 1000;
	r->rto_deadline = 0;
	eng->work = true;
}

static void sim_comp_nak(struct sim_engine *eng, uint32_t qpi, struct sim_swqe *w,
			 const struct sim_pkt *pkt)
{
	struct sim_req *r = &eng->req[qpi];
	uint32_t d = (uint32_t)sim_psn_cmp(pkt->psn, w->first_psn);

	switch (pkt->syndrome) {
	case SIM_NAK_PSN_SEQ:
		if (r->rnr_deadline)
			return; /* the RNR resend already restarts from the head */
		if (w->opcode != MLX5_OPCODE_RDMA_READ && w->opcode != MLX5_OPCODE_ATOMIC_CS &&
		    w->opcode != MLX5_OPCODE_ATOMIC_FA && d > w->done_pkts) {
			/* the responder has everything before the NAK'd PSN */
			w->done_pkts = d;
			sim_comp_progress(eng, qpi);
			sim_req_rewind(eng, qpi, pkt->psn);
			return;
		}
		sim_comp_retry(eng, qpi, sim_comp_resume_psn(r));
		return;
	case SIM_NAK_INVALID_REQ:
		sim_comp_head(eng, qpi, MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
		return;
	case SIM_NAK_REM_ACCESS:
		sim_comp_head(eng, qpi, MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR);
		return;
	default:
		sim_comp_head(eng, qpi, MLX5_CQE_SYNDROME_REMOTE_OP_ERR);
		return;
	}
}

static void sim_comp_read_resp(struct sim_engine *eng, uint32_t qpi, struct sim_swqe *w,
			       const struct sim_pkt *pkt, uint32_t mask)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	uint32_t mtu = sim_mtu_bytes(q->mtu), k = w->done_pkts, expect_len;
	int32_t d = sim_psn_cmp(pkt->psn, sim_psn_add(w->first_psn, k));
	bool first = k == 0, last = k + 1 == w->npkts;

	if (w->opcode != MLX5_OPCODE_RDMA_READ) {
		KR_ERR_RATELIMITED("sim", "qp 0x%x: READ response for a non-READ WQE",
				   SIM_QPN_BASE + qpi);
		return;
	}
	if (d < 0)
		return; /* duplicate */
	if (d > 0) {
		/* a response went missing: ask again once for the rest */
		if (!r->read_gap && sim_comp_retry(eng, qpi, sim_psn_add(w->first_psn, k)))
			r->read_gap = true;
		return;
	}
	r->read_gap = false;
	expect_len = last ? w->len - k * mtu : mtu;
	/* A READ asked again from packet k (sim_req_rewind) is a new request to
	 * the responder: its responses restart with FIRST or ONLY at k, while the
	 * first request's would continue with MIDDLE or LAST. Either is valid. */
	if ((first && !(mask & SIM_OPM_FIRST)) || !!(mask & SIM_OPM_LAST) != last ||
	    pkt->len != expect_len) {
		/* e.g. the two ends disagree on the path MTU */
		KR_ERR_RATELIMITED("sim", "qp 0x%x: READ response op 0x%x len %u, expected %u%s%s",
				   SIM_QPN_BASE + qpi, pkt->opcode, pkt->len, expect_len,
				   first ? " first" : "", last ? " last" : "");
		sim_comp_head(eng, qpi, MLX5_CQE_SYNDROME_BAD_RESP_ERR);
		return;
	}
	if (pkt->len && sim_req_copy(eng, qpi, w, k * mtu, (void *)pkt->payload, pkt->len, true)) {
		sim_comp_head(eng, qpi, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
		return;
	}
	w->done_pkts++;
	sim_comp_progress(eng, qpi);
	if (w->done_pkts == w->npkts)
		sim_comp_head(eng, qpi, 0);
}

static void sim_comp_atomic_ack(struct sim_engine *eng, uint32_t qpi, struct sim_swqe *w,
				const struct sim_pkt *pkt)
{
	uint64_t orig = pkt->orig;

	if ((w->opcode != MLX5_OPCODE_ATOMIC_CS && w->opcode != MLX5_OPCODE_ATOMIC_FA) ||
	    pkt->psn != w->first_psn) {
		KR_ERR_RATELIMITED("sim", "qp 0x%x: stray atomic ACK", SIM_QPN_BASE + qpi);
		return;
	}
	/* the original value lands in host order, as with host-endian atomics */
	if (sim_req_copy(eng, qpi, w, 0, &orig, sizeof(orig), true)) {
		sim_comp_head(eng, qpi, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
		return;
	}
	w->done_pkts = 1;
	sim_comp_progress(eng, qpi);
	sim_comp_head(eng, qpi, 0);
}

void sim_comp_rx(struct sim_engine *eng, uint32_t qpi, const struct sim_pkt *pkt)
{
	struct sim_qp *q = &eng->sh->qp[qpi];
	struct sim_req *r = &eng->req[qpi];
	uint32_t mask = sim_op_mask(pkt->opcode);
	struct sim_swqe *w;
	bool is_ack = pkt->opcode == SIM_OP_ACKNOWLEDGE;
	uint8_t type = pkt->syndrome & SIM_AETH_TYPE_MASK;

	if (!r->nslots)
		return;
	/* Find the WQE the packet is about; completing SEND/WRITEs it passes. */
	for (;;) {
		int32_t d;

		if (q->state != KR_QPC_STATE_RTS || r->head == r->fetch)
			return;
		w = sim_req_wqe(r, r->head);
		if (w->err_synd || !w->sent_pkts)
			return; /* its fate is local, or stale packet */
		d = sim_psn_cmp(pkt->psn, w->first_psn);
		if (d < 0)
			return; /* duplicate */
		if ((uint32_t)d < w->npkts)
			break;
		/* past this WQE */
		if (w->opcode == MLX5_OPCODE_RDMA_READ || w->opcode == MLX5_OPCODE_ATOMIC_CS ||
		    w->opcode == MLX5_OPCODE_ATOMIC_FA) {
			if (!r->read_gap && sim_comp_retry(eng, qpi, sim_comp_resume_psn(r)))
				r->read_gap = true;
			return;
		}
		if (w->sent_pkts < w->npkts)
			return; /* acknowledges packets we never sent: bogus */
		w->done_pkts = w->npkts;
		sim_comp_progress(eng, qpi);
		sim_comp_head(eng, qpi, 0);
	}

	if (is_ack && type == SIM_AETH_RNR_NAK) {
		sim_comp_rnr(eng, qpi, w, pkt);
	} else if (is_ack && type == SIM_AETH_NAK) {
		sim_comp_nak(eng, qpi, w, pkt);
	} else if (is_ack && type == SIM_AETH_ACK) {
		uint32_t done = (uint32_t)sim_psn_cmp(pkt->psn, w->first_psn) + 1;

		if (w->opcode == MLX5_OPCODE_RDMA_READ || w->opcode == MLX5_OPCODE_ATOMIC_CS ||
		    w->opcode == MLX5_OPCODE_ATOMIC_FA) {
			/* an ACK inside a READ/atomic: its response was lost */
			if (!r->read_gap && sim_comp_retry(eng, qpi, sim_comp_resume_psn(r)))
				r->read_gap = true;
			return;
		}
		if (done > w->sent_pkts || done <= w->done_pkts)
			return;
		w->done_pkts = done;
		sim_comp_progress(eng, qpi);
		if (done == w->npkts)
			sim_comp_head(eng, qpi, 0);
	} else if (mask & SIM_OPM_READ) {
		sim_comp_read_resp(eng, qpi, w, pkt, mask);
	} else if (pkt->opcode == SIM_OP_ATOMIC_ACKNOWLEDGE) {
		sim_comp_atomic_ack(eng, qpi, w, pkt);
	}
}
