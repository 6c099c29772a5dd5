/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A launch is a tenant. A job gives its launch key at attach and the keeper
 * derives the launch's tag and DC key from it (abi_launch.c, keeper_server.c),
 * so an attach names only a launch whose key it holds: no one can hold a
 * launch's name between its ranks. The launch's first rank on this node
 * binds a free tenant slot to (uid, tag, key) and the slot gets a DCT that
 * answers to that key: remote ranks of the launch derive the same key, any
 * other requester is dropped by the DCT (a key violation, as mlx5 does).
 * The launch's other ranks join the slot; a job of another uid is refused.
 * When the launch's last rank
 * has left and everything it held is back, and no rank came back for KR_LAUNCH_LINGER_MS, the DCT
 * and its key die and the slot is renewed for the next launch.
 *
 * Slots pinned to a uid by configuration (tenant.<n>.uid) serve only that
 * uid's launches, and that uid uses only them. The keeper's own tables
 * decide (struct kr_keeper_tenant); the pool segment only shows them.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

#define KR_LAUNCH_LINGER_MS 200u /* a launch with no rank left keeps its slot this long */
#define KR_LAUNCH_DCT_ACCESS                                                                       \
	(KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC)

static bool uid_has_pinned(const struct kr_keeper *k, uid_t uid)
{
	for (uint32_t t = 0; t < k->cfg.tenants; t++)
		if (k->cfg.tenant_uid[t] == (uint32_t)uid + 1)
			return true;
	return false;
}

/* A slot uid may bind: free, and pinned to uid if uid has pinned slots, else unpinned. */
static bool slot_free_for(const struct kr_keeper *k, uint32_t t, uid_t uid, bool pinned_only)
{
	uint32_t pin = k->cfg.tenant_uid[t];

	if (k->tenant[t].bound || __atomic_load_n(&k->tenant[t].renew, __ATOMIC_ACQUIRE))
		return false;
	return pinned_only ? pin == (uint32_t)uid + 1 : !pin;
}

/* The node cache and the MetaServer follow the slot's launch. */
static void launch_announce(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	kr_keeper_dct_bind(k, t);
	kr_keeper_meta_changed(k);
}

static void launch_publish(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	struct kr_zone_hdr *z = (struct kr_zone_hdr *)t->zone;
	struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t->idx);

	z->dctn = t->bound ? t->dct.dctn : 0;
	z->dc_key = t->bound ? t->dc_key : 0;
	tr->dctn = z->dctn;
	tr->launch_tag = t->bound ? t->launch_tag : 0;
	tr->uid_plus1 = t->bound ? (uint32_t)t->uid + 1 : k->cfg.tenant_uid[t->idx];
}

/* kr_keeper_tenant_of_launch() - see keeper.h. */
int kr_keeper_tenant_of_launch(struct kr_keeper *k, uid_t uid, const struct kr_launch *l)
{
	bool pinned_only = uid_has_pinned(k, uid);
	struct kr_keeper_tenant *t = NULL;
	uint64_t tag = l->tag, dc_key = l->dc_key;
	int rc;

	if (!tag)
		return -EINVAL;
	for (uint32_t i = 0; i < k->cfg.tenants; i++) {
		struct kr_keeper_tenant *b = &k->tenant[i];

		if (!b->bound || b->launch_tag != tag)
			continue;
		if (b->uid != uid || b->dc_key != dc_key) {
			KR_WARN_RATELIMITED("pool",
					    "launch %016" PRIx64 " is bound here under uid %u: "
					    "refused to uid %u%s",
					    tag, (unsigned int)b->uid, (unsigned int)uid,
					    b->uid == uid ? " (another key)" : "");
			return -EPERM;
		}
		return (int)i;
	}
	if (!pinned_only) { /* a uid's own pinned slots are outside the quota */
		rc = kr_keeper_quota_launch(k, uid);
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < k->cfg.tenants && !t; i++)
		if (slot_free_for(k, i, uid, pinned_only))
			t = &k->tenant[i];
	if (!t)
		return -ENOSPC;
	rc = kr_keeper_tenant_dct_open(k, t, dc_key, KR_LAUNCH_DCT_ACCESS);
	if (rc) {
		KR_ERR("pool", "tenant %u: no DC target for launch %016" PRIx64 ": %s", t->idx, tag,
		       strerror(-rc));
		return rc;
	}
	__atomic_store_n(&t->bound, true, __ATOMIC_RELEASE);
	kr_keeper_worker_wake(k); /* its ranks' heaps: warm more (keeper_heap.c) */
	t->uid = uid;
	t->launch_tag = tag;
	t->dc_key = dc_key;
	launch_publish(k, t);
	launch_announce(k, t);
	kr_seg_tenant(k->seg, t->idx)->launches++;
	KR_INFO("pool", "tenant %u: launch %016" PRIx64 " of uid %u, dct 0x%x", t->idx, tag,
		(unsigned int)uid, t->dct.dctn);
	return (int)t->idx;
}

/* Nothing of the launch is left in the slot: no job, no heap or DCI coming back. */
static bool launch_gone(struct kr_keeper *k, uint32_t t)
{
	if (kr_seg_tenant(k->seg, t)->jobs_attached)
		return false;
	for (uint32_t j = 0; j < k->cfg.jobs; j++)
		if (kr_seg_job(k->seg, t * k->cfg.jobs + j)->state != KR_JOB_FREE)
			return false;
	for (uint32_t i = 0; i < k->seg->dcis; i++)
		if (kr_seg_dci(k->seg, t, i)->state == KR_SLOT_DIRTY)
			return false;
	return true;
}

/* Take slot t's QPs and jobs out of the rings: the worker rebuilds them. */
static void launch_rings_drain(struct kr_keeper *k, uint32_t t)
{
	struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t);
	uint32_t idx;

	while (!kr_keeper_ring_get(k, tr->dci_ring_off, &idx))
		;
	while (!kr_keeper_ring_get(k, tr->rc_ring_off, &idx))
		;
	while (!kr_keeper_ring_get(k, tr->job_ring_off, &idx))
		;
}

/* kr_keeper_launch_leave_idle() - see keeper.h. */
void kr_keeper_launch_leave_idle(struct kr_keeper *k)
{
	uint64_t now = kr_now_ns();

	for (uint32_t i = 0; i < k->cfg.tenants; i++) {
		struct kr_keeper_tenant *t = &k->tenant[i];

		if (!t->bound)
			continue;
		if (!launch_gone(k, i)) {
			t->idle_since_ns = 0;
			continue;
		}
		/* a rank restarted in place, or the next one of a job script, keeps the slot */
		if (!t->idle_since_ns)
			t->idle_since_ns = now;
		if (now - t->idle_since_ns < KR_LAUNCH_LINGER_MS * 1000000ull)
			continue;
		t->idle_since_ns = 0;
		kr_keeper_tenant_dct_close(k, t);
		KR_INFO("pool", "tenant %u: launch %016" PRIx64 " left; renewing the slot", i,
			t->launch_tag);
		__atomic_store_n(&t->bound, false, __ATOMIC_RELEASE);
		t->launch_tag = 0;
		t->dc_key = 0;
		launch_publish(k, t);
		launch_announce(k, t);
		/* nothing of the launch may serve the next: a new PD, QPs and pages */
		launch_rings_drain(k, i);
		__atomic_store_n(&t->renew, KR_RENEW_WANTED, __ATOMIC_RELEASE);
		kr_keeper_worker_wake(k);
	}
}

/* kr_keeper_launch_renewed() - see keeper.h. */
void kr_keeper_launch_renewed(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t->idx);

	if (kr_keeper_tenant_rings_fill(k, t)) /* drained when the launch left: room for all */
		KR_ERR("pool", "tenant %u: a free ring is full after renewal", t->idx);
	tr->renewals++;
	__atomic_store_n(&t->renew, KR_RENEW_NONE, __ATOMIC_RELEASE);
	KR_INFO("pool", "tenant %u: renewed (pd %u): free for a launch", t->idx, t->pd.pdn);
}
