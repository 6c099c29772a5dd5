/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Growth: when a tenant's free DCIs (or spare RC QPs) fall below the
 * low-water mark, a keeper thread builds more into the tenant's EMPTY slots,
 * up to --dcis-max (--rc-max). Everything a grown QP needs (slot, ring entry,
 * zone descriptor and buffers, keeper-zone buffers) was laid out for the
 * maximum at start, so growth never asks for memory.
 *
 * Who does what:
 *   grow thread  owns EMPTY slots: builds one (firmware commands, under
 *                k->cmd_lock), marks it FREE in the segment, sets q->grown and
 *                wakes the loop through k->grow_fd; on failure puts the slot
 *                back to EMPTY and backs off. Publishes tr->growing (slot + 1
 *                being built) for krctl and tests.
 *   event loop   adopts: puts grown slots into the free ring (only the loop
 *                touches the rings). Its own firmware work (resets, rebuilds,
 *                scrubs) try-locks cmd_lock and is skipped while a build runs,
 *                so attach and lease replies never wait on a firmware command.
 *
 * The device's user_index table is reserved for every slot before the thread
 * starts, so the loop's CQ polling never sees it reallocated.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "kr_log.h"
#include "pool.h"

#define KR_GROW_IDLE_MS	   5
#define KR_GROW_BACKOFF_MS 200

static uint32_t grow_low_water(const struct kr_keeper *k, uint32_t kind)
{
	if (kind == KR_SLOT_DCI)
		return k->cfg.low_water;
	/* RC spares: keep as many free as were built at start, at most low-water */
	return k->cfg.rc_spares < k->cfg.low_water ? k->cfg.rc_spares : k->cfg.low_water;
}

/*
 * Build one QP of kind for tenant t if it is below its low-water mark and has
 * an EMPTY slot. Returns 1 (built), 0 (nothing to do), -errno (build failed).
 */
static int grow_one(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t kind)
{
	struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t->idx);
	bool dci = kind == KR_SLOT_DCI;
	uint32_t slots = dci ? k->seg->dcis : k->seg->rc_spares;
	struct kr_keeper_qp *qs = dci ? t->dci : t->rc;
	uint32_t avail, empty = UINT32_MAX;
	int rc;

	if (!grow_low_water(k, kind))
		return 0;
	avail = kr_pool_seg_ring_count(k->seg, dci ? tr->dci_ring_off : tr->rc_ring_off);
	for (uint32_t i = 0; i < slots; i++) {
		struct kr_pool_slot *s =
		    dci ? kr_seg_dci(k->seg, t->idx, i) : kr_seg_rc(k->seg, t->idx, i);

		avail += __atomic_load_n(&qs[i].grown, __ATOMIC_ACQUIRE); /* built, not adopted */
		if (empty == UINT32_MAX && s->state == KR_SLOT_EMPTY && !qs[i].built)
			empty = i;
	}
	if (avail >= grow_low_water(k, kind) || empty == UINT32_MAX)
		return 0;

	__atomic_store_n(&tr->growing, empty + 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&k->cmd_lock);
	rc = dci ? kr_keeper_dci_build(k, t, empty) : kr_keeper_rc_build(k, t, empty);
	if (rc) {
		struct kr_pool_slot *s =
		    dci ? kr_seg_dci(k->seg, t->idx, empty) : kr_seg_rc(k->seg, t->idx, empty);

		kr_keeper_qp_destroy(&qs[empty]);
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
	__atomic_store_n(&qs[empty].grown, true, __ATOMIC_RELEASE);
	if (write(k->grow_fd, &(uint64_t){1}, sizeof(uint64_t)) < 0 && errno != EAGAIN)
		KR_ERR_RATELIMITED("pool", "grow eventfd: %s", strerror(errno));
	KR_DBG("pool", "tenant %u: grew %s %u (%u free before)", t->idx, dci ? "DCI" : "RC", empty,
	       avail);
	return 1;
}

static void *grow_main(void *arg)
{
	struct kr_keeper *k = arg;

	while (!__atomic_load_n(&k->grow_stop, __ATOMIC_ACQUIRE)) {
		bool built = false, failed = false;

		for (uint32_t t = 0; t < k->cfg.tenants; t++) {
			for (uint32_t kind = KR_SLOT_DCI; kind <= KR_SLOT_RC; kind++) {
				int rc = grow_one(k, &k->tenant[t], kind);

				built |= rc > 0;
				failed |= rc < 0;
			}
		}
		/* between builds too: the loop's own firmware work gets the lock */
		poll(NULL, 0, failed ? KR_GROW_BACKOFF_MS : KR_GROW_IDLE_MS);
		(void)built;
	}
	return NULL;
}

void kr_keeper_grow_adopt(struct kr_keeper *k)
{
	uint64_t n;

	if (read(k->grow_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		KR_ERR_RATELIMITED("pool", "grow eventfd: %s", strerror(errno));
	for (uint32_t t = 0; t < k->cfg.tenants; t++) {
		struct kr_keeper_tenant *kt = &k->tenant[t];
		struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t);

		for (uint32_t i = 0; i < k->seg->dcis; i++)
			if (__atomic_exchange_n(&kt->dci[i].grown, false, __ATOMIC_ACQ_REL))
				kr_keeper_ring_put(k, tr->dci_ring_off, i);
		for (uint32_t i = 0; i < k->seg->rc_spares; i++)
			if (__atomic_exchange_n(&kt->rc[i].grown, false, __ATOMIC_ACQ_REL))
				kr_keeper_ring_put(k, tr->rc_ring_off, i);
	}
}

int kr_keeper_grow_start(struct kr_keeper *k)
{
	/*
	 * Reserve the user_index table for every QP the pool may hold (two per
	 * slot with margin), so that building one never reallocates it under
	 * the loop's CQ polling: register at the top index, then release it.
	 */
	uint32_t top = 64u + 2u * k->cfg.tenants * (k->seg->dcis + k->seg->rc_spares + 8u);
	int rc;

	if (k->seg->dcis == k->cfg.dcis && k->seg->rc_spares == k->cfg.rc_spares)
		return 0; /* no room to grow: no thread */

	rc = kr_devx_rsc_set(k->ctx, top, KR_DEVX_RSC_QP, k);
	if (rc && rc != -EEXIST) {
		KR_ERR("pool", "reserving %u user indexes: %s", top, strerror(-rc));
		return rc;
	}
	if (!rc)
		kr_devx_rsc_free(k->ctx, top);
	rc = pthread_create(&k->grow_thread, NULL, grow_main, k);
	if (rc) {
		KR_ERR("pool", "grow thread: %s", strerror(rc));
		return -rc;
	}
	k->grow_up = true;
	return 0;
}

void kr_keeper_grow_stop(struct kr_keeper *k)
{
	if (!k->grow_up)
		return;
	__atomic_store_n(&k->grow_stop, 1, __ATOMIC_RELEASE);
	pthread_join(k->grow_thread, NULL);
	k->grow_up = false;
}
