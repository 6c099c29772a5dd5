/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A job's ready-DCI ring (struct kr_pool_ready in its job slot, claim words
 * in its heap: abi.h): DCIs leased to the job ahead of its threads' first
 * connects, so that a thread that holds no DCI takes one with no call to the
 * keeper (job_lease.c). Event loop only, as every lease.
 *
 * Demand-driven: the attach puts KR_POOL_READY_DCIS on the ring (the first
 * connect's DCI); each time the job has claimed one, the keeper's next tick
 * (every 10 ms: it reads the claim words, the job sends nothing), each DCI
 * lease the job had to ask for (KR_MSG_LEASE), and each DCI it gives back
 * once it has used its ring (KR_MSG_RELEASE: threads that come and go), offer
 * DCIs until KR_JOB_READY_FILL unclaimed ones are ahead again. A job that posts from
 * one thread holds one DCI, as before; one that starts threads finds the
 * next DCI there. Offers are made only while more than a quarter of the
 * tenant's built DCIs are free (the rule the library follows for a thread's
 * second DCI), not for a throttled job, not past KR_JOB_MAX_DCIS; and a
 * lease that finds the tenant without a free DCI takes back the offers no
 * job claimed (kr_keeper_ready_revoke), so rings never starve another job
 * (all but the attach's KR_POOL_READY_DCIS, the job's own as a lease it holds:
 * its first connect never meets a pool another job drained):
 * without kmod-min straight into the free ring (the library touches a DCI
 * only once its claim won, and a trusted keeper's jobs could write any queue
 * anyway), fenced through a reset like any DCI that comes back (the offer's
 * token let its job map it).
 *
 * The claim words are the job's memory: what it writes there only decides
 * which of its own offers count as taken (a garbage word counts as taken and
 * is never revoked: the lease stays the job's until it leaves, as any lease
 * it asked for).
 */
#include <errno.h>
#include <string.h>

#include "common/kr_log.h"
#include "keeper/keeper.h"

/* Job j's claim word for ring position i % KR_JOB_READY_RING (its heap's first bytes). */
static uint32_t *ready_claim(struct kr_keeper *k, uint32_t j, uint32_t i)
{
	struct kr_keeper_heap *h = kr_keeper_job_heap(k, j);

	return (uint32_t *)(h->addr + KR_HEAP_READY_CLAIM_OFF) + i % KR_JOB_READY_RING;
}

/* kr_keeper_ready_reset() - see keeper.h. */
void kr_keeper_ready_reset(struct kr_keeper *k, struct kr_keeper_conn *c)
{
	struct kr_pool_job *job = kr_seg_job(k->seg, c->job_plus1 - 1);

	memset(job->ready, 0, sizeof(job->ready));
	__atomic_store_n(&job->ready_prod, 0, __ATOMIC_RELEASE);
	c->ready_done = 0;
}

/* Entries of c's ring now claimed or revoked, from the first one that was not. */
static void ready_settle(struct kr_keeper *k, struct kr_keeper_conn *c)
{
	uint32_t j = c->job_plus1 - 1;
	const struct kr_pool_job *job = kr_seg_job(k->seg, j);

	while (c->ready_done != job->ready_prod &&
	       __atomic_load_n(ready_claim(k, j, c->ready_done), __ATOMIC_ACQUIRE) !=
		   KR_READY_OFFER(c->ready_done))
		c->ready_done++;
}

/* Take offer i of job j off its ring before the job claims it: true if the keeper won the CAS. */
static bool ready_withdraw(struct kr_keeper *k, uint32_t j, uint32_t i)
{
	uint32_t offer = KR_READY_OFFER(i);

	return __atomic_compare_exchange_n(ready_claim(k, j, i), &offer, KR_READY_REVOKED(i), false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* Lease one DCI onto c's ring: its claim word, the entry, then prod. false: none. */
static bool ready_offer_one(struct kr_keeper *k, struct kr_keeper_conn *c)
{
	uint32_t j = c->job_plus1 - 1;
	struct kr_pool_job *job = kr_seg_job(k->seg, j);
	uint32_t i = job->ready_prod;
	struct kr_msg_reply lr;

	memset(&lr, 0, sizeof(lr));
	if (kr_keeper_lease_grant(k, c, KR_SLOT_DCI, &lr))
		return false; /* none free, or the job holds its most */
	__atomic_store_n(ready_claim(k, j, i), KR_READY_OFFER(i), __ATOMIC_RELEASE);
	job->ready[i % KR_JOB_READY_RING] = (struct kr_pool_ready){
	    .index = lr.index, .gen = lr.gen, .qpn = lr.qpn, .token = lr.token};
	__atomic_store_n(&job->ready_prod, i + 1, __ATOMIC_RELEASE);
	k->seg->ready_grants++;
	return true;
}

/* kr_keeper_ready_fill() - see keeper.h. */
void kr_keeper_ready_fill(struct kr_keeper *k, struct kr_keeper_conn *c)
{
	uint32_t j = c->job_plus1 - 1;
	struct kr_pool_job *job = kr_seg_job(k->seg, j);

	ready_settle(k, c);
	while (job->ready_prod - c->ready_done < KR_JOB_READY_FILL) {
		if (kr_keeper_guard_busy(k, j) || !kr_seg_dci_room(k->seg, job->tenant) ||
		    !ready_offer_one(k, c))
			return;
	}
}

/* kr_keeper_ready_fill_used() - see keeper.h. */
void kr_keeper_ready_fill_used(struct kr_keeper *k, struct kr_keeper_conn *c)
{
	ready_settle(k, c);
	if (c->ready_done)
		kr_keeper_ready_fill(k, c);
}

/* kr_keeper_ready_offer() - see keeper.h. */
void kr_keeper_ready_offer(struct kr_keeper *k, struct kr_keeper_conn *c, uint32_t n)
{
	uint32_t j = c->job_plus1 - 1;
	struct kr_pool_job *job = kr_seg_job(k->seg, j);

	for (uint32_t m = 0; m < n && job->ready_prod - c->ready_done < KR_JOB_READY_RING; m++)
		if (!ready_offer_one(k, c))
			return;
}

/* kr_keeper_ready_tick() - see keeper.h. */
void kr_keeper_ready_tick(struct kr_keeper *k)
{
	for (uint32_t slot = 0; slot < KR_POOL_MAX_CONNS; slot++) {
		struct kr_keeper_conn *c = k->conn[slot];
		uint32_t done;

		if (!c || !c->job_plus1)
			continue;
		done = c->ready_done;
		ready_settle(k, c);
		if (c->ready_done != done) /* it took one since: its next threads' ahead */
			kr_keeper_ready_fill(k, c);
	}
}

/* kr_keeper_ready_hand() - see keeper.h. */
bool kr_keeper_ready_hand(struct kr_keeper *k, struct kr_keeper_conn *c, struct kr_msg_reply *rep)
{
	uint32_t j = c->job_plus1 - 1;
	const struct kr_pool_job *job;
	bool found = false;

	if (!c->job_plus1)
		return false;
	job = kr_seg_job(k->seg, j);
	ready_settle(k, c);
	for (uint32_t i = c->ready_done; !found && i != job->ready_prod; i++) {
		const struct kr_pool_ready *e = &job->ready[i % KR_JOB_READY_RING];
		const struct kr_pool_slot *s;

		if (!ready_withdraw(k, j, i))
			continue; /* claimed meanwhile */
		s = kr_seg_dci(k->seg, job->tenant, e->index);
		if (s->state != KR_SLOT_LEASED || s->owner_job != c->job_plus1 || s->gen != e->gen)
			continue; /* taken back meanwhile (the job's guard, say) */
		/* already the job's lease: the reply is the offer, nothing moves */
		rep->index = e->index;
		rep->gen = e->gen;
		rep->qpn = e->qpn;
		rep->token = e->token;
		found = true;
	}
	ready_settle(k, c);
	return found;
}

/* kr_keeper_ready_revoke() - see keeper.h. */
uint32_t kr_keeper_ready_revoke(struct kr_keeper *k, uint32_t tenant)
{
	uint32_t n = 0;

	for (uint32_t slot = 0; slot < KR_POOL_MAX_CONNS; slot++) {
		struct kr_keeper_conn *c = k->conn[slot];
		struct kr_pool_job *job;
		uint32_t j;

		if (!c || !c->job_plus1)
			continue;
		j = c->job_plus1 - 1;
		job = kr_seg_job(k->seg, j);
		if (job->tenant != tenant)
			continue;
		ready_settle(k, c);
		for (uint32_t i = c->ready_done; i != job->ready_prod; i++) {
			const struct kr_pool_ready *e = &job->ready[i % KR_JOB_READY_RING];

			if (i < KR_POOL_READY_DCIS)
				continue; /* the attach's own: a fresh job's first connect calls nobody */
			if (!ready_withdraw(k, j, i))
				continue; /* the job claimed it first */
			if (!kr_keeper_lease_take(k, j, KR_SLOT_DCI, e->index, e->gen,
						  k->krmin_fd < 0 ? KR_LEASE_BACK_UNTOUCHED : 0))
				n++;
		}
		ready_settle(k, c);
	}
	if (n)
		KR_DBG("pool", "tenant %u: %u ready-ring offers taken back for a lease", tenant,
		       n);
	return n;
}
