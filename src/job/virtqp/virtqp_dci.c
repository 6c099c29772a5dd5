/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A DCI leased to one thread: the ring of requests in flight (who posted
 * each, with which wr_id), completion dispatch to the vQPs, and recovery of
 * the shared DCI after one vQP's error. Which DCI a vQP gets is
 * virtqp_policy.c's.
 *
 * Dispatch: every request is posted signaled with the DCI's posting sequence
 * as its devx wr_id; a DCI completes in order, so each CQE names the oldest
 * request in flight (anything else is -EIO: the CQ is not ours).
 *
 * Recovery: an error CQE moves the vQP that posted it to KR_VQP_ERR and marks
 * the DCI broken; the hardware then flushes every later request. Flushes of
 * the failed vQP are reported to it (KR_WC_WR_FLUSH_ERR, RC semantics);
 * flushes of the others are kept, in order, in the redo list. Once every
 * request is accounted for, the broken DCI goes back to the keeper (which
 * resets it: a job issues no firmware command) and a fresh lease replaces it;
 * the redo list is posted on it in order. No sleeping here: a recovery that
 * finds no free DCI is tried again at the next kr_poll().
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "job/virtqp/virtqp.h"

static int vq_dci_view(struct kr_vq_dci *d)
{
	int rc = kr_job_dci_qp(d->ctx, &d->lease, &d->qp, &d->cq);

	if (rc)
		return rc;
	if (!kr_vq_qp_fits(d->qp)) {
		KR_ERR("virtqp", "DCI 0x%x takes WQEs of %u bytes, a vQP posts up to %u",
		       d->lease.qpn, kr_devx_qp_max_wqe_ds(d->qp) * 16, KR_VQ_MAX_DS * 16);
		return -EPROTO;
	}
	d->qpn = d->lease.qpn;
	d->head = d->tail = 0;
	return 0;
}

struct kr_vq_dci *kr_vq_dci_new(struct kr_ctx *ctx, bool spare_only)
{
	struct kr_vq_dci *d = kr_vq_spare_get(ctx); /* an earlier thread's: no keeper call */
	int rc;

	if (d)
		return d;
	if (spare_only) {
		errno = ENOSPC;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	d->ctx = ctx;
	rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &d->lease);
	if (rc)
		goto err_free;
	d->leased = true;
	rc = vq_dci_view(d);
	if (rc)
		goto err_free;
	d->cnt = d->qp->sq_wqebb_cnt;
	d->credits_free = d->cnt;
	rc = kr_vq_tables_alloc(d);
	if (rc)
		goto err_free;
	return d;

err_free:
	kr_vq_dci_free(d);
	errno = -rc;
	return NULL;
}

bool kr_vq_dci_idle(const struct kr_vq_dci *d)
{
	return d->leased && !d->broken && d->head == d->tail && !d->nredo && !d->nvqp &&
	       d->credits_free == d->cnt;
}

void kr_vq_dci_free(struct kr_vq_dci *d)
{
	/* an idle DCI needs no reset before its next holder (keeper_dci_idle.c) */
	bool idle = d->lease.kind == KR_LEASE_DCI && kr_vq_dci_idle(d);

	if (d->leased)
		kr_job_lease_give_back(d->ctx, &d->lease, idle ? KR_RELEASE_F_IDLE : 0);
	kr_vq_tables_free(d);
	free(d->tgt);
	free(d);
}

/* Queue one completion on its vQP (room is guaranteed by the credits). */
static void vq_deliver(struct kr_vqp *v, const struct kr_vq_ent *e, int status)
{
	uint32_t i = v->wc_tail % v->credits;
	struct kr_wc *wc = &v->wcq[i];

	*wc = e->wc;
	wc->status = (uint32_t)status;
	if (status != KR_WC_SUCCESS)
		wc->byte_len = 0;
	v->wc_cost[i] = e->wqebbs;
	v->wc_tail++;
}

/*
 * Keep e, flushed, for a re-post on the next DCI. An inline request posted
 * from the caller's buffer takes its bytes from its WQE, still in this DCI's
 * ring (nothing is posted on a broken DCI, and the ring goes back to the
 * keeper only at recovery). False: they cannot be read back (then the
 * request completes flushed, in error, rather than with other bytes).
 */
static bool vq_redo_save(struct kr_vq_dci *d, const struct kr_vq_ent *e)
{
	struct kr_vq_ent *k = &d->redo[d->nredo];
	int n;

	*k = *e;
	if ((e->wr.flags & KR_WR_INLINE) && e->sge[0].addr != (uintptr_t)e->inl) {
		n = kr_devx_sq_inline_read(d->qp, e->sq_pi, k->inl, sizeof(k->inl));
		if (n != (int)e->sge[0].length)
			return false;
	}
	d->nredo++;
	return true;
}

static int vq_complete(struct kr_vq_dci *d, const struct kr_devx_wc *wc)
{
	struct kr_vq_ent *e;
	struct kr_vqp *v;

	if (!kr_vq_dci_is_head(d, wc->wr_id))
		return -EIO;
	e = &d->ent[d->head & (d->cnt - 1)];
	d->head++;
	v = e->vqp;
	if (wc->status != KR_WC_SUCCESS)
		d->broken = true;
	if (!v) { /* its vQP disconnected: the credits come home now */
		d->credits_free += e->wqebbs;
		return 0;
	}
	if (wc->status == KR_WC_WR_FLUSH_ERR && v->state == KR_VQP_RTS && !d->rc &&
	    vq_redo_save(d, e))
		return 0; /* flushed behind another vQP's error: not executed, post again */
	if (wc->status != KR_WC_SUCCESS && v->state == KR_VQP_RTS) {
		v->state = KR_VQP_ERR;
		KR_DP_LOG("virtqp", "vqp %u: %s on DCI 0x%x", v->id, kr_strerror(wc->status),
			  d->qpn);
		if (v->node != KR_NODE_SELF &&
		    (wc->status == KR_WC_REM_INV_REQ_ERR || wc->status == KR_WC_RETRY_EXC_ERR))
			kr_dct_invalidate(d->ctx, v->node);
	}
	if (e->wc.opcode == KR_VQ_OP_INTERNAL) { /* the library's own: no user completion */
		v->used -= e->wqebbs;
		kr_vq_send_internal(v, e, wc->status);
		return 0;
	}
	vq_deliver(v, e, wc->status);
	return 0;
}

/* Every request of the broken DCI is accounted for: swap it for a fresh one. */
static int vq_recover(struct kr_vq_dci *d)
{
	struct kr_lease nl;
	uint32_t n;
	int rc;

	if (d->leased) {
		rc = kr_lease_alloc(d->ctx, KR_LEASE_DCI, &nl);
		kr_lease_free(d->ctx, &d->lease); /* the keeper resets it */
		d->leased = false;
		if (rc == -ENOTCONN || rc == -EPIPE)
			return rc;
		if (!rc)
			goto have;
	}
	rc = kr_lease_alloc(d->ctx, KR_LEASE_DCI, &nl);
	if (rc == -ENOSPC)
		return 0; /* none free yet: the next poll tries again */
	if (rc)
		return rc;
have:
	d->lease = nl;
	rc = vq_dci_view(d);
	if (rc) {
		kr_lease_free(d->ctx, &nl);
		return rc;
	}
	d->leased = true;
	if (d->qp->sq_wqebb_cnt != d->cnt)
		return -EPROTO;
	d->broken = false;
	d->recoveries++;
	n = d->nredo;
	d->nredo = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct kr_vq_ent *e = &d->ent[d->tail & (d->cnt - 1)];

		*e = d->redo[i];
		e->wc.flags |= KR_WC_F_REPOSTED;
		/* the copy's pointers named the redo slot, its sequence the old DCI's */
		e->wr.wr_id = d->tail;
		e->wr.sge = e->sge;
		if (e->wr.flags & KR_WR_INLINE)
			e->sge[0].addr = (uintptr_t)e->inl;
		rc = kr_vq_dci_post(d, e, i + 1 == n); /* one doorbell for them all */
		if (rc) /* cannot happen: the credits fit the ring */
			return rc;
	}
	return 0;
}

int kr_vq_dci_progress(struct kr_vq_dci *d)
{
	struct kr_devx_wc wc[16];
	int n, rc;

	if (d->leased) {
		do {
			n = kr_devx_cq_poll(d->cq, wc, 16);
			if (n < 0)
				return n;
			for (int i = 0; i < n; i++) {
				rc = vq_complete(d, &wc[i]);
				if (rc)
					return rc;
			}
		} while (n == 16);
	}
	/* an RC QP in error stays so: its one vQP is in error too (RC semantics) */
	if (d->broken && d->head == d->tail && !d->rc)
		return vq_recover(d);
	return 0;
}

/* kr_vq_dci_wait() - see virtqp.h. */
int kr_vq_dci_wait(struct kr_vq_dci *d, uint64_t end, uint64_t wait_ns)
{
	uint32_t recoveries = d->recoveries, spins = 0;
	uint64_t t0 = kr_now_ns();
	int rc;

	/* a recovery (a fresh lease) follows only once every request was reaped */
	while (d->leased && d->recoveries == recoveries && d->head < end) {
		kr_vq_dci_ring_pending(d); /* a batch left open goes out */
		rc = kr_vq_dci_progress(d);
		if (rc)
			return rc;
		if (++spins % 64)
			continue;
		/* a dead keeper took the device with it: nothing writes any more */
		if (kr_job_keeper_gone_fast(d->ctx))
			return -ENOTCONN;
		if (kr_now_ns() - t0 > wait_ns)
			return -ETIMEDOUT;
		sched_yield(); /* on a loaded machine the device's engine needs the CPU */
	}
	return 0;
}
