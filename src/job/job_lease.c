/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Job side of everything after attach: calls to the keeper (leases, MRs,
 * node cache reports), and the posting view of a leased DCI built from its
 * descriptor in the tenant zone.
 *
 * A call to a keeper that went away returns -ENOTCONN (EOF or reset) or
 * -EPIPE (write to a closed socket) and marks the context dead: every later
 * call returns -ENOTCONN at once, nothing blocks on a dead keeper.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "job/job.h"

/* kr_job_lost() - see job.h. */
int kr_job_lost(struct kr_ctx *ctx, int rc)
{
	if (rc == -ENOTCONN || rc == -EPIPE || rc == -ECONNRESET) {
		ctx->dead = true;
		return rc == -EPIPE ? -EPIPE : -ENOTCONN;
	}
	return rc;
}

/* kr_job_call_fd() - see job.h; fd < 0: none. */
int kr_job_call_fd(struct kr_ctx *ctx, void *req, size_t len, int fd, struct kr_msg_reply *rep)
{
	int rc;

	if (ctx->dead || ctx->observer)
		return ctx->dead ? -ENOTCONN : -EPERM;
	((struct kr_msg_hdr *)req)->seq = ++ctx->seq;
	rc = fd < 0 ? kr_msg_call(ctx->sock, req, len, rep, sizeof(*rep), NULL, 0, NULL)
		    : kr_msg_call_fd(ctx->sock, req, len, fd, rep, sizeof(*rep));
	rc = kr_job_lost(ctx, rc);
	if (rc)
		return rc;
	if (rep->hdr.len != sizeof(*rep))
		return -EPROTO;
	return rep->status;
}

/* kr_job_call() - see job.h. */
int kr_job_call(struct kr_ctx *ctx, void *req, size_t len, struct kr_msg_reply *rep)
{
	return kr_job_call_fd(ctx, req, len, -1, rep);
}

/* ---- the node cache: the keeper writes it, jobs report ---- */

/* A report, filled; false when rec does not fit. */
static bool cache_msg(struct kr_msg_cache *m, uint32_t op, uint32_t node_id, const void *rec,
		      size_t len)
{
	if (len > sizeof(m->rec))
		return false;
	memset(m, 0, sizeof(*m));
	m->op = op;
	m->node_id = node_id;
	if (len)
		memcpy(m->rec, rec, len);
	kr_msg_init(&m->hdr, KR_MSG_CACHE, sizeof(*m), 0);
	return true;
}

/* ctx->lock held: send m (one-way: a lost report only costs a later lookup a READ). */
static void cache_send(struct kr_ctx *ctx, struct kr_msg_cache *m)
{
	if (ctx->dead || ctx->observer)
		return;
	m->hdr.seq = ++ctx->seq;
	if (kr_msg_send(ctx->sock, m, sizeof(*m), NULL, 0) == -EPIPE)
		ctx->dead = true;
}

void kr_job_cache_report(struct kr_ctx *ctx, uint32_t op, uint32_t node_id, const void *rec,
			  size_t len)
{
	struct kr_msg_cache m;

	if (!cache_msg(&m, op, node_id, rec, len))
		return;
	pthread_mutex_lock(&ctx->lock);
	cache_send(ctx, &m);
	pthread_mutex_unlock(&ctx->lock);
}

/* kr_job_cache_report_later() - see job.h. */
void kr_job_cache_report_later(struct kr_ctx *ctx, uint32_t op, uint32_t node_id,
				const void *rec, size_t len)
{
	struct kr_msg_cache m;

	if (!cache_msg(&m, op, node_id, rec, len))
		return;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->cache_held_set)
		cache_send(ctx, &ctx->cache_held);
	ctx->cache_held = m;
	__atomic_store_n(&ctx->cache_held_set, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ctx->lock);
}

/* kr_job_cache_flush() - see job.h. */
void kr_job_cache_flush(struct kr_ctx *ctx)
{
	if (!__atomic_load_n(&ctx->cache_held_set, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->cache_held_set)
		cache_send(ctx, &ctx->cache_held);
	__atomic_store_n(&ctx->cache_held_set, false, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&ctx->lock);
}

/* ---- DCIs ---- */

/*
 * ctx->lock held: the posting view of DCI lease l (descriptor checked); a
 * fenced keeper's DCI is first claimed with token and mapped.
 */
static int job_dci_view(struct kr_ctx *ctx, const struct kr_lease *l, uint64_t token,
			struct kr_job_dci *jd)
{
	const struct kr_zone_dci *d;
	struct kr_devx_uar *uar;
	uint8_t *z = (uint8_t *)ctx->zone;
	uint64_t sq_len, cq_len;
	int rc;

	bool rc_slot = l->kind == KR_LEASE_RC;

	if (l->index >= (rc_slot ? ctx->zone->nrc : ctx->zone->ndci))
		return -EPROTO;
	d = rc_slot ? kr_zone_rc_at(ctx->zone, l->index) : kr_zone_dci_at(ctx->zone, l->index);
	sq_len = (uint64_t)d->sq_wqebb_cnt * 64u;
	cq_len = (uint64_t)d->ncqe * sizeof(struct mlx5_cqe64);
	if ((!rc_slot && d->gen != l->gen) || d->qpn != l->qpn || !d->sq_wqebb_cnt ||
	    (d->sq_wqebb_cnt & (d->sq_wqebb_cnt - 1)) || !d->ncqe || (d->ncqe & (d->ncqe - 1)) ||
	    d->sq_off > ctx->zone_len || sq_len > ctx->zone_len - d->sq_off ||
	    d->dbrec_off > ctx->zone_len - 8 || d->cqe_off > ctx->zone_len ||
	    cq_len > ctx->zone_len - d->cqe_off || d->cq_dbrec_off > ctx->zone_len - 8)
		return -EPROTO;
	if (rc_slot && d->qpn != l->qpn)
		return -EPROTO; /* (an RC slot's gen is the segment's: kr_job_rc_link) */
	memset(jd, 0, sizeof(*jd));
	if (ctx->krmin_fd >= 0) { /* its rings and its own UAR page, from its slot */
		rc = kr_job_krmin_map(ctx, token, l->index, rc_slot, d, jd);
		if (rc)
			return rc;
		uar = jd->uar;
	} else { /* the tenant's page, one for all its DCIs */
		if (!ctx->uar) {
			rc = kr_devx_uar_import(ctx->dev, d->uar_page, &ctx->uar);
			if (rc)
				return rc;
		} else if (ctx->uar->page_id != d->uar_page) {
			return -EPROTO;
		}
		uar = ctx->uar;
	}
	jd->cq.ctx = ctx->dev;
	jd->cq.cqn = d->cqn;
	jd->cq.cqes = (struct mlx5_cqe64 *)(z + d->cqe_off);
	jd->cq.ncqe = d->ncqe;
	jd->cq.log_ncqe = (uint32_t)__builtin_ctz(d->ncqe);
	jd->cq.cons_index = d->cq_ci;
	jd->cq.dbrec = (volatile uint32_t *)(z + d->cq_dbrec_off);
	jd->cq.uar = uar;

	jd->qp.ctx = ctx->dev;
	jd->qp.type = rc_slot ? KR_DEVX_QP_RC : KR_DEVX_QP_DCI;
	jd->qp.qpn = d->qpn;
	jd->qp.user_index = d->user_index;
	jd->qp.send_cq = &jd->cq;
	jd->qp.uar = uar;
	jd->qp.dbrec = (volatile uint32_t *)(z + d->dbrec_off);
	/* the send counter goes on where the last holder's stands: 0 after a
	 * reset, further on after a DCI given back idle (keeper_dci_idle.c) */
	jd->qp.sq_pi = be32toh(jd->qp.dbrec[MLX5_SND_DBR]) & 0xffff;
	jd->qp.sq_ci = jd->qp.sq_pi;
	jd->qp.sq_db_pi = jd->qp.sq_pi;
	jd->qp.sq_buf = z + d->sq_off;
	jd->qp.sq_wqebb_cnt = d->sq_wqebb_cnt;
	jd->qp.sq_wrid = calloc(d->sq_wqebb_cnt, sizeof(*jd->qp.sq_wrid));
	jd->qp.sq_wqe_next = calloc(d->sq_wqebb_cnt, sizeof(*jd->qp.sq_wqe_next));
	if (!jd->qp.sq_wrid || !jd->qp.sq_wqe_next) {
		rc = -ENOMEM;
		goto err_free;
	}
	rc = kr_devx_rsc_set(ctx->dev, d->user_index, KR_DEVX_RSC_QP, &jd->qp);
	if (rc)
		goto err_free;
	jd->lease = *l;
	jd->used = true;
	return 0;

err_free:
	free(jd->qp.sq_wrid);
	free(jd->qp.sq_wqe_next);
	kr_job_krmin_unmap(ctx, jd);
	return rc;
}

static struct kr_job_dci *job_dci_find(struct kr_ctx *ctx, const struct kr_lease *l)
{
	for (uint32_t i = 0; i < KR_JOB_MAX_DCIS; i++) {
		struct kr_job_dci *jd = &ctx->dci[i];

		if (jd->used && jd->lease.kind == l->kind && jd->lease.index == l->index &&
		    jd->lease.gen == l->gen)
			return jd;
	}
	return NULL;
}

/* kr_job_dci_drop() - forget a leased DCI's view (job.h). */
void kr_job_dci_drop(struct kr_ctx *ctx, struct kr_job_dci *jd)
{
	kr_devx_rsc_free(ctx->dev, jd->qp.user_index);
	free(jd->qp.sq_wrid);
	free(jd->qp.sq_wqe_next);
	kr_job_krmin_unmap(ctx, jd);
	jd->used = false;
}

/* ctx->lock held: a free view slot, or NULL (the job has KR_JOB_MAX_DCIS views). */
static struct kr_job_dci *job_view_slot(struct kr_ctx *ctx)
{
	for (uint32_t i = 0; i < KR_JOB_MAX_DCIS; i++)
		if (!ctx->dci[i].used)
			return &ctx->dci[i];
	return NULL;
}

/* ctx->lock held: ask the keeper for a lease of kind with req; *lease from its reply. */
static int job_lease_call(struct kr_ctx *ctx, uint32_t kind, void *req, size_t len,
			  struct kr_lease *lease, struct kr_msg_reply *rep)
{
	int rc = kr_job_call(ctx, req, len, rep);

	if (!rc)
		*lease = (struct kr_lease){
		    .kind = kind, .index = rep->index, .gen = rep->gen, .qpn = rep->qpn};
	return rc;
}

/* ctx->lock held: give back a lease we cannot post on (its view failed). */
static void job_give_back(struct kr_ctx *ctx, uint32_t kind, const struct kr_msg_reply *got)
{
	struct kr_msg_lease rel = {.kind = kind, .index = got->index, .gen = got->gen};
	struct kr_msg_reply rep;

	kr_msg_init(&rel.hdr, KR_MSG_RELEASE, sizeof(rel), 0);
	kr_job_call(ctx, &rel, sizeof(rel), &rep);
}

/*
 * ctx->lock held: the next offer of the job slot's ready ring (keeper_ready.c)
 * that this job claims, else false. An offer the keeper took back (the
 * claim word says so) or whose slot no longer names this job at that
 * generation is skipped.
 */
static bool job_ready_take(struct kr_ctx *ctx, struct kr_lease *lease, uint64_t *token)
{
	const struct kr_pool_job *job = kr_seg_job(ctx->seg, ctx->job);
	uint32_t *claim = (uint32_t *)((uint8_t *)ctx->heap + KR_HEAP_READY_CLAIM_OFF);

	for (;;) {
		uint32_t prod = __atomic_load_n(&job->ready_prod, __ATOMIC_ACQUIRE);
		uint32_t i = ctx->ready_taken, offer = KR_READY_OFFER(i);
		const struct kr_pool_slot *s;
		struct kr_pool_ready e;

		if (prod == i || prod - i > KR_JOB_READY_RING)
			return false;
		e = job->ready[i % KR_JOB_READY_RING];
		ctx->ready_taken++;
		if (!__atomic_compare_exchange_n(&claim[i % KR_JOB_READY_RING], &offer,
						 KR_READY_CLAIMED(i), false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue; /* taken back */
		if (e.index >= ctx->seg->dcis)
			continue;
		s = kr_seg_dci(ctx->seg, ctx->tenant, e.index);
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != KR_SLOT_LEASED ||
		    s->owner_job != ctx->job + 1 || s->gen != e.gen)
			continue;
		*lease = (struct kr_lease){
		    .kind = KR_LEASE_DCI, .index = e.index, .gen = e.gen, .qpn = e.qpn};
		*token = e.token;
		ctx->ready_ring_takes++;
		return true;
	}
}

/* kr_job_ready_offered() - see job.h. */
bool kr_job_ready_offered(const struct kr_ctx *ctx)
{
	return __atomic_load_n(&kr_seg_job(ctx->seg, ctx->job)->ready_prod, __ATOMIC_ACQUIRE) !=
	       ctx->ready_taken;
}

int kr_lease_alloc(struct kr_ctx *ctx, uint32_t kind, struct kr_lease *lease)
{
	struct kr_msg_lease req = {.kind = kind};
	struct kr_msg_reply rep;
	struct kr_job_dci *slot = NULL;
	int rc;

	if (!ctx || !lease || (kind != KR_LEASE_DCI && kind != KR_LEASE_RC && kind != KR_LEASE_VQP))
		return -EINVAL;
	pthread_mutex_lock(&ctx->lock);
	if (kind == KR_LEASE_DCI) {
		slot = job_view_slot(ctx);
		if (!slot) {
			rc = -EMFILE;
			goto out;
		}
	}
	if (kind == KR_LEASE_DCI && !ctx->dead && job_ready_take(ctx, lease, &rep.token)) {
		/* the keeper leased it ahead: no call, no syscall (it sees the claim) */
		rep.index = lease->index;
		rep.gen = lease->gen;
	} else {
		kr_msg_init(&req.hdr, KR_MSG_LEASE, sizeof(req), 0);
		rc = job_lease_call(ctx, kind, &req, sizeof(req), lease, &rep);
		if (rc)
			goto out;
	}
	if (kind == KR_LEASE_DCI) {
		rc = job_dci_view(ctx, lease, rep.token, slot);
		if (rc)
			job_give_back(ctx, kind, &rep);
	}
out:
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

int kr_lease_free(struct kr_ctx *ctx, const struct kr_lease *lease)
{
	return kr_job_lease_give_back(ctx, lease, 0);
}

/* kr_job_lease_give_back() - see job.h. */
int kr_job_lease_give_back(struct kr_ctx *ctx, const struct kr_lease *lease, uint32_t flags)
{
	struct kr_msg_lease req;
	struct kr_msg_reply rep;
	struct kr_job_dci *jd = NULL;
	int rc;

	if (!ctx || !lease || (flags & ~KR_RELEASE_F_IDLE) ||
	    (lease->kind != KR_LEASE_DCI && lease->kind != KR_LEASE_RC &&
	     lease->kind != KR_LEASE_VQP))
		return -EINVAL;
	pthread_mutex_lock(&ctx->lock);
	jd = lease->kind == KR_LEASE_VQP ? NULL : job_dci_find(ctx, lease);
	if (!jd && lease->kind == KR_LEASE_DCI) {
		rc = -EINVAL;
		goto out;
	}
	if (jd) /* the view goes first: the keeper resets the QP under it */
		kr_job_dci_drop(ctx, jd);
	req = (struct kr_msg_lease){
	    .kind = lease->kind, .index = lease->index, .gen = lease->gen, .flags = flags};
	kr_msg_init(&req.hdr, KR_MSG_RELEASE, sizeof(req), 0);
	rc = kr_job_call(ctx, &req, sizeof(req), &rep);
out:
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

int kr_job_dci_qp(struct kr_ctx *ctx, const struct kr_lease *lease, struct kr_devx_qp **qp,
		   struct kr_devx_cq **cq)
{
	struct kr_job_dci *jd;
	int rc = 0;

	if (!ctx || !lease || !qp || !cq ||
	    (lease->kind != KR_LEASE_DCI && lease->kind != KR_LEASE_RC))
		return -EINVAL;
	pthread_mutex_lock(&ctx->lock);
	jd = job_dci_find(ctx, lease);
	if (!jd)
		rc = -EINVAL;
	else if (ctx->dead)
		rc = -ENOTCONN;
	else {
		*qp = &jd->qp;
		*cq = &jd->cq;
	}
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/* kr_job_rc_view_locked() - see job.h. */
int kr_job_rc_view_locked(struct kr_ctx *ctx, const struct kr_lease *lease, uint64_t token)
{
	struct kr_msg_reply got = {.index = lease->index, .gen = lease->gen};
	struct kr_job_dci *slot = job_view_slot(ctx);
	int rc = slot ? job_dci_view(ctx, lease, token, slot) : -EMFILE;

	if (rc)
		job_give_back(ctx, KR_LEASE_RC, &got);
	return rc;
}

/* kr_job_rc_link() - see job.h. */
int kr_job_rc_link(const struct kr_ctx *ctx, const struct kr_lease *lease)
{
	const struct kr_pool_slot *s;

	if (!ctx || !lease || lease->kind != KR_LEASE_RC || lease->index >= ctx->seg->rc_spares)
		return -EINVAL;
	if (__atomic_load_n(&ctx->dead, __ATOMIC_RELAXED))
		return -ENOTCONN;
	s = kr_seg_rc(ctx->seg, ctx->tenant, lease->index);
	if (__atomic_load_n(&s->gen, __ATOMIC_ACQUIRE) != lease->gen)
		return -ESTALE; /* taken back: the job died for the keeper, or a renewal */
	return (int)__atomic_load_n(&s->link, __ATOMIC_ACQUIRE);
}

int kr_job_tenant_av(struct kr_ctx *ctx, struct kr_devx_dc_av *av)
{
	if (!ctx || !av || !ctx->zone)
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	av->dctn = ctx->zone->dctn;
	av->dc_key = ctx->launch.dc_key;
	kr_devx_dc_av_path(av, &ctx->zone->port, &ctx->zone->port.addr, av->dctn, av->dctn);
	return ctx->dead ? -ENOTCONN : 0;
}

/* ---- heap ---- */

/*
 * Is the keeper gone, seen from the data path? No syscall while the heartbeat
 * is fresh (clock_gettime is a vDSO call): only a heartbeat older than
 * KR_POOL_STALE_NS leads to one non-blocking socket check, at most once per
 * period, and only if the context lock is free (never waits on a control
 * call). A dead keeper is thus noticed within ~KR_POOL_STALE_NS.
 */
bool kr_job_keeper_gone_fast(struct kr_ctx *ctx)
{
	uint64_t now, hb, last;
	bool gone;

	if (__atomic_load_n(&ctx->dead, __ATOMIC_RELAXED))
		return true;
	if (!ctx->seg)
		return false;
	/*
	 * The keeper let this attachment go while the keeper itself lives (its
	 * guard detached the job, keeper_guard.c): the leases were taken back and
	 * reset, so what was in flight completes never. One look at our job
	 * slot says so.
	 */
	if (!ctx->observer) {
		const struct kr_pool_job *j = kr_seg_job(ctx->seg, ctx->job);

		if (__atomic_load_n(&j->state, __ATOMIC_ACQUIRE) != KR_JOB_ATTACHED ||
		    __atomic_load_n(&j->gen, __ATOMIC_RELAXED) != ctx->job_gen) {
			__atomic_store_n(&ctx->dead, true, __ATOMIC_RELAXED);
			return true;
		}
	}
	now = kr_now_ns();
	hb = __atomic_load_n(&ctx->seg->heartbeat_ns, __ATOMIC_RELAXED);
	if (hb > now || now - hb < KR_POOL_STALE_NS)
		return false;
	last = __atomic_load_n(&ctx->stale_check_ns, __ATOMIC_RELAXED);
	if (now - last < KR_POOL_STALE_NS ||
	    !__atomic_compare_exchange_n(&ctx->stale_check_ns, &last, now, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED))
		return false;
	if (pthread_mutex_trylock(&ctx->lock))
		return false;
	gone = kr_job_keeper_gone(ctx);
	pthread_mutex_unlock(&ctx->lock);
	return gone;
}
