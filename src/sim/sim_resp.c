/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Responder: request packets -> memory, receive completions, ACK/NAK.
 *
 * Targets: an RC QP in RTR or RTS (its context is the QP's: expected PSN in
 * sh->qp[].next_rcv_psn), or a DCT in ACTIVE, where each DCI connection,
 * keyed by (source GID, DCI QPN), has its own context in a small per-DCT
 * table. A DC packet whose access key is not the DCT's is dropped silently
 * and counted (dctc.dc_access_key_violation_count), as hardware does. A new
 * DC connection number starts a fresh context at the PSN the connection
 * opened at (carried in every DC packet); a late packet of an earlier connection of the same DCI
 * (older connection number and PSN) is dropped and counted (dc_stale_drops), never executed as new:
 * its requester has moved on, and running it again would repeat a WRITE over newer data or an
 * atomic a second time.
 *
 * PSN rules (IBTA 9.7.5): the expected PSN executes; an older one is a
 * duplicate (SEND/WRITE: acknowledge again when asked; READ: respond again
 * from memory; atomic: answer from the result cache, never execute twice);
 * a newer one gets one sequence-error NAK until the expected PSN shows up.
 *
 * Errors: rights/key/range -> NAK remote access; a bad opcode sequence, a
 * misaligned atomic or a message longer than the receive WQE -> NAK invalid
 * request; a receive WQE with a bad lkey -> NAK remote operational error.
 * An RC responder QP goes to ERR with the NAK (its receive WQE, if one was
 * taken, completes with the local error); a DCT stays ACTIVE. No receive WQE
 * for a SEND (or WRITE with immediate) -> RNR NAK with the min_rnr_nak timer.
 *
 * READ responses longer than one burst are streamed over several engine
 * passes; requests for the same context that arrive meanwhile are held and
 * run, in order, when the stream is out.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/kr_log.h"
#include "sim/sim_engine.h"

#define SIM_READ_BURST 64u /* READ response packets per context per pass */

/* Where a request lands: an RC QP or one DCI connection of a DCT. */
struct sim_target {
	struct sim_resp *r;
	bool dc;
	uint32_t idx; /* QP or DCT index */
	uint32_t num; /* qpn or dctn */
	uint32_t pdn;
	uint32_t cqn;
	uint32_t srqn; /* 0: the QP's own RQ */
	uint32_t user_index;
	uint8_t rre, rwe, rae;
	uint8_t min_rnr_nak;
	uint32_t mtu; /* bytes */
	uint32_t *epsn;
	uint8_t dgid[16]; /* where answers go */
	uint8_t dmac[6];
	uint8_t sgid_index; /* the GID entry answers leave from */
	uint32_t dqpn;
};

static void sim_resp_unpump(struct sim_engine *eng, struct sim_resp *r)
{
	struct sim_resp **pp;

	if (!r->on_pump)
		return;
	for (pp = &eng->pump_head; *pp; pp = &(*pp)->pump_next) {
		if (*pp == r) {
			*pp = r->pump_next;
			break;
		}
	}
	r->pump_next = NULL;
	r->on_pump = false;
}

void sim_resp_reset(struct sim_engine *eng, struct sim_resp *r)
{
	struct sim_pkt *pkt;

	sim_resp_unpump(eng, r);
	while ((pkt = r->hold_head)) {
		r->hold_head = pkt->next;
		sim_pkt_free(pkt);
	}
	memset(r, 0, sizeof(*r));
}

/* ---- targets ---- */

static bool sim_target_rc(struct sim_engine *eng, uint32_t qpi, struct sim_target *t)
{
	struct sim_qp *q = &eng->sh->qp[qpi];

	if (!q->in_use || q->st != KR_QPC_ST_RC ||
	    (q->state != KR_QPC_STATE_RTR && q->state != KR_QPC_STATE_RTS))
		return false;
	memset(t, 0, sizeof(*t));
	t->r = &eng->resp[qpi];
	t->r->obj_idx = qpi;
	t->r->is_dct = false;
	t->idx = qpi;
	t->num = SIM_QPN_BASE + qpi;
	t->pdn = q->pdn;
	t->cqn = q->cqn_rcv;
	t->srqn = q->rq_type == KR_QPC_RQ_TYPE_SRQ_RMP_XRC ? q->srqn : 0;
	t->user_index = q->user_index;
	t->rre = q->rre;
	t->rwe = q->rwe;
	t->rae = q->rae;
	t->min_rnr_nak = q->min_rnr_nak;
	t->mtu = sim_mtu_bytes(q->mtu);
	t->epsn = &q->next_rcv_psn;
	memcpy(t->dgid, q->rgid, 16);
	memcpy(t->dmac, q->rmac, 6); /* an RC QP answers along its own path */
	t->sgid_index = q->sgid_index;
	t->dqpn = q->remote_qpn;
	return true;
}

static bool sim_target_dct(struct sim_engine *eng, uint32_t dcti, struct sim_resp *r,
			   struct sim_target *t)
{
	struct sim_dct *d = &eng->sh->dct[dcti];

	if (!d->in_use || d->state != KR_DCTC_STATE_ACTIVE)
		return false;
	memset(t, 0, sizeof(*t));
	t->r = r;
	t->dc = true;
	t->idx = dcti;
	t->num = SIM_DCTN_BASE + dcti;
	t->pdn = d->pdn;
	t->cqn = d->cqn;
	t->srqn = d->srqn;
	t->user_index = d->user_index;
	t->rre = d->rre;
	t->rwe = d->rwe;
	t->rae = d->rae;
	t->min_rnr_nak = d->min_rnr_nak;
	t->mtu = sim_mtu_bytes(d->mtu);
	t->epsn = &r->epsn;
	memcpy(t->dgid, r->sgid, 16);
	sim_mac_of_gid(r->sgid, t->dmac); /* a DCT answers the MAC its request came from */
	t->sgid_index = d->addr_index;
	t->dqpn = r->sqpn;
	return true;
}

/*
 * A packet of another connection of a DCI the DCT knows (it serves or
 * remembers connection dc_conn with expected PSN epsn): stale, a late copy of
 * a request of an earlier connection, if both its connection number and its
 * PSN are older. A DCI numbers its connections in increasing order and
 * continues its PSNs from one connection to the next (the keeper gives a
 * reset DCI a PSN past its previous life), so a new connection is newer in
 * at least one of them. Knowledge expires after SIM_DC_FORGET_NS: a DCI on a
 * restarted host starts over in both.
 */
#define SIM_DC_FORGET_NS 100000000ull

static bool sim_dc_stale(const struct sim_engine *eng, const struct sim_pkt *pkt, uint32_t dc_conn,
			 uint32_t epsn, uint64_t last_use)
{
	if (eng->now - last_use > SIM_DC_FORGET_NS)
		return false;
	return sim_psn_cmp(pkt->dc_conn, dc_conn) < 0 && sim_psn_cmp(pkt->psn, epsn) < 0;
}

/* Evicting c (another DCI's connection): remember it for the stale check. */
static void sim_dct_bury(struct sim_dct_ctx *tab, const struct sim_resp *c)
{
	struct sim_dct_gone *g = &tab->gone[tab->gone_next++ % SIM_DCT_GONE];

	g->valid = true;
	memcpy(g->sgid, c->sgid, 16);
	g->sqpn = c->sqpn;
	g->dc_conn = c->dc_conn;
	g->epsn = c->epsn;
	g->last_use = c->last_use;
}

/* A packet of a DCI the table does not serve: stale by what was buried? */
static bool sim_dct_gone_stale(const struct sim_engine *eng, struct sim_dct_ctx *tab,
			       const struct sim_pkt *pkt)
{
	for (uint32_t i = 0; i < SIM_DCT_GONE; i++) {
		struct sim_dct_gone *g = &tab->gone[i];

		if (!g->valid || g->sqpn != pkt->sqpn || memcmp(g->sgid, pkt->sgid, 16))
			continue;
		if (sim_dc_stale(eng, pkt, g->dc_conn, g->epsn, g->last_use))
			return true;
		g->valid = false; /* a newer connection: it gets a context */
	}
	return false;
}

/* The context of the DCI connection pkt belongs to; NULL: drop the packet. */
static struct sim_resp *sim_dct_ctx(struct sim_engine *eng, uint32_t dcti,
				    const struct sim_pkt *pkt)
{
	struct sim_dct_ctx *tab = eng->dct[dcti];
	struct sim_resp *r = NULL, *lru = NULL;
	uint32_t i;

	if (!tab) {
		tab = calloc(1, sizeof(*tab));
		if (!tab)
			return NULL;
		eng->dct[dcti] = tab;
	}
	for (i = 0; i < SIM_DCT_CTX; i++) {
		struct sim_resp *c = &tab->ctx[i];

		if (c->in_use && c->sqpn == pkt->sqpn && !memcmp(c->sgid, pkt->sgid, 16)) {
			r = c;
			break;
		}
		if (!c->in_use) {
			if (!lru || lru->in_use)
				lru = c;
		} else if (!c->rd_active && !c->hold_head &&
			   (!lru || (lru->in_use && c->last_use < lru->last_use))) {
			lru = c;
		}
	}
	if (r && r->dc_conn == pkt->dc_conn)
		goto found;
	/* never executed as new: a late packet of a connection that ended */
	if (r ? sim_dc_stale(eng, pkt, r->dc_conn, r->epsn, r->last_use)
	      : sim_dct_gone_stale(eng, tab, pkt)) {
		SIM_STAT_INC(eng->sh, dc_stale_drops);
		KR_DP_LOG("sim", "dct 0x%x: stale packet psn 0x%x of connection %u from qpn 0x%x",
			  SIM_DCTN_BASE + dcti, pkt->psn, pkt->dc_conn, pkt->sqpn);
		return NULL;
	}
	/*
	 * A new connection opens at the PSN it started at, whichever of its
	 * packets comes first: one that overtook the first gets a sequence NAK
	 * and the requester sends again from there. Opening at the arriving
	 * packet's PSN instead would take the overtaken first packet for a
	 * duplicate: a WRITE acknowledged and never done, an atomic never
	 * answered.
	 */
	if (sim_psn_cmp(pkt->psn, pkt->dc_conn_psn) < 0)
		return NULL; /* before the start of its own connection: malformed */
	if (!r) {
		r = lru;
		if (r && r->in_use)
			sim_dct_bury(tab, r);
	}
	if (!r)
		return NULL;
	if (r->in_use && r->has_rwqe) {
		/* a SEND the old connection never finished: its receive WQE is flushed */
		struct sim_dct *d = &eng->sh->dct[dcti];

		sim_cqe_write_err(eng, d->cqn, MLX5_CQE_RESP_ERR, MLX5_CQE_SYNDROME_WR_FLUSH_ERR, 0,
				  SIM_DCTN_BASE + dcti, r->rwqe.idx & 0xffff, d->user_index);
	}
	sim_resp_reset(eng, r);
	r->in_use = true;
	r->is_dct = true;
	r->obj_idx = dcti;
	memcpy(r->sgid, pkt->sgid, 16);
	r->sqpn = pkt->sqpn;
	r->dc_conn = pkt->dc_conn;
	r->epsn = pkt->dc_conn_psn;
found:
	r->last_use = eng->now;
	return r;
}

/* ---- answers ---- */

static struct sim_pkt *sim_resp_pkt(struct sim_engine *eng, const struct sim_target *t,
				    uint8_t opcode, uint32_t psn, uint32_t len)
{
	struct sim_pkt *pkt = sim_pkt_alloc(len);

	if (!pkt)
		return NULL;
	pkt->opcode = opcode;
	pkt->psn = psn & SIM_PSN_MASK;
	memcpy(pkt->sgid, eng->gid, 16);
	memcpy(pkt->dgid, t->dgid, 16);
	memcpy(pkt->dmac, t->dmac, 6);
	pkt->sgid_index = t->sgid_index;
	pkt->dqpn = t->dqpn;
	pkt->sqpn = t->num;
	pkt->msn = t->r->msn & SIM_PSN_MASK;
	return pkt;
}

/* ACK (syndrome SIM_AETH_ACK_NO_CREDIT), RNR NAK or NAK at psn. */
static void sim_resp_ack(struct sim_engine *eng, const struct sim_target *t, uint32_t psn,
			 uint8_t syndrome)
{
	struct sim_pkt *pkt = sim_resp_pkt(eng, t, SIM_OP_ACKNOWLEDGE, psn, 0);

	if (!pkt)
		return; /* the requester's timer covers it */
	pkt->syndrome = syndrome;
	sim_wire_send(eng, pkt);
}

static void sim_resp_cqe(struct sim_engine *eng, const struct sim_target *t, uint8_t op,
			 uint32_t byte_cnt, uint32_t imm, uint32_t src_qpn)
{
	struct sim_resp *r = t->r;
	struct mlx5_cqe64 cqe;

	memset(&cqe, 0, sizeof(cqe));
	cqe.byte_cnt = htobe32(byte_cnt);
	cqe.imm_inval_pkey = imm;
	cqe.flags_rqpn = htobe32(src_qpn & 0xffffff);
	cqe.srqn_uidx = htobe32(t->user_index & 0xffffff);
	cqe.sop_drop_qpn = htobe32(t->num & 0xffffff);
	cqe.wqe_counter = htobe16(r->rwqe.idx & 0xffff);
	sim_cqe_write(eng, t->cqn, &cqe, op);
	r->has_rwqe = false;
}

/*
 * The request at psn fails: NAK it, complete a taken receive WQE with
 * cqe_synd (0: flush), end the message; an RC QP goes to ERR.
 */
static void sim_resp_fail(struct sim_engine *eng, const struct sim_target *t, uint32_t psn,
			  uint8_t nak, uint8_t cqe_synd)
{
	struct sim_resp *r = t->r;

	KR_DP_LOG("sim", "%s 0x%x: NAK 0x%x at psn 0x%x", t->dc ? "dct" : "qp", t->num, nak, psn);
	sim_resp_ack(eng, t, psn, nak);
	if (r->has_rwqe) {
		sim_cqe_write_err(eng, t->cqn, MLX5_CQE_RESP_ERR,
				  cqe_synd ? cqe_synd : MLX5_CQE_SYNDROME_WR_FLUSH_ERR, 0, t->num,
				  r->rwqe.idx & 0xffff, t->user_index);
		r->has_rwqe = false;
	}
	r->cur = 0;
	if (!t->dc) {
		sim_engine_qp_fail(eng, t->idx);
	} else {
		struct sim_pkt *pkt;

		/* what queued behind a failed READ stream is dropped: the DCI errors out */
		while ((pkt = r->hold_head)) {
			r->hold_head = pkt->next;
			sim_pkt_free(pkt);
		}
		r->hold_tail = NULL;
	}
}

/* Take a receive WQE for the message. 0, or -EAGAIN (RNR NAK sent), -EINVAL (failed). */
static int sim_resp_take_rwqe(struct sim_engine *eng, const struct sim_target *t, uint32_t psn)
{
	struct sim_resp *r = t->r;
	int rc;

	if (r->has_rwqe)
		return 0;
	rc = t->srqn ? sim_recv_take_srq(eng, t->srqn, &r->rwqe)
		     : sim_recv_take_rq(eng, t->idx, &r->rwqe);
	if (rc == -EAGAIN) {
		SIM_STAT_INC(eng->sh, rnr_naks);
		sim_resp_ack(eng, t, psn, SIM_AETH_RNR_NAK | (t->min_rnr_nak & 0x1f));
		/* the RNR NAK names the restart point: later packets already in
		 * flight are dropped without a sequence NAK of their own */
		r->nak_seq_sent = true;
		return rc;
	}
	if (rc) {
		sim_resp_fail(eng, t, psn, SIM_NAK_REM_OP, 0);
		return rc;
	}
	r->has_rwqe = true;
	r->rwqe_srq = t->srqn != 0;
	return 0;
}

/* ---- operations ---- */

static void sim_resp_send(struct sim_engine *eng, const struct sim_target *t,
			  const struct sim_pkt *pkt, uint32_t mask)
{
	struct sim_resp *r = t->r;
	int rc;

	if (mask & SIM_OPM_FIRST) {
		if (sim_resp_take_rwqe(eng, t, pkt->psn))
			return;
		r->cur = SIM_OPM_SEND;
		r->rcvd = 0;
	}
	rc = sim_recv_scatter(eng, t->pdn, &r->rwqe, r->rcvd, pkt->payload, pkt->len);
	if (rc == -EMSGSIZE) {
		sim_resp_fail(eng, t, pkt->psn, SIM_NAK_INVALID_REQ,
			      MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
		return;
	}
	if (rc) {
		sim_resp_fail(eng, t, pkt->psn, SIM_NAK_REM_OP, MLX5_CQE_SYNDROME_LOCAL_PROT_ERR);
		return;
	}
	r->rcvd += pkt->len;
	*t->epsn = sim_psn_add(*t->epsn, 1);
	if (mask & SIM_OPM_LAST) {
		sim_resp_cqe(eng, t,
			     (mask & SIM_OPM_IMM) ? MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND,
			     r->rcvd, (mask & SIM_OPM_IMM) ? pkt->imm : 0, t->dqpn);
		r->cur = 0;
		r->msn++;
	}
	if (pkt->ackreq)
		sim_resp_ack(eng, t, pkt->psn, SIM_AETH_ACK_NO_CREDIT);
}

static void sim_resp_write(struct sim_engine *eng, const struct sim_target *t,
			   const struct sim_pkt *pkt, uint32_t mask)
{
	struct sim_resp *r = t->r;
	void *dst;

	if (mask & SIM_OPM_FIRST) {
		if (!t->rwe || (pkt->dma_len &&
				!sim_mem_translate(eng->dev, pkt->rkey, t->pdn, pkt->va,
						   pkt->dma_len, KR_ACCESS_REMOTE_WRITE, true))) {
			sim_resp_fail(eng, t, pkt->psn, SIM_NAK_REM_ACCESS, 0);
			return;
		}
		r->wr_va = pkt->va;
		r->wr_rkey = pkt->rkey;
		r->wr_resid = pkt->dma_len;
		r->wr_len = pkt->dma_len;
	}
	if (pkt->len > r->wr_resid || ((mask & SIM_OPM_LAST) && pkt->len != r->wr_resid)) {
		sim_resp_fail(eng, t, pkt->psn, SIM_NAK_INVALID_REQ, 0);
		return;
	}
	/* with immediate: the receive WQE first, so RNR leaves memory untouched */
	if ((mask & SIM_OPM_IMM) && sim_resp_take_rwqe(eng, t, pkt->psn))
		return;
	if (pkt->len) {
		dst = sim_mem_translate(eng->dev, r->wr_rkey, t->pdn, r->wr_va, pkt->len,
					KR_ACCESS_REMOTE_WRITE, true);
		if (!dst) {
			sim_resp_fail(eng, t, pkt->psn, SIM_NAK_REM_ACCESS, 0);
			return;
		}
		memcpy(dst, pkt->payload, pkt->len);
	}
	r->cur = SIM_OPM_WRITE;
	r->wr_va += pkt->len;
	r->wr_resid -= pkt->len;
	*t->epsn = sim_psn_add(*t->epsn, 1);
	if (mask & SIM_OPM_LAST) {
		if (mask & SIM_OPM_IMM)
			sim_resp_cqe(eng, t, MLX5_CQE_RESP_WR_IMM, r->wr_len, pkt->imm, t->dqpn);
		r->cur = 0;
		r->msn++;
	}
	if (pkt->ackreq)
		sim_resp_ack(eng, t, pkt->psn, SIM_AETH_ACK_NO_CREDIT);
}

/* Send up to SIM_READ_BURST packets of the READ response in progress. */
static void sim_resp_read_stream(struct sim_engine *eng, const struct sim_target *t)
{
	struct sim_resp *r = t->r;
	uint32_t n;

	for (n = 0; r->rd_active && n < SIM_READ_BURST; n++) {
		uint32_t plen = r->rd_left < t->mtu ? r->rd_left : t->mtu;
		bool last = plen == r->rd_left;
		struct sim_pkt *pkt;
		uint8_t op;
		void *src;

		if (r->rd_first)
			op = last ? SIM_OP_READ_RESPONSE_ONLY : SIM_OP_READ_RESPONSE_FIRST;
		else
			op = last ? SIM_OP_READ_RESPONSE_LAST : SIM_OP_READ_RESPONSE_MIDDLE;
		src = plen ? sim_mem_translate(eng->dev, r->rd_rkey, t->pdn, r->rd_va, plen,
					       KR_ACCESS_REMOTE_READ, true)
			   : NULL;
		if (plen && !src) {
			/* the memory went away mid-stream */
			r->rd_active = false;
			sim_resp_fail(eng, t, r->rd_psn, SIM_NAK_REM_ACCESS, 0);
			return;
		}
		pkt = sim_resp_pkt(eng, t, op, r->rd_psn, plen);
		if (!pkt)
			return; /* continue next pass */
		if (plen)
			memcpy(pkt->payload, src, plen);
		pkt->syndrome = SIM_AETH_ACK_NO_CREDIT;
		sim_wire_send(eng, pkt);
		r->rd_first = false;
		r->rd_va += plen;
		r->rd_left -= plen;
		r->rd_psn = sim_psn_add(r->rd_psn, 1);
		if (last)
			r->rd_active = false;
	}
	if (r->rd_active && !r->on_pump) {
		r->pump_next = eng->pump_head;
		eng->pump_head = r;
		r->on_pump = true;
	}
	eng->work = true;
}

/* A READ request (new or duplicate) at pkt->psn: check, then respond. */
static void sim_resp_read(struct sim_engine *eng, const struct sim_target *t,
			  const struct sim_pkt *pkt, bool dup)
{
	struct sim_resp *r = t->r;
	uint32_t npkts = pkt->dma_len ? (pkt->dma_len + t->mtu - 1) / t->mtu : 1;

	if (!t->rre ||
	    (pkt->dma_len && !sim_mem_translate(eng->dev, pkt->rkey, t->pdn, pkt->va, pkt->dma_len,
						KR_ACCESS_REMOTE_READ, true))) {
		if (dup)
			sim_resp_ack(eng, t, pkt->psn, SIM_NAK_REM_ACCESS);
		else
			sim_resp_fail(eng, t, pkt->psn, SIM_NAK_REM_ACCESS, 0);
		return;
	}
	if (!dup) {
		*t->epsn = sim_psn_add(*t->epsn, npkts);
		r->msn++;
	}
	r->rd_active = true;
	r->rd_va = pkt->va;
	r->rd_rkey = pkt->rkey;
	r->rd_left = pkt->dma_len;
	r->rd_psn = pkt->psn;
	r->rd_first = true;
	sim_resp_read_stream(eng, t);
}

static void sim_resp_atomic_ack(struct sim_engine *eng, const struct sim_target *t, uint32_t psn,
				uint64_t orig)
{
	struct sim_pkt *pkt = sim_resp_pkt(eng, t, SIM_OP_ATOMIC_ACKNOWLEDGE, psn, 0);

	if (!pkt)
		return;
	pkt->syndrome = SIM_AETH_ACK_NO_CREDIT;
	pkt->orig = orig;
	sim_wire_send(eng, pkt);
}

static void sim_resp_atomic(struct sim_engine *eng, const struct sim_target *t,
			    const struct sim_pkt *pkt)
{
	struct sim_resp *r = t->r;
	uint64_t *p, orig;

	if (!t->rae) {
		sim_resp_fail(eng, t, pkt->psn, SIM_NAK_REM_ACCESS, 0);
		return;
	}
	if (pkt->va & 7) {
		sim_resp_fail(eng, t, pkt->psn, SIM_NAK_INVALID_REQ, 0);
		return;
	}
	p = sim_mem_translate(eng->dev, pkt->rkey, t->pdn, pkt->va, 8, KR_ACCESS_REMOTE_ATOMIC,
			      true);
	if (!p) {
		sim_resp_fail(eng, t, pkt->psn, SIM_NAK_REM_ACCESS, 0);
		return;
	}
	if ((uintptr_t)p & 7) {
		/* the key maps this address to one we cannot update atomically */
		sim_resp_fail(eng, t, pkt->psn, SIM_NAK_INVALID_REQ, 0);
		return;
	}
	if (pkt->opcode == SIM_OP_COMPARE_SWAP) {
		orig = pkt->compare;
		__atomic_compare_exchange_n(p, &orig, pkt->swap_add, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(p, pkt->swap_add, __ATOMIC_SEQ_CST);
	}
	r->atomic[r->atomic_next].psn = pkt->psn;
	r->atomic[r->atomic_next].orig = orig;
	r->atomic[r->atomic_next].valid = true;
	r->atomic_next = (r->atomic_next + 1) % SIM_ATOMIC_CACHE;
	*t->epsn = sim_psn_add(*t->epsn, 1);
	r->msn++;
	sim_resp_atomic_ack(eng, t, pkt->psn, orig);
}

static void sim_resp_duplicate(struct sim_engine *eng, const struct sim_target *t,
			       const struct sim_pkt *pkt, uint32_t mask)
{
	struct sim_resp *r = t->r;
	uint32_t i;

	if (mask & SIM_OPM_READ) {
		sim_resp_read(eng, t, pkt, true);
	} else if (mask & SIM_OPM_ATOMIC) {
		for (i = 0; i < SIM_ATOMIC_CACHE; i++) {
			if (r->atomic[i].valid && r->atomic[i].psn == pkt->psn) {
				sim_resp_atomic_ack(eng, t, pkt->psn, r->atomic[i].orig);
				return;
			}
		}
		/* too old to remember: never execute twice, let the requester time out */
	} else if (pkt->ackreq) {
		sim_resp_ack(eng, t, pkt->psn, SIM_AETH_ACK_NO_CREDIT);
	}
}

/* One request for target t (whose context is not streaming). */
static void sim_resp_execute(struct sim_engine *eng, const struct sim_target *t,
			     const struct sim_pkt *pkt)
{
	struct sim_resp *r = t->r;
	uint32_t mask = sim_op_mask(pkt->opcode);
	int32_t d = sim_psn_cmp(pkt->psn, *t->epsn);

	if (d > 0) {
		if (!r->nak_seq_sent) {
			r->nak_seq_sent = true;
			SIM_STAT_INC(eng->sh, seq_naks);
			sim_resp_ack(eng, t, *t->epsn, SIM_NAK_PSN_SEQ);
		}
		return;
	}
	if (d < 0) {
		SIM_STAT_INC(eng->sh, dup_requests);
		sim_resp_duplicate(eng, t, pkt, mask);
		return;
	}
	r->nak_seq_sent = false;
	/* opcode sequence: a message in progress continues, none starts mid-way */
	if (r->cur ? (!(mask & r->cur) || (mask & SIM_OPM_FIRST)) : !(mask & SIM_OPM_FIRST)) {
		sim_resp_fail(eng, t, pkt->psn, SIM_NAK_INVALID_REQ, 0);
		return;
	}
	if (mask & SIM_OPM_SEND)
		sim_resp_send(eng, t, pkt, mask);
	else if (mask & SIM_OPM_WRITE)
		sim_resp_write(eng, t, pkt, mask);
	else if (mask & SIM_OPM_READ)
		sim_resp_read(eng, t, pkt, false);
	else if (mask & SIM_OPM_ATOMIC)
		sim_resp_atomic(eng, t, pkt);
}

/* Target of a request packet; false: drop it. */
static bool sim_resp_target(struct sim_engine *eng, const struct sim_pkt *pkt, struct sim_target *t)
{
	uint32_t idx;
	struct sim_resp *r;

	if (!pkt->dc)
		return sim_qpn_to_idx(pkt->dqpn, &idx) && sim_target_rc(eng, idx, t);
	if (!sim_dctn_to_idx(pkt->dqpn, &idx) || !eng->sh->dct[idx].in_use ||
	    eng->sh->dct[idx].state != KR_DCTC_STATE_ACTIVE)
		return false;
	if (pkt->dc_key != eng->sh->dct[idx].dc_key) {
		eng->sh->dct[idx].key_violations++;
		KR_DP_LOG("sim", "dct 0x%x: access key violation from qpn 0x%x", pkt->dqpn,
			  pkt->sqpn);
		return false;
	}
	r = sim_dct_ctx(eng, idx, pkt);
	return r && sim_target_dct(eng, idx, r, t);
}

void sim_resp_rx(struct sim_engine *eng, struct sim_pkt *pkt)
{
	struct sim_target t;
	struct sim_resp *r;

	if (!sim_resp_target(eng, pkt, &t)) {
		eng->pkts_dropped++;
		sim_pkt_free(pkt);
		return;
	}
	r = t.r;
	if (r->rd_active) {
		/* behind a READ response still streaming: keep the order */
		pkt->next = NULL;
		if (r->hold_tail)
			r->hold_tail->next = pkt;
		else
			r->hold_head = pkt;
		r->hold_tail = pkt;
		return;
	}
	sim_resp_execute(eng, &t, pkt);
	sim_pkt_free(pkt);
}

/* Rebuild the target of a context on the pump list; false if it is gone. */
static bool sim_resp_target_of(struct sim_engine *eng, struct sim_resp *r, struct sim_target *t)
{
	if (r->is_dct)
		return sim_target_dct(eng, r->obj_idx, r, t);
	return sim_target_rc(eng, r->obj_idx, t);
}

void sim_resp_pump(struct sim_engine *eng)
{
	struct sim_resp *list = eng->pump_head, *r;

	eng->pump_head = NULL;
	while ((r = list)) {
		struct sim_target t;
		struct sim_pkt *pkt;

		list = r->pump_next;
		r->pump_next = NULL;
		r->on_pump = false;
		if (!sim_resp_target_of(eng, r, &t)) {
			sim_resp_reset(eng, r);
			continue;
		}
		sim_resp_read_stream(eng, &t);
		/* then what waited behind it, until another stream starts */
		while (!r->rd_active && (pkt = r->hold_head)) {
			r->hold_head = pkt->next;
			if (!r->hold_head)
				r->hold_tail = NULL;
			if (sim_resp_target_of(eng, r, &t))
				sim_resp_execute(eng, &t, pkt);
			sim_pkt_free(pkt);
		}
		if (r->rd_active && !r->on_pump) {
			r->pump_next = eng->pump_head;
			eng->pump_head = r;
			r->on_pump = true;
		}
	}
}
