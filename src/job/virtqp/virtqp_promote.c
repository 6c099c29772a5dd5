/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DC->RC promotion: a vQP that posts faster than the attachment's
 * promote_rate moves onto an RC QP of its own, paired by the two keepers
 * (src/keeper/keeper_pair.c), and back onto a DCI when it cools down. An RC QP
 * pays no DC connect per message and never waits for a DCI to switch
 * targets; a spare costs the keepers a QP each, so only hot peers get one.
 *
 * The vQP never has requests on both queues: once the pair is up, its posts
 * get -EAGAIN (as when its credits are used up) until every request it has
 * on the DCI completed, then the next post goes on the RC QP. Its
 * completions come out in the order it posted; none is lost or repeated.
 * Demotion drains the RC QP the same way. Pairing runs on the keepers'
 * workers: here it costs one call to the keeper (an answer from its event
 * loop) and a look at the slot's link in the pool segment at each step.
 *
 * When pairing fails (no spare on either node, the peer keeper dead or not
 * answering) the vQP stays on DC and works as before; it
 * asks again after KR_PROMOTE_RETRY_MS. Port vQPs (SENDs) and vQPs to this
 * node stay on DC.
 *
 * Rate: every KR_VQ_RATE_POSTS posts the vQP reads the clock; that many
 * posts in less than KR_VQ_RATE_POSTS / promote_rate seconds is hot. On RC,
 * that many posts taking more than four times as long (or a kr_poll() that
 * sees no post for that long) is cold.
 */
#include <errno.h>
#include <stdlib.h>

#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "job/virtqp/virtqp.h"

#define KR_PROMOTE_RETRY_MS 1000u

/* Nanoseconds KR_VQ_RATE_POSTS posts take at the promotion rate. */
static uint64_t promo_window_ns(const struct kr_vqp *v)
{
	uint32_t rate = v->dci->ctx->promote_rate;

	return rate ? (uint64_t)KR_VQ_RATE_POSTS * 1000000000ull / rate : UINT64_MAX;
}

/*
 * Does v have a request on its queue whose CQE has not come? Its credits
 * held (used) are those of requests in flight plus those of completions
 * waiting for kr_poll (an internal request's come back with its CQE), so no
 * counter on the data path is needed to tell.
 */
static bool promo_inflight(const struct kr_vqp *v)
{
	uint32_t queued = 0;

	for (uint32_t i = v->wc_head; i != v->wc_tail; i++)
		queued += v->wc_cost[i % v->credits];
	return v->used != queued;
}

static void promo_backoff(struct kr_vqp *v)
{
	v->promo = KR_PROMO_BACKOFF;
	v->retry_ns = kr_now_ns() + KR_PROMOTE_RETRY_MS * 1000000ull;
}

/* v's RC slot as a queue of its own: the DCI machinery, one vQP, no address vector. */
static struct kr_vq_dci *promo_rc_new(struct kr_vqp *v)
{
	struct kr_ctx *ctx = v->dci->ctx;
	struct kr_vq_dci *q = calloc(1, sizeof(*q));
	int rc;

	if (!q)
		return NULL;
	q->ctx = ctx;
	q->rc = true;
	rc = kr_job_rc_pair(ctx, v->node, &v->av, &q->lease);
	if (rc) {
		KR_DBG("virtqp", "vqp %u: no RC pair with node %u: %s", v->id, v->node,
		       strerror(-rc));
		free(q);
		return NULL;
	}
	q->leased = true;
	rc = kr_job_dci_qp(ctx, &q->lease, &q->qp, &q->cq);
	if (!rc) {
		q->qpn = q->lease.qpn;
		q->cnt = q->qp->sq_wqebb_cnt;
		q->credits_free = q->cnt;
		rc = kr_vq_tables_alloc(q);
	}
	if (rc || q->cnt < v->credits || !kr_vq_qp_fits(q->qp)) {
		kr_vq_dci_free(q);
		return NULL;
	}
	return q;
}

/* On DC, hot: ask for an RC pair. */
static void promo_start(struct kr_vqp *v)
{
	if (v->snd || v->node == KR_NODE_SELF || v->state != KR_VQP_RTS)
		return;
	v->rcq = promo_rc_new(v);
	if (!v->rcq) {
		promo_backoff(v);
		return;
	}
	v->promo = KR_PROMO_PAIRING;
}

/* DC requests drained: the vQP leaves its DCI for the RC QP. */
static void promo_switch_to_rc(struct kr_vqp *v)
{
	struct kr_vq_dci *d = v->dci;

	d->credits_free += v->credits;
	kr_vq_dci_put(d, kr_vq_tgt_key(v->node, v->av.dctn));
	v->rcq->credits_free -= v->credits;
	v->rcq->nvqp = 1;
	v->dci = v->rcq;
	v->promo = KR_PROMO_RC;
	v->promotions++;
	v->mark_ns = kr_now_ns();
	KR_DBG("virtqp", "vqp %u: on RC QP 0x%x to node %u", v->id, v->rcq->qpn, v->node);
}

/* On RC, cold: pick the DCI it goes back to, then drain. */
static void promo_demote_start(struct kr_vqp *v)
{
	uint64_t key = kr_vq_tgt_key(v->node, v->av.dctn);

	v->back = kr_vq_dci_pick(v->dci->ctx, key, v->credits);
	if (!v->back) { /* none to be had now: stay on RC a while longer */
		v->mark_ns = kr_now_ns();
		return;
	}
	v->promo = KR_PROMO_DEMOTE;
}

/* RC requests drained: back on the DCI, the RC slot goes back to the keeper (and its pair). */
static void promo_switch_to_dc(struct kr_vqp *v)
{
	uint64_t key = kr_vq_tgt_key(v->node, v->av.dctn);

	if (kr_vq_dci_hold(v->back, key, v->credits)) { /* no memory: try at the next step */
		return;
	}
	v->dci = v->back;
	v->back = NULL;
	kr_vq_dci_free(v->rcq);
	v->rcq = NULL;
	v->promo = KR_PROMO_NONE;
	v->demotions++;
	v->mark_ns = 0;
	KR_DBG("virtqp", "vqp %u: back on DCI 0x%x", v->id, v->dci->qpn);
}

/* kr_vq_promote_tick() - see virtqp.h. */
void kr_vq_promote_tick(struct kr_vqp *v)
{
	uint64_t now, took;

	if (!v->dci->ctx->promote_rate)
		return; /* off */
	now = kr_now_ns();
	took = v->mark_ns ? now - v->mark_ns : UINT64_MAX;
	v->mark_ns = now;
	if (v->promo == KR_PROMO_NONE && took < promo_window_ns(v))
		promo_start(v);
	else if (v->promo == KR_PROMO_RC && took / 4 > promo_window_ns(v))
		promo_demote_start(v);
	else if (v->promo == KR_PROMO_BACKOFF && now >= v->retry_ns)
		v->promo = KR_PROMO_NONE; /* the next hot window asks again */
}

/* kr_vq_promote_step() - see virtqp.h. */
int kr_vq_promote_step(struct kr_vqp *v)
{
	int link;

	switch (v->promo) {
	case KR_PROMO_PAIRING:
		link = kr_job_rc_link(v->dci->ctx, &v->rcq->lease);
		if (link == KR_LINK_PAIRING)
			return 0;
		if (link != KR_LINK_UP || v->state != KR_VQP_RTS) {
			kr_vq_dci_free(v->rcq); /* refused, timed out, or taken back */
			v->rcq = NULL;
			promo_backoff(v);
			return 0;
		}
		v->promo = KR_PROMO_DRAIN;
		/* fall through */
	case KR_PROMO_DRAIN:
		if (promo_inflight(v))
			return -EAGAIN;
		promo_switch_to_rc(v);
		return 0;
	case KR_PROMO_RC:
		if (v->mark_ns && kr_now_ns() - v->mark_ns > 4 * promo_window_ns(v))
			promo_demote_start(v); /* no post for that long */
		return v->promo == KR_PROMO_DEMOTE ? -EAGAIN : 0;
	case KR_PROMO_DEMOTE:
		if (promo_inflight(v))
			return -EAGAIN;
		promo_switch_to_dc(v);
		return v->promo == KR_PROMO_DEMOTE ? -EAGAIN : 0;
	default:
		return 0;
	}
}

/* kr_vq_promote_drop() - see virtqp.h. */
void kr_vq_promote_drop(struct kr_vqp *v)
{
	if (v->back) {
		kr_vq_dci_unpick(v->back);
		v->back = NULL;
	}
	if (v->rcq && v->rcq != v->dci) /* still pairing or draining: never posted on */
		kr_vq_dci_free(v->rcq);
	v->rcq = NULL;
}
