/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * kr_connect/kr_disconnect/kr_vqp_query: a vQP is a share of the
 * calling thread's DCI (credits), the peer's DC address vector and a queue of
 * completions waiting for the user. Connect resolves the peer and takes
 * credits; no firmware command, no handshake (a port's slot claim, in
 * virtqp_send.c, is one round trip to the receiver).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "job/job.h"
#include "common/kr_log.h"
#include "job/virtqp/virtqp.h"

/* kr_vq_rec_av() - see virtqp.h. */
void kr_vq_rec_av(const struct kr_ctx *ctx, const struct kr_dct_rec *rec, struct kr_devx_dc_av *av)
{
	memset(av, 0, sizeof(*av));
	av->dctn = rec->dctn;
	av->dc_key = ctx->launch.dc_key; /* the launch's, on every node: never in a record */
	kr_devx_dc_av_path(av, &ctx->zone->port, &rec->addr, ctx->zone->dctn, rec->dctn);
}

/* kr_vq_peer_av() - see virtqp.h. */
int kr_vq_peer_av(struct kr_ctx *ctx, uint32_t peer, struct kr_devx_dc_av *av)
{
	struct kr_dct_rec rec;
	int rc;

	if (peer == KR_NODE_SELF) /* no lookup: the tenant zone names this keeper's DCT */
		return kr_job_tenant_av(ctx, av);
	rc = kr_dct_resolve(ctx, peer, &rec);
	if (rc)
		return rc;
	kr_vq_rec_av(ctx, &rec, av);
	return 0;
}

struct kr_vqp *kr_connect(struct kr_ctx *ctx, uint32_t peer, const struct kr_connect_opts *opts)
{
	struct kr_devx_dc_av av;
	int rc;

	if (!ctx || ctx->observer ||
	    (opts && (opts->flags || opts->port > 0xffff || opts->reply_port > 0xffff))) {
		errno = EINVAL;
		return NULL;
	}
	/* a lookup this connect needs READs on the thread's DCI (virtqp_look.c) */
	ctx->look_read = kr_vq_look_read;
	if (opts && opts->port)
		return kr_vq_connect_port(ctx, peer, opts);
	rc = kr_vq_peer_av(ctx, peer, &av);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	return kr_vq_connect_av(ctx, peer, &av, opts);
}

struct kr_vqp *kr_vq_connect_av(struct kr_ctx *ctx, uint32_t peer, const struct kr_devx_dc_av *av,
				const struct kr_connect_opts *opts)
{
	static uint32_t next_id;
	uint32_t credits = KR_VQP_DEFAULT_CREDITS;
	uint64_t key;
	struct kr_vq_dci *d;
	struct kr_vqp *v;
	int rc;

	if (!ctx || !av || ctx->observer || (opts && opts->flags)) {
		errno = EINVAL;
		return NULL;
	}
	if (opts && opts->credits)
		credits = opts->credits;
	key = kr_vq_tgt_key(peer, av->dctn);
	d = kr_vq_dci_pick(ctx, key, credits);
	if (!d)
		return NULL;
	v = calloc(1, sizeof(*v));
	if (!v) {
		rc = -ENOMEM;
		goto err_put;
	}
	v->wcq = calloc(credits, sizeof(*v->wcq));
	v->wc_cost = calloc(credits, sizeof(*v->wc_cost));
	if (!v->wcq || !v->wc_cost) {
		rc = -ENOMEM;
		goto err_free;
	}
	v->dci = d;
	v->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
	v->node = peer;
	v->state = KR_VQP_RTS;
	v->credits = credits;
	v->av = *av;
	kr_devx_dc_av_encode(av, &v->av_wqe);
	rc = kr_vq_dci_hold(d, key, credits);
	if (rc)
		goto err_free;
	return v;

err_free:
	free(v->wcq);
	free(v->wc_cost);
	free(v);
err_put:
	kr_vq_dci_unpick(d);
	errno = -rc;
	return NULL;
}

/*
 * v's requests still in flight on d lose their vQP: their completions are
 * dropped, their credits come home with them (vq_complete). Its flushed
 * requests waiting for a recovery are never posted again. Returns the WQEBBs
 * they hold; *end the sequence after the last of them (0: none).
 */
static uint32_t vq_orphan(struct kr_vqp *v, struct kr_vq_dci *d, uint64_t *end)
{
	uint32_t inflight = 0, j = 0;

	*end = 0;
	for (uint64_t s = d->head; s != d->tail; s++) {
		struct kr_vq_ent *e = &d->ent[s & (d->cnt - 1)];

		if (e->vqp == v) {
			e->vqp = NULL;
			inflight += e->wqebbs;
			*end = s + 1;
		}
	}
	for (uint32_t i = 0; i < d->nredo; i++)
		if (d->redo[i].vqp != v)
			d->redo[j++] = d->redo[i];
	d->nredo = j;
	return inflight;
}

int kr_disconnect(struct kr_vqp *v)
{
	struct kr_vq_send *snd = NULL;
	struct kr_vq_dci *d;
	uint32_t inflight;
	uint64_t end;
	int rc = 0;

	if (!v)
		return -EINVAL;
	if (v->snd)
		snd = kr_vq_send_close(v); /* its slot on the port goes back first */
	kr_vq_promote_drop(v);		   /* a pair being made, a DCI picked to go back to */
	d = v->dci;
	kr_job_cache_flush(d->ctx); /* a report its connect held, if no poll sent it */
	kr_vq_dci_ring_pending(d); /* its KR_POST_MORE requests go out, to complete as orphans */
	inflight = vq_orphan(v, d, &end);
	/*
	 * Requests in flight would still write (and, retransmitted, read) their
	 * local buffers, and hold their WQEBBs: wait for their completions, so
	 * that the user may free or reuse those buffers once we return and no
	 * ring slot is rewritten under a request the device may still resend.
	 */
	if (end)
		rc = kr_vq_dci_wait(d, end, KR_DISCONNECT_WAIT_MS * 1000000ull);
	if (rc == -ETIMEDOUT)
		KR_WARN_RATELIMITED("virtqp",
				    "vqp %u: requests still in flight after %u ms on %s 0x%x",
				    v->id, KR_DISCONNECT_WAIT_MS, d->rc ? "RC QP" : "DCI", d->qpn);
	if (snd)
		kr_vq_send_free(d->ctx, snd, rc != -ETIMEDOUT);
	if (d->rc) { /* on its RC QP: the keeper resets it, and tells the peer's */
		kr_vq_dci_free(d);
		goto out;
	}
	d->credits_free += v->credits - inflight; /* the orphans' come back with their CQEs */
	kr_vq_dci_put(d, kr_vq_tgt_key(v->node, v->av.dctn));
out:
	free(v->wcq);
	free(v->wc_cost);
	free(v);
	return rc == -ETIMEDOUT ? rc : 0;
}

int kr_vqp_query(const struct kr_vqp *v, struct kr_vqp_attr *attr)
{
	if (!v || !attr)
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->transport = v->dci->rc ? KR_VQP_RC : KR_VQP_DC;
	attr->state = v->state;
	attr->peer = v->node;
	attr->dctn = v->av.dctn;
	attr->credits = v->credits;
	attr->credits_used = v->used;
	attr->dci_qpn = v->dci->qpn;
	attr->dci_recoveries = v->dci->recoveries;
	attr->promotions = v->promotions;
	attr->demotions = v->demotions;
	return 0;
}
