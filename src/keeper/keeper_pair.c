/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pairing RC slots between keepers, for a job's hot peer (DC->RC promotion,
 * src/job/virtqp/virtqp_promote.c). No TCP and no firmware command on a job's
 * thread or on the event loop:
 *
 *   job A      KR_MSG_PAIR (peer's node, DCT, address) to its keeper
 *   loop A     leases a parked RC slot to the job (link PAIRING), replies
 *   worker A   sends KR_PAIR_REQ (its QPN and PSN) from the tenant's control
 *              DCI to the peer's tenant DCT (the launch's DC key)
 *   loop B     takes a parked RC slot of the same launch's tenant (link PEER)
 *   worker B   INIT->RTR->RTS towards A's QP, answers KR_PAIR_ACK (its QPN)
 *   loop A     takes the answer; worker A: INIT->RTR->RTS, link UP
 *
 * The job sees its slot's link in the pool segment and posts once it is UP.
 * A refusal (no spare: KR_PAIR_NAK) or no answer within KR_PAIR_TIMEOUT_MS
 * (a dead peer keeper) leaves the link FAILED: the job gives the slot back
 * and stays on DC. Giving a paired slot back (or dying) sends
 * KR_PAIR_UNPAIR before the reset, so the peer's QP goes back to its
 * spares too; an answer for a slot that was given back meanwhile is
 * answered with KR_PAIR_UNPAIR.
 *
 * Trust: a message is taken only from the tenant's own DC target, which
 * checks the launch's DC key, and only when it names the launch bound to the
 * tenant. Every field is copied out of the receive buffer and bounds-checked
 * before use; an answer must name a slot, generation and step of ours. What
 * a job of the launch could forge this way gives it nothing it lacks: it
 * reaches the launch's memory over DC already (at most it uses up its own
 * launch's spares).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "keeper/meta/meta.h"
#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

#define KR_PAIR_TIMEOUT_MS 1000u /* the peer's worker may be busy with resets */
#define KR_PAIR_OUTBOX	   32u

/* Messages the loop asks the worker to send (answers with no slot behind them). */
struct kr_pair_box {
	pthread_mutex_t lock;
	uint32_t n;
	struct kr_pair_msg msg[KR_PAIR_OUTBOX];
	uint32_t dctn[KR_PAIR_OUTBOX];
	struct kr_devx_addr addr[KR_PAIR_OUTBOX];
};

/* kr_keeper_pair_box_new() - see keeper.h. */
struct kr_pair_box *kr_keeper_pair_box_new(void)
{
	struct kr_pair_box *b = calloc(1, sizeof(*b));

	if (b)
		pthread_mutex_init(&b->lock, NULL);
	return b;
}

static uint32_t pair_node(const struct kr_keeper *k, const struct kr_keeper_tenant *t)
{
	const struct kr_dct_zone *dz =
	    (const struct kr_dct_zone *)(t->zone + kr_keeper_zone_dct_off(&k->cfg));

	return dz->node_id;
}

static uint32_t pair_psn(void)
{
	uint32_t psn = 0;

	if (getrandom(&psn, sizeof(psn), 0) != sizeof(psn))
		psn = (uint32_t)kr_now_ns();
	return psn & KR_PAIR_NUM_MAX;
}

/* A message from t about the pair named by cookie. */
static void pair_msg(const struct kr_keeper *k, const struct kr_keeper_tenant *t, uint16_t type,
		     uint64_t cookie, struct kr_pair_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->magic = KR_PAIR_MAGIC;
	m->version = KR_PAIR_VERSION;
	m->type = type;
	m->launch_tag = t->launch_tag;
	m->cookie = cookie;
	m->src_node = pair_node(k, t);
	m->src_dctn = t->dct.dctn;
	m->src_addr = k->ctx->port.addr;
}

/*
 * Worker, without cmd_lock (a reset takes it): reap the control DCI; one in
 * error is reset (what it carried is lost: peers time out).
 */
static void ctl_reap(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	struct kr_devx_wc wc[8];
	int n;

	if (!t->ctl.built)
		return;
	while ((n = kr_devx_cq_poll(&t->ctl.cq, wc, 8)) > 0)
		for (int i = 0; i < n; i++)
			if (wc[i].status != KR_WC_SUCCESS)
				t->ctl_broken = true;
	if (!t->ctl_broken)
		return;
	pthread_mutex_lock(&k->cmd_lock);
	if (!kr_keeper_dci_reset(k, &t->ctl))
		t->ctl_broken = false;
	pthread_mutex_unlock(&k->cmd_lock);
	if (t->ctl_broken)
		KR_WARN_RATELIMITED("pool", "tenant %u: control DCI reset failed", t->idx);
}

/*
 * Worker, without cmd_lock: send m to the DC target dctn at addr (the
 * launch's key). 0 or -errno.
 */
static int ctl_send(struct kr_keeper *k, struct kr_keeper_tenant *t, const struct kr_pair_msg *m,
		    uint32_t dctn, const struct kr_devx_addr *addr)
{
	struct kr_devx_sge sge = {.addr = (uintptr_t)m, .length = sizeof(*m)};
	struct kr_devx_dc_av av;
	struct kr_devx_wr wr = {.opcode = KR_WR_SEND,
				.flags = KR_WR_SIGNALED | KR_WR_INLINE,
				.sge = &sge,
				.num_sge = 1,
				.av = &av};
	int rc;

	ctl_reap(k, t);
	if (!t->ctl.built || t->ctl_broken || !t->bound)
		return -ENOTCONN;
	memset(&av, 0, sizeof(av));
	av.dctn = dctn;
	av.dc_key = t->dc_key;
	kr_devx_dc_av_path(&av, &k->ctx->port, addr, t->dct.dctn, dctn);
	rc = kr_devx_qp_post_send(&t->ctl.qp, &wr);
	if (!rc)
		kr_devx_qp_ring(&t->ctl.qp);
	return rc;
}

/* ---- the asking side ---- */

/* kr_keeper_pair_ask() - see keeper.h. */
int kr_keeper_pair_ask(struct kr_keeper *k, struct kr_keeper_conn *c, const struct kr_msg_pair *req,
		       struct kr_msg_reply *rep)
{
	struct kr_keeper_tenant *t;
	struct kr_keeper_qp *q;
	uint32_t tenant;
	int rc;

	if (!c->job_plus1)
		return -EPERM;
	if (!req->dctn || req->dctn > KR_PAIR_NUM_MAX || !req->node)
		return -EINVAL;
	tenant = kr_seg_job(k->seg, c->job_plus1 - 1)->tenant;
	t = &k->tenant[tenant];
	if (!t->bound || !t->dct_ok || !t->ctl.built)
		return -ENOTCONN;
	rc = kr_keeper_lease_grant(k, c, KR_SLOT_RC, rep);
	if (rc)
		return rc;
	q = &t->rc[rep->index];
	memset(&q->pair, 0, sizeof(q->pair));
	q->pair.cookie = kr_pair_cookie(rep->gen, tenant, rep->index);
	q->pair.peer_node = req->node;
	q->pair.peer_dctn = req->dctn;
	q->pair.peer_addr = req->addr;
	q->pair.psn = pair_psn();
	kr_seg_rc(k->seg, tenant, rep->index)->link = KR_LINK_PAIRING;
	__atomic_store_n(&q->pair.step, KR_PAIR_ASK, __ATOMIC_RELEASE);
	kr_keeper_worker_wake(k);
	return 0;
}

/* kr_keeper_pair_serve() - see keeper.h. */
void kr_keeper_pair_serve(struct kr_keeper *k, struct kr_keeper_conn *c,
			  const struct kr_msg_pair *req)
{
	struct kr_msg_reply rep = {0};
	struct kr_pool_pair_ans *a;
	int rc;

	if (!c->job_plus1 || req->ans >= KR_JOB_PAIR_ASKS) {
		KR_WARN_RATELIMITED("pool", "pid %d: pair request with nowhere to answer dropped",
				    (int)c->pid);
		return;
	}
	if (req->rsvd)
		rc = -EINVAL;
	else if (kr_keeper_guard_busy(k, c->job_plus1 - 1))
		rc = -EBUSY; /* as for any lease (keeper_guard.c) */
	else
		rc = kr_keeper_pair_ask(k, c, req, &rep);
	a = &kr_seg_job(k->seg, c->job_plus1 - 1)->pair_ans[req->ans];
	a->status = rc;
	a->index = rc ? 0 : rep.index;
	a->gen = rc ? 0 : rep.gen;
	a->qpn = rc ? 0 : rep.qpn;
	a->token = rc ? 0 : rep.token;
	__atomic_store_n(&a->seq, req->hdr.seq, __ATOMIC_RELEASE); /* the answer is whole */
}

/* Worker: INIT->RTR->RTS towards the peer's QP. 0 or the command's error. */
static int pair_connect(struct kr_keeper *k, struct kr_keeper_qp *q)
{
	int rc;

	pthread_mutex_lock(&k->cmd_lock);
	rc = kr_keeper_rc_connect(k, q, &q->pair.peer_addr, q->pair.peer_qpn, q->pair.peer_psn,
				  q->pair.psn);
	pthread_mutex_unlock(&k->cmd_lock);
	return rc;
}

static bool pair_take(struct kr_keeper_qp *q, int from, int to)
{
	return __atomic_compare_exchange_n(&q->pair.step, &from, to, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE);
}

/* Worker: one RC slot's pending step. true when it did something. */
static bool pair_step(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t i)
{
	struct kr_keeper_qp *q = &t->rc[i];
	struct kr_pool_slot *s = kr_seg_rc(k->seg, t->idx, i);
	struct kr_pair_msg m;
	int rc;

	switch (__atomic_load_n(&q->pair.step, __ATOMIC_ACQUIRE)) {
	case KR_PAIR_ASK:
		pair_msg(k, t, KR_PAIR_REQ, q->pair.cookie, &m);
		m.src_qpn = q->qp.qpn;
		m.psn = q->pair.psn;
		q->pair.deadline_ns = kr_now_ns() + KR_PAIR_TIMEOUT_MS * 1000000ull;
		rc = ctl_send(k, t, &m, q->pair.peer_dctn, &q->pair.peer_addr);
		if (rc) {
			KR_DBG("pool", "tenant %u RC %u: pairing request not sent: %s", t->idx, i,
			       strerror(-rc));
			__atomic_store_n(&s->link, KR_LINK_FAILED, __ATOMIC_RELEASE);
			__atomic_store_n(&q->pair.step, KR_PAIR_LINKED, __ATOMIC_RELEASE);
			return true;
		}
		__atomic_store_n(&q->pair.step, KR_PAIR_WAIT, __ATOMIC_RELEASE);
		return true;
	case KR_PAIR_WAIT:
		if (kr_now_ns() < q->pair.deadline_ns ||
		    !pair_take(q, KR_PAIR_WAIT, KR_PAIR_LINKED))
			return false;
		KR_INFO("pool", "tenant %u RC %u: node %u's keeper did not answer in %u ms", t->idx,
			i, q->pair.peer_node, KR_PAIR_TIMEOUT_MS);
		__atomic_store_n(&s->link, KR_LINK_FAILED, __ATOMIC_RELEASE);
		return true;
	case KR_PAIR_CONNECT:
		rc = pair_connect(k, q);
		if (rc)
			KR_WARN("pool", "tenant %u RC %u: RTR/RTS to node %u: %s", t->idx, i,
				q->pair.peer_node, strerror(-rc));
		__atomic_store_n(&s->link, rc ? KR_LINK_FAILED : KR_LINK_UP, __ATOMIC_RELEASE);
		__atomic_store_n(&q->pair.step, KR_PAIR_LINKED, __ATOMIC_RELEASE);
		return true;
	case KR_PAIR_ACCEPT:
		rc = pair_connect(k, q);
		pair_msg(k, t, rc ? KR_PAIR_NAK : KR_PAIR_ACK, q->pair.cookie, &m);
		m.src_qpn = q->qp.qpn;
		m.psn = q->pair.psn;
		m.dst_qpn = q->pair.peer_qpn;
		m.status = rc;
		if (!rc)
			rc = ctl_send(k, t, &m, q->pair.peer_dctn, &q->pair.peer_addr);
		else
			(void)ctl_send(k, t, &m, q->pair.peer_dctn, &q->pair.peer_addr);
		if (rc) { /* back to the spares: the worker resets it */
			memset(&q->pair, 0, sizeof(q->pair));
			s->link = KR_LINK_NONE;
			__atomic_store_n(&s->state, KR_SLOT_DIRTY, __ATOMIC_RELEASE);
			return true;
		}
		__atomic_store_n(&s->link, KR_LINK_PEER, __ATOMIC_RELEASE);
		__atomic_store_n(&q->pair.step, KR_PAIR_LINKED, __ATOMIC_RELEASE);
		return true;
	default:
		return false;
	}
}

/* kr_keeper_pair_work() - see keeper.h. */
uint32_t kr_keeper_pair_work(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	struct kr_pair_box *b = t->outbox;
	uint32_t done = 0;

	if (!t->ctl.built)
		return 0;
	ctl_reap(k, t);
	pthread_mutex_lock(&b->lock);
	for (uint32_t i = 0; i < b->n; i++)
		(void)ctl_send(k, t, &b->msg[i], b->dctn[i], &b->addr[i]);
	done += b->n;
	b->n = 0;
	pthread_mutex_unlock(&b->lock);
	for (uint32_t i = 0; i < k->seg->rc_spares; i++)
		done += pair_step(k, t, i);
	return done;
}

/* Queue an answer for the worker to send; dropped when the outbox is full (the peer times out). */
static void pair_outbox(struct kr_keeper *k, struct kr_keeper_tenant *t,
			const struct kr_pair_msg *m, uint32_t dctn, const struct kr_devx_addr *addr)
{
	struct kr_pair_box *b = t->outbox;

	pthread_mutex_lock(&b->lock);
	if (b->n < KR_PAIR_OUTBOX) {
		b->msg[b->n] = *m;
		b->dctn[b->n] = dctn;
		b->addr[b->n] = *addr;
		b->n++;
	}
	pthread_mutex_unlock(&b->lock);
	kr_keeper_worker_wake(k);
}

/* kr_keeper_pair_unlink() - see keeper.h. */
void kr_keeper_pair_unlink(struct kr_keeper *k, struct kr_keeper_tenant *t, struct kr_keeper_qp *q)
{
	struct kr_pair_msg m;
	int step = __atomic_exchange_n(&q->pair.step, KR_PAIR_IDLE, __ATOMIC_ACQ_REL);

	/* asked (perhaps answered late) or linked: the peer may hold a QP for us */
	if (step != KR_PAIR_IDLE && step != KR_PAIR_ASK && q->pair.peer_dctn) {
		pair_msg(k, t, KR_PAIR_UNPAIR, q->pair.cookie, &m);
		m.src_qpn = q->qp.qpn;
		m.dst_qpn = q->pair.peer_qpn;
		(void)ctl_send(k, t, &m, q->pair.peer_dctn, &q->pair.peer_addr);
	}
	memset(&q->pair, 0, sizeof(q->pair));
	kr_seg_rc(k->seg, t->idx, q->index)->link = KR_LINK_NONE;
}

/* ---- what arrives at the tenant's DC target ---- */

/* Loop: a peer asks for a QP of ours connected to its src_qpn. */
static void pair_on_req(struct kr_keeper *k, struct kr_keeper_tenant *t,
			const struct kr_pair_msg *m)
{
	struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t->idx);
	struct kr_pair_msg nak;
	struct kr_keeper_qp *q;
	struct kr_pool_slot *s;
	uint32_t idx;

	if (kr_keeper_ring_get(k, tr->rc_ring_off, &idx) || idx >= k->seg->rc_spares) {
		pair_msg(k, t, KR_PAIR_NAK, m->cookie, &nak);
		nak.dst_qpn = m->src_qpn;
		nak.status = -ENOSPC;
		pair_outbox(k, t, &nak, m->src_dctn, &m->src_addr);
		return;
	}
	if (kr_keeper_seg_ring_count(k->seg, tr->rc_ring_off) < k->cfg.low_water)
		kr_keeper_worker_wake(k); /* it may grow the pool */
	q = &t->rc[idx];
	s = kr_seg_rc(k->seg, t->idx, idx);
	s->gen++;
	s->owner_job = 0;
	s->owner_pid = 0;
	s->state = KR_SLOT_LEASED;
	s->link = KR_LINK_PAIRING;
	memset(&q->pair, 0, sizeof(q->pair));
	q->pair.cookie = m->cookie;
	q->pair.peer_node = m->src_node;
	q->pair.peer_dctn = m->src_dctn;
	q->pair.peer_addr = m->src_addr;
	q->pair.peer_qpn = m->src_qpn;
	q->pair.peer_psn = m->psn;
	q->pair.psn = pair_psn();
	__atomic_store_n(&q->pair.step, KR_PAIR_ACCEPT, __ATOMIC_RELEASE);
	kr_keeper_worker_wake(k);
}

/* Loop: the slot of ours an answer's cookie names, if it still waits for it; else NULL. */
static struct kr_keeper_qp *pair_asker(struct kr_keeper *k, struct kr_keeper_tenant *t,
				       uint64_t cookie)
{
	struct kr_pool_slot *s;
	uint32_t idx, gen;

	if (!kr_pair_cookie_slot(cookie, t->idx, k->seg->rc_spares, &idx, &gen))
		return NULL;
	s = kr_seg_rc(k->seg, t->idx, idx);
	if (s->gen != gen || s->state != KR_SLOT_LEASED || !s->owner_job ||
	    t->rc[idx].pair.cookie != cookie)
		return NULL;
	return &t->rc[idx];
}

/* Loop: the peer's answer to our request. */
static void pair_on_answer(struct kr_keeper *k, struct kr_keeper_tenant *t,
			   const struct kr_pair_msg *m)
{
	struct kr_keeper_qp *q = pair_asker(k, t, m->cookie);
	struct kr_pair_msg un;
	uint32_t idx, gen;

	if (q && m->type == KR_PAIR_NAK && pair_take(q, KR_PAIR_WAIT, KR_PAIR_LINKED)) {
		KR_DBG("pool", "tenant %u RC %u: node %u refused: %s", t->idx, q->index,
		       m->src_node, strerror(-m->status));
		__atomic_store_n(&kr_seg_rc(k->seg, t->idx, q->index)->link, KR_LINK_FAILED,
				 __ATOMIC_RELEASE);
		return;
	}
	/* a NAK needs no answer; an answer naming no slot of ours is not one we asked for */
	if (m->type == KR_PAIR_NAK ||
	    !kr_pair_cookie_slot(m->cookie, t->idx, k->seg->rc_spares, &idx, &gen))
		return;
	if (q && m->dst_qpn == q->qp.qpn && pair_take(q, KR_PAIR_WAIT, KR_PAIR_IDLE)) {
		q->pair.peer_qpn = m->src_qpn;
		q->pair.peer_psn = m->psn;
		q->pair.peer_addr = m->src_addr; /* where its answers come from */
		__atomic_store_n(&q->pair.step, KR_PAIR_CONNECT, __ATOMIC_RELEASE);
		kr_keeper_worker_wake(k);
		return;
	}
	/* too late (timed out, given back, asked again): its QP goes back */
	pair_msg(k, t, KR_PAIR_UNPAIR, m->cookie, &un);
	un.dst_qpn = m->src_qpn;
	pair_outbox(k, t, &un, m->src_dctn, &m->src_addr);
}

/* Loop: the asking keeper let the pair go: our QP of it goes back to the spares. */
static void pair_on_unpair(struct kr_keeper *k, struct kr_keeper_tenant *t,
			   const struct kr_pair_msg *m)
{
	for (uint32_t i = 0; i < k->seg->rc_spares; i++) {
		struct kr_keeper_qp *q = &t->rc[i];
		struct kr_pool_slot *s = kr_seg_rc(k->seg, t->idx, i);

		if (s->state != KR_SLOT_LEASED || s->owner_job || q->pair.cookie != m->cookie ||
		    q->pair.peer_node != m->src_node || (m->dst_qpn && m->dst_qpn != q->qp.qpn) ||
		    !pair_take(q, KR_PAIR_LINKED, KR_PAIR_IDLE))
			continue;
		memset(&q->pair, 0, sizeof(q->pair));
		s->link = KR_LINK_NONE;
		__atomic_store_n(&s->state, KR_SLOT_DIRTY, __ATOMIC_RELEASE);
		kr_keeper_worker_wake(k);
		return;
	}
}

/* kr_keeper_pair_recv() - see keeper.h. */
bool kr_keeper_pair_recv(struct kr_keeper *k, struct kr_keeper_tenant *t, const void *buf,
			 uint32_t len)
{
	struct kr_pair_msg m;

	switch (kr_pair_msg_parse(buf, len, t->launch_tag, &m)) {
	case KR_PAIR_STRAY:
		return false;
	case KR_PAIR_BAD:
		KR_WARN_RATELIMITED("pool", "tenant %u: malformed pairing message dropped", t->idx);
		return true;
	default:
		break;
	}
	if (!t->bound || !t->ctl.built) {
		KR_WARN_RATELIMITED("pool", "tenant %u: pairing message with no launch dropped",
				    t->idx);
		return true;
	}
	switch (m.type) {
	case KR_PAIR_REQ:
		pair_on_req(k, t, &m);
		break;
	case KR_PAIR_ACK:
	case KR_PAIR_NAK:
		pair_on_answer(k, t, &m);
		break;
	default: /* KR_PAIR_UNPAIR: the parse lets no other type through */
		pair_on_unpair(k, t, &m);
	}
	return true;
}
