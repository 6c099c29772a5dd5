/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Growth: when a tenant's free DCIs (or spare RC QPs) fall below the
 * low-water mark, the keeper's worker (keeper_worker.c) builds more into the
 * tenant's EMPTY slots, up to --dcis-max (--rc-max). Everything a grown QP
 * needs (slot, ring entry, zone descriptor and buffers, keeper-zone buffers)
 * was laid out for the maximum at start, so growth never asks for memory.
 * tr->growing (slot + 1 being built) is published for krctl and tests.
 */
#include <errno.h>
#include <string.h>

#include "common/kr_log.h"
#include "keeper/keeper.h"

static uint32_t grow_low_water(const struct kr_keeper *k, uint32_t kind)
{
	if (kind == KR_SLOT_DCI)
		return k->cfg.low_water;
	/* RC spares: keep as many free as were built at start, at most low-water */
	return k->cfg.rc_spares < k->cfg.low_water ? k->cfg.rc_spares : k->cfg.low_water;
}

/* kr_keeper_grow_one() - see keeper.h. */
int kr_keeper_grow_one(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t kind)
{
	struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t->idx);
	bool dci = kind == KR_SLOT_DCI;
	uint32_t slots = dci ? k->seg->dcis : k->seg->rc_spares;
	struct kr_keeper_qp *qs = dci ? t->dci : t->rc;
	uint32_t avail, empty = UINT32_MAX;
	int rc;

	if (!grow_low_water(k, kind))
		return 0;
	/* ready ones first, then the ring: the loop puts a slot in the ring
	 * before it clears ready, so none is missed (kr_keeper_worker_adopt) */
	avail = 0;
	for (uint32_t i = 0; i < slots; i++) {
		struct kr_pool_slot *s =
		    dci ? kr_seg_dci(k->seg, t->idx, i) : kr_seg_rc(k->seg, t->idx, i);

		avail += __atomic_load_n(&qs[i].ready, __ATOMIC_ACQUIRE); /* not adopted yet */
		if (empty == UINT32_MAX && s->state == KR_SLOT_EMPTY && !qs[i].built)
			empty = i;
	}
	avail += kr_keeper_seg_ring_count(k->seg, dci ? tr->dci_ring_off : tr->rc_ring_off);
	if (avail >= grow_low_water(k, kind) || empty == UINT32_MAX)
		return 0;

	__atomic_store_n(&tr->growing, empty + 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&k->cmd_lock);
	rc = dci ? kr_keeper_dci_build(k, t, empty) : kr_keeper_rc_build(k, t, empty);
	if (rc) {
		struct kr_pool_slot *s =
		    dci ? kr_seg_dci(k->seg, t->idx, empty) : kr_seg_rc(k->seg, t->idx, empty);

		kr_keeper_qp_destroy(k, &qs[empty]);
		s->state = KR_SLOT_EMPTY; /* still ours: the loop never sees it BROKEN */
	}
	pthread_mutex_unlock(&k->cmd_lock);
	__atomic_store_n(&tr->growing, 0, __ATOMIC_RELEASE);
	if (rc) {
		KR_ERR_RATELIMITED("pool", "tenant %u: growing %s %u failed: %s", t->idx,
				   dci ? "DCI" : "RC", empty, strerror(-rc));
		return rc;
	}
	/* QP, CQ and slot written before the loop adopts it */
	__atomic_store_n(&qs[empty].ready, true, __ATOMIC_RELEASE);
	KR_DBG("pool", "tenant %u: grew %s %u (%u free before)", t->idx, dci ? "DCI" : "RC", empty,
	       avail);
	return 1;
}

/*
 * kr_keeper_grow_reserve() - see keeper.h. The device's user_index table is
 * reserved for every QP the pool may hold (two per slot with margin), so
 * building one never reallocates it under the loop's CQ polling: register
 * at the top index, then release it.
 */
int kr_keeper_grow_reserve(struct kr_keeper *k)
{
	uint32_t top = 64u + 2u * k->cfg.tenants * (k->seg->dcis + k->seg->rc_spares + 8u);
	int rc;

	if (k->seg->dcis == k->cfg.dcis && k->seg->rc_spares == k->cfg.rc_spares)
		return 0; /* no room to grow */
	rc = kr_devx_rsc_set(k->ctx, top, KR_DEVX_RSC_QP, k);
	if (rc && rc != -EEXIST) {
		KR_ERR("pool", "reserving %u user indexes: %s", top, strerror(-rc));
		return rc;
	}
	if (!rc)
		kr_devx_rsc_free(k->ctx, top);
	return 0;
}
