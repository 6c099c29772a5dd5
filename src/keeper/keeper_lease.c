/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Leases, keeper side: grant from a tenant's free ring, release, reclaim
 * from a job that detached or died, and the background work that puts
 * things back (reset DIRTY QPs, rebuild BROKEN ones, scrub heaps).
 *
 * A lease is recorded in its slot of the pool segment: owner job, owner pid
 * (SO_PEERCRED) and a generation bumped at every grant. A release must name
 * the generation it was granted with, so a stale or forged release of a slot
 * someone else holds now is refused.
 *
 * Nothing here runs a firmware command on the grant path: DCIs in the free
 * ring are already in RTS. What comes back goes DIRTY and the worker resets
 * it (keeper_worker.c); heaps are scrubbed between socket events.
 */
#include <errno.h>
#include <string.h>

#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

struct lease_kind {
	uint32_t count;
	uint64_t ring_off;
};

static bool lease_kind_of(struct kr_keeper *k, uint32_t tenant, uint32_t kind,
			  struct lease_kind *lk)
{
	struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, tenant);

	switch (kind) {
	case KR_SLOT_DCI:
		*lk = (struct lease_kind){k->seg->dcis, tr->dci_ring_off}; /* slots */
		return true;
	case KR_SLOT_RC:
		*lk = (struct lease_kind){k->seg->rc_spares, tr->rc_ring_off}; /* slots */
		return lk->count > 0;
	case KR_SLOT_VQP:
		*lk = (struct lease_kind){k->cfg.vqps, tr->vqp_ring_off};
		return lk->count > 0;
	default:
		return false;
	}
}

static struct kr_pool_slot *lease_slot(struct kr_keeper *k, uint32_t tenant, uint32_t kind,
				       uint32_t index)
{
	switch (kind) {
	case KR_SLOT_DCI:
		return kr_seg_dci(k->seg, tenant, index);
	case KR_SLOT_RC:
		return kr_seg_rc(k->seg, tenant, index);
	default:
		return kr_seg_vqp(k->seg, tenant, index);
	}
}

/*
 * kr_keeper_lease_grant() - lease one object of kind to the job on c.
 * Returns 0 (rep filled), -EINVAL (unknown kind), -ENOSPC (none free),
 * -EMFILE (the job holds KR_JOB_MAX_DCIS DCIs already), -EPERM (not attached).
 */
int kr_keeper_lease_grant(struct kr_keeper *k, struct kr_keeper_conn *c, uint32_t kind,
			  struct kr_msg_reply *rep)
{
	struct kr_pool_job *job;
	struct kr_pool_slot *s;
	struct lease_kind lk;
	uint32_t idx;

	if (!c->job_plus1)
		return -EPERM;
	job = kr_seg_job(k->seg, c->job_plus1 - 1);
	if (!lease_kind_of(k, job->tenant, kind, &lk))
		return -EINVAL;
	if (kind == KR_SLOT_DCI && job->dci_leases >= KR_JOB_MAX_DCIS)
		return -EMFILE;
	/* none free: offers no job claimed come back (keeper_ready.c), at once
	 * when no job could have touched them, else after their reset */
	if (kr_keeper_ring_get(k, lk.ring_off, &idx) &&
	    (kind != KR_SLOT_DCI || !kr_keeper_ready_revoke(k, job->tenant) ||
	     kr_keeper_ring_get(k, lk.ring_off, &idx)))
		return -ENOSPC;
	if (idx >= lk.count) {
		KR_ERR("pool", "tenant %u: free ring returned slot %u of %u", job->tenant, idx,
		       lk.count);
		return -EIO;
	}
	/* fenced: the token the job maps this DCI (or RC slot) with (keeper_krmin.c) */
	if (kind != KR_SLOT_VQP) {
		struct kr_keeper_tenant *t = &k->tenant[job->tenant];
		int rc = kr_keeper_krmin_grant(k, kind == KR_SLOT_DCI ? &t->dci[idx] : &t->rc[idx],
					       c->pid, &rep->token);

		if (rc) { /* it stays free: another try may get it or another */
			kr_keeper_ring_put(k, lk.ring_off, idx);
			return -ENOSPC;
		}
	}
	if (kind != KR_SLOT_VQP && kr_keeper_seg_ring_count(k->seg, lk.ring_off) < k->cfg.low_water)
		kr_keeper_worker_wake(k); /* below low-water: it may grow the pool */
	s = lease_slot(k, job->tenant, kind, idx);
	s->gen++;
	s->owner_job = c->job_plus1;
	s->owner_pid = c->pid;
	s->state = KR_SLOT_LEASED;
	if (kind == KR_SLOT_DCI) {
		kr_keeper_zone_dci(&k->tenant[job->tenant], idx)->gen = s->gen;
		job->dci_leases++;
	} else if (kind == KR_SLOT_VQP) {
		job->vqp_leases++;
	} /* RC leases are counted by their slots only (owner_job) */
	rep->index = idx;
	rep->gen = s->gen;
	rep->qpn = s->qpn;
	return 0;
}

/*
 * The slot is taken from its holder: DCIs and RC QPs to DIRTY (the worker
 * resets them), vQPs free now; untouched (an offer no job claimed, no
 * module in the way) or idle and its rings agree: a DCI free now too.
 */
static void lease_take_back(struct kr_keeper *k, struct kr_pool_slot *s, uint64_t ring_off,
			    uint32_t how)
{
	bool untouched = how & KR_LEASE_BACK_UNTOUCHED;

	if (s->kind == KR_SLOT_DCI || s->kind == KR_SLOT_RC) {
		struct kr_keeper_tenant *t = &k->tenant[s->tenant];
		struct kr_keeper_qp *q =
		    s->kind == KR_SLOT_DCI ? &t->dci[s->index] : &t->rc[s->index];

		/* its mapping goes before the reset */
		kr_keeper_krmin_revoke(k, q);
		if ((how & KR_LEASE_BACK_IDLE) && kr_keeper_dci_idle(k, q)) /* DCIs only */
			untouched = true;
		/* whose errors, if it comes back broken */
		if (s->owner_job) {
			q->from_job_plus1 = s->owner_job;
			q->from_job_gen = kr_seg_job(k->seg, s->owner_job - 1)->gen;
		}
	}
	s->owner_job = 0;
	s->owner_pid = 0;
	if (s->kind == KR_SLOT_VQP || (untouched && s->kind == KR_SLOT_DCI)) {
		s->state = KR_SLOT_FREE;
		kr_keeper_ring_put(k, ring_off, s->index);
	} else {
		s->state = KR_SLOT_DIRTY;
		kr_keeper_worker_wake(k);
	}
}

/*
 * kr_keeper_lease_release() - the job on c gives back slot index of kind;
 * flags KR_RELEASE_F_IDLE: a DCI it says is idle (no reset if its rings
 * agree, trusted keeper: keeper_dci_idle.c). Returns 0, -EINVAL (unknown
 * kind or index, not this job's, stale gen), -EPERM (not attached).
 */
int kr_keeper_lease_release(struct kr_keeper *k, struct kr_keeper_conn *c, uint32_t kind,
			    uint32_t index, uint32_t gen, uint32_t flags)
{
	if (!c->job_plus1)
		return -EPERM;
	return kr_keeper_lease_take(k, c->job_plus1 - 1, kind, index, gen,
				    (flags & KR_RELEASE_F_IDLE) ? KR_LEASE_BACK_IDLE : 0);
}

/* kr_keeper_lease_take() - see keeper.h. */
int kr_keeper_lease_take(struct kr_keeper *k, uint32_t j, uint32_t kind, uint32_t index,
			 uint32_t gen, uint32_t how)
{
	struct kr_pool_job *job = kr_seg_job(k->seg, j);
	struct kr_pool_slot *s;
	struct lease_kind lk;

	if (!lease_kind_of(k, job->tenant, kind, &lk) || index >= lk.count)
		return -EINVAL;
	s = lease_slot(k, job->tenant, kind, index);
	if (s->state != KR_SLOT_LEASED || s->owner_job != j + 1 || s->gen != gen)
		return -EINVAL;
	if (kind == KR_SLOT_DCI)
		job->dci_leases--;
	else if (kind == KR_SLOT_VQP)
		job->vqp_leases--;
	lease_take_back(k, s, lk.ring_off, how);
	return 0;
}

/*
 * kr_keeper_lease_lost() - kmod-min took DCI index of tenant from its
 * holder (it exited or gave the slot up): the lease comes back as in a
 * reclaim. Returns true if it was leased (false: already taken back).
 */
bool kr_keeper_lease_lost(struct kr_keeper *k, uint32_t kind, uint32_t tenant, uint32_t index)
{
	struct kr_pool_slot *s;
	struct lease_kind lk;

	if (tenant >= k->cfg.tenants || !lease_kind_of(k, tenant, kind, &lk) || index >= lk.count)
		return false;
	s = lease_slot(k, tenant, kind, index);
	if (s->state != KR_SLOT_LEASED || !s->owner_job)
		return false;
	if (kind == KR_SLOT_DCI)
		kr_seg_job(k->seg, s->owner_job - 1)->dci_leases--;
	lease_take_back(k, s, lk.ring_off, 0);
	k->seg->reclaims++;
	if (!k->reclaim_t0)
		k->reclaim_t0 = kr_now_ns();
	return true;
}

/*
 * kr_keeper_lease_reclaim() - take back every lease job j holds. Returns how
 * many. DCIs and RC QPs go DIRTY: the worker resets them.
 */
uint32_t kr_keeper_lease_reclaim(struct kr_keeper *k, uint32_t j)
{
	struct kr_pool_job *job = kr_seg_job(k->seg, j);
	struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, job->tenant);
	uint32_t n = 0;

	for (uint32_t i = 0; i < k->seg->dcis; i++) {
		struct kr_pool_slot *s = kr_seg_dci(k->seg, job->tenant, i);

		if (s->state == KR_SLOT_LEASED && s->owner_job == j + 1) {
			lease_take_back(k, s, tr->dci_ring_off, 0);
			n++;
		}
	}
	for (uint32_t i = 0; i < k->seg->rc_spares; i++) {
		struct kr_pool_slot *s = kr_seg_rc(k->seg, job->tenant, i);

		if (s->state == KR_SLOT_LEASED && s->owner_job == j + 1) {
			lease_take_back(k, s, tr->rc_ring_off, 0);
			n++;
		}
	}
	for (uint32_t i = 0; i < k->cfg.vqps; i++) {
		struct kr_pool_slot *s = kr_seg_vqp(k->seg, job->tenant, i);

		if (s->state == KR_SLOT_LEASED && s->owner_job == j + 1) {
			lease_take_back(k, s, tr->vqp_ring_off, 0);
			n++;
		}
	}
	job->dci_leases = 0;
	job->vqp_leases = 0;
	k->seg->reclaims += n;
	return n;
}

/*
 * kr_keeper_scrub_jobs() - put up to budget job slots whose job left (DIRTY)
 * back in the free ring; their heaps go to the worker to be emptied
 * (keeper_heap.c). No firmware command here. Returns slots left (> 0) or 0.
 */
int kr_keeper_scrub_jobs(struct kr_keeper *k, uint32_t budget)
{
	int left = 0;

	for (uint32_t j = 0; j < k->cfg.tenants * k->cfg.jobs; j++) {
		struct kr_pool_job *job = kr_seg_job(k->seg, j);
		struct kr_keeper_tenant *t = &k->tenant[j / k->cfg.jobs];
		struct kr_keeper_heap *h;

		if (job->state != KR_JOB_DIRTY)
			continue;
		if (!budget) {
			left++;
			continue;
		}
		budget--;
		h = kr_keeper_job_heap(k, j);
		if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == KR_HEAP_HELD &&
		    h->job_plus1 == j % k->cfg.jobs + 1)
			kr_keeper_heap_left(k, h);
		job->pid = 0;
		job->uid = 0;
		job->mrs = 0;
		job->attach_ns = 0;
		job->heap_len = 0;
		job->state = KR_JOB_FREE;
		kr_keeper_ring_put(k, kr_seg_tenant(k->seg, t->idx)->job_ring_off, j);
	}
	return left;
}
