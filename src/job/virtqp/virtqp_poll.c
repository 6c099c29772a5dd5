/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kr_poll: a vQP's completions, in posting order. The common case takes its
 * own successful completions straight from its DCI's CQ into the caller's
 * array: the next CQE must be a successful send completion of the DCI
 * (devx.h) whose ring entry is the oldest outstanding (the dispatch
 * check) and names this vQP. Anything else (another vQP's completion, an
 * error, the library's own requests, a DCI under recovery, completions
 * already queued) goes through kr_vq_dci_progress, which queues each
 * completion on its vQP, and the queue is copied out after.
 */
#include <errno.h>
#include <sched.h>

#include "common/kr_clock.h"
#include "devx/devx.h"
#include "job/virtqp/virtqp.h"

/*
 * The vQP's own successful completions at the head of its DCI's CQ, into
 * wc[0..n). Returns how many; *other is set when it stopped at a CQE it
 * leaves to kr_vq_dci_progress.
 */
static inline int vq_poll_own(struct kr_vqp *v, struct kr_vq_dci *d, struct kr_wc *wc, int n,
			      bool *other)
{
	int got = 0;

	while (got < n) {
		const struct mlx5_cqe64 *cqe;
		const struct kr_vq_ent *e;
		uint64_t seq;

		cqe = kr_devx_cq_next_send(d->cq, d->qp, &seq, other);
		if (!cqe)
			break; /* empty, or *other set */
		e = &d->ent[d->head & (d->cnt - 1)];
		if (!kr_vq_dci_is_head(d, seq) || e->vqp != v ||
		    e->wc.opcode == KR_VQ_OP_INTERNAL) {
			*other = true;
			break;
		}
		kr_devx_cq_take_send(d->cq, d->qp, cqe);
		d->head++;
		v->used -= e->wqebbs;
		wc[got++] = e->wc;
	}
	return got; /* what follows waits for the next poll */
}

/*
 * An empty poll. On a device whose work runs on this host's CPUs (the sim),
 * a thread that has polled empty for KR_POLL_YIELD_NS gives its core up once
 * every KR_POLL_YIELD_EVERY empty polls after: spinning on kr_poll would
 * otherwise hold a core the device's own threads wait for, a scheduler
 * slice at a time (the demo's first READ took 2-7 ms on 2 cores, the engine
 * ready but 1.5 ms behind a spinning job). A wait of a few round trips never
 * yields (50 us did: a warm 30 us READ's p50 moved). A real NIC needs no
 * core: nothing changes there.
 */
#define KR_POLL_YIELD_EVERY 64u
#define KR_POLL_YIELD_NS    200000ull
static void vq_poll_idle(struct kr_vq_dci *d)
{
	if (!d->leased || !d->cq)
		return; /* between a broken DCI and its new lease */
	/* a CQE taken since (the fast path keeps no count): a new wait */
	if (d->cq->cons_index != d->empty_ci) {
		d->empty_ci = d->cq->cons_index;
		d->empty_polls = 0;
		d->empty_since = kr_now_ns();
		return;
	}
	if (++d->empty_polls % KR_POLL_YIELD_EVERY == 0 &&
	    kr_devx_has(d->ctx->dev, KR_DEVX_BE_HOST_CPU) &&
	    kr_now_ns() - d->empty_since > KR_POLL_YIELD_NS)
		sched_yield();
}

/*
 * The rest of a poll: reap the CQ into the vQPs' queues (when the fast path
 * stopped at a CQE it leaves, or could not run), promotion's clock, then
 * this vQP's queue after the got completions already in wc. Out of line:
 * the fast path saves no registers for it.
 */
static __attribute__((noinline)) int vq_poll_queued(struct kr_vqp *v, struct kr_wc *wc, int n,
						    int got, bool other)
{
	int rc = 0;

	kr_vq_dci_ring_pending(v->dci); /* what KR_POST_MORE left: a poll never waits on it */
	if (other)
		rc = kr_vq_dci_progress(v->dci);
	/* on RC, only an idle poll looks at the clock (no post for four windows: cold) */
	if (v->promo != KR_PROMO_NONE && !rc &&
	    (v->promo != KR_PROMO_RC || v->wc_head == v->wc_tail))
		kr_vq_promote_step(v, false);
	while (got < n && v->wc_head != v->wc_tail) {
		uint32_t i = v->wc_head % v->credits;

		wc[got++] = v->wcq[i];
		v->used -= v->wc_cost[i];
		v->wc_head++;
	}
	if (got)
		return got;
	kr_job_cache_flush(v->dci->ctx); /* a lookup's report, while we wait anyway */
	vq_poll_idle(v->dci);
	/* nothing came: a dead keeper (its device gone with it) is why, or not */
	if (rc == 0 && kr_job_keeper_gone_fast(v->dci->ctx)) /* the step may have moved v */
		rc = -ENOTCONN;
	return rc;
}

int kr_poll(struct kr_vqp *v, struct kr_wc *wc, int n)
{
	struct kr_vq_dci *d;
	bool other = true;
	int got = 0;

	if (!v || !wc || n < 0)
		return -EINVAL;
	d = v->dci;
	if (__builtin_expect(v->wc_head == v->wc_tail && d->leased && !d->broken &&
				 (v->promo == KR_PROMO_NONE || v->promo == KR_PROMO_RC),
			     1)) {
		other = false;
		got = vq_poll_own(v, d, wc, n, &other);
		if (got && !other)
			return got; /* busy: on RC, only an idle poll looks at the clock */
	}
	return vq_poll_queued(v, wc, n, got, other);
}
