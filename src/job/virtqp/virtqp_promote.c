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
 * Demotion drains the RC QP the same way. No post waits for a keeper: the
 * post that finds the vQP hot only marks it (KR_PROMO_WANT); its next
 * kr_poll sends one message (job_pair.c); the keeper answers in the job
 * slot, where a later poll looks, then posts and polls look at the slot's
 * link in the pool segment, while the vQP goes on posting on its DCI.
 * Pairing itself runs on the keepers' workers.
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

/* v's RC slot, leased: a queue of its own (the DCI machinery, one vQP, no address vector). */
static int promo_rc_ready(struct kr_vqp *v)
{
	struct kr_vq_dci *q = v->rcq;
	int rc;

	q->leased = true;
	rc = kr_job_dci_qp(q->ctx, &q->lease, &q->qp, &q->cq);
	if (!rc) {
		q->qpn = q->lease.qpn;
		q->cnt = q->qp->sq_wqebb_cnt;
		q->credits_free = q->cnt;
		rc = kr_vq_tables_alloc(q);
	}
	if (!rc && (q->cnt < v->credits || !kr_vq_qp_fits(q->qp)))
		rc = -EINVAL;
	return rc;
}

/* Hot, at a kr_poll: ask for an RC pair (one message; the answer comes to a later step). */
static void promo_ask(struct kr_vqp *v)
{
	struct kr_ctx *ctx = v->dci->ctx;
	struct kr_vq_dci *q;
	int rc;

	if (v->state != KR_VQP_RTS) {
		v->promo = KR_PROMO_NONE;
		return;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		promo_backoff(v);
		return;
	}
	q->ctx = ctx;
	q->rc = true;
	rc = kr_job_rc_ask(ctx, v->node, &v->av, false, &v->ask);
	if (rc) {
		free(q);
		if (rc != -EAGAIN) /* busy context lock: the next poll asks */
			promo_backoff(v);
		return;
	}
	v->rcq = q;
	v->promo = KR_PROMO_ASKING;
}

/* KR_PROMO_ASKING: the keeper's answer, if it came. */
static void promo_answer(struct kr_vqp *v)
{
	int rc = kr_job_rc_take(v->dci->ctx, v->ask, false, &v->rcq->lease);

	if (rc == -EINPROGRESS)
		return;
	if (!rc)
		rc = promo_rc_ready(v);
	if (rc) {
		KR_DBG("virtqp", "vqp %u: no RC pair with node %u: %s", v->id, v->node,
		       strerror(-rc));
		kr_vq_dci_free(v->rcq); /* gives the slot back if it was leased */
		v->rcq = NULL;
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
	if (v->promo == KR_PROMO_NONE && took < promo_window_ns(v) && !v->snd &&
	    v->node != KR_NODE_SELF && v->state == KR_VQP_RTS)
		v->promo = KR_PROMO_WANT; /* the next kr_poll asks: a post makes no call */
	else if (v->promo == KR_PROMO_RC && took / 4 > promo_window_ns(v))
		promo_demote_start(v);
	else if (v->promo == KR_PROMO_BACKOFF && now >= v->retry_ns)
		v->promo = KR_PROMO_NONE; /* the next hot window asks again */
}

/* kr_vq_promote_step() - see virtqp.h. */
int kr_vq_promote_step(struct kr_vqp *v, bool from_post)
{
	int link;

	switch (v->promo) {
	case KR_PROMO_WANT:
		if (!from_post)
			promo_ask(v);
		return 0;
	case KR_PROMO_ASKING:
		if (from_post)
			return 0;
		promo_answer(v);
		if (v->promo != KR_PROMO_PAIRING)
			return 0;
		/* fall through */
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
	if (v->promo == KR_PROMO_ASKING) { /* its answer may lease a slot: give it back */
		kr_job_rc_forget(v->dci->ctx, v->ask);
		free(v->rcq);
		v->rcq = NULL;
	}
	if (v->back) {
		kr_vq_dci_unpick(v->back);
		v->back = NULL;
	}
	if (v->rcq && v->rcq != v->dci) /* still pairing or draining: never posted on */
		kr_vq_dci_free(v->rcq);
	v->rcq = NULL;
}
