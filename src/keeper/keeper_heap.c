/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Job heaps, keeper side. A tenant has cfg.jobs heap places, each heap_mb
 * of address space reserved at start with no page behind it. A heap is
 * backed when a job needs it: the first 2 MB when a job takes it (attach),
 * more when the job's allocator runs past what is backed (KR_MSG_HEAP_GROW:
 * at least double, at most heap_mb). Each step is a sealed hugetlb memfd
 * mapped right after the others and an MR over the whole heap so far, so the
 * job has one lkey for all of it; a step's older MRs stay valid (requests
 * already posted with their keys) until the heap is emptied. 2 MB doubling
 * to 64 MB is 6 steps: a heap holds at most 6 MRs and pins each page once
 * per MR over it.
 *
 * Warm heaps: kr_keeper_heaps_wanted() free heaps per tenant keep their
 * first 2 MB backed and registered, so an attach issues no firmware
 * command; a job takes a warm one (none warm, in a burst of attaches: the
 * attach is answered EAGAIN at once and kr_attach asks again). When a job
 * leaves, its heap is emptied: MRs deregistered (every key the job gave out
 * dies), chunks unmapped and their place held again; a descriptor the old
 * job kept reaches only the old pages, the next job gets new ones. Emptying
 * and warming run on the keeper's worker (see enum kr_heap_state for who
 * touches what), never on the event loop: an attach never waits behind them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "common/kr_log.h"
#include "keeper/keeper.h"

#define KR_HEAP_ACCESS                                                                             \
	(KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ |                  \
	 KR_ACCESS_REMOTE_ATOMIC)

/* kr_keeper_heap_place() - reserve h's address space (cfg.heap_mb). 0 or -errno. */
int kr_keeper_heap_place(struct kr_keeper *k, struct kr_keeper_heap *h)
{
	memset(h, 0, sizeof(*h));
	for (uint32_t i = 0; i < KR_HEAP_MAX_CHUNKS; i++)
		h->chunk[i].fd = h->chunk[i].ro_fd = -1;
	h->max = kr_keeper_pages_len((uint64_t)k->cfg.heap_mb << 20);
	h->addr = kr_keeper_shm_reserve(k, h->max);
	return h->addr ? 0 : -errno;
}

/* The length after the next step: at least want, at least double, at most max. */
static uint64_t heap_next_len(const struct kr_keeper_heap *h, uint64_t want)
{
	uint64_t n = h->len ? 2 * h->len : KR_HEAP_FIRST;

	if (n < want)
		n = kr_keeper_pages_len(want);
	return n > h->max ? h->max : n;
}

/*
 * kr_keeper_heap_grow() - back h up to at least want bytes (cmd_lock held).
 * Returns 0 (also when it already is), -ENOMEM (past heap_mb, or no free
 * hugepage), or the registration error; h is unchanged on error.
 */
int kr_keeper_heap_grow(struct kr_keeper *k, struct kr_keeper_tenant *t, struct kr_keeper_heap *h,
			uint64_t want)
{
	struct kr_shm *c = &h->chunk[h->nchunks];
	uint64_t len;
	char name[40];
	int rc;

	if (want <= h->len)
		return 0;
	if (want > h->max || h->nchunks == KR_HEAP_MAX_CHUNKS)
		return -ENOMEM;
	len = heap_next_len(h, want);
	snprintf(name, sizeof(name), "kr_t%u_heap%u.%u", t->idx, (uint32_t)(h - t->heap),
		 h->nchunks);
	rc = kr_keeper_shm_map_at(name, h->addr + h->len, len - h->len, c);
	if (rc)
		return rc == -ENOSPC ? -ENOMEM : rc;
	rc = kr_devx_mr_reg(k->ctx, &t->pd, h->addr, len, KR_HEAP_ACCESS, &h->mr[h->nchunks]);
	if (rc) {
		KR_ERR("pool", "tenant %u heap %u: registering %llu MB failed: %s", t->idx,
		       (uint32_t)(h - t->heap), (unsigned long long)(len >> 20), strerror(-rc));
		kr_keeper_shm_unmap_held(c);
		return rc;
	}
	/* the first page in now, off the attach path: the ready ring's claim
	 * words live there (keeper_ready.c), and a hugepage's first touch zeroes it */
	if (!h->nchunks)
		__atomic_store_n((uint32_t *)(h->addr + KR_HEAP_READY_CLAIM_OFF), 0, __ATOMIC_RELAXED);
	h->nchunks++;
	h->len = len;
	return 0;
}

/*
 * kr_keeper_heap_empty() - deregister and unmap everything behind h
 * (cmd_lock held). 0, or the deregistration error with the rest kept (the
 * heap stays out of use; the caller retries).
 */
int kr_keeper_heap_empty(struct kr_keeper_tenant *t, struct kr_keeper_heap *h)
{
	while (h->nchunks) {
		uint32_t i = h->nchunks - 1;
		int rc = kr_devx_mr_dereg(&h->mr[i]);

		if (rc) {
			KR_ERR("pool", "tenant %u heap %u: deregistration failed: %s", t->idx,
			       (uint32_t)(h - t->heap), strerror(-rc));
			return rc;
		}
		h->len -= h->chunk[i].len;
		kr_keeper_shm_unmap_held(&h->chunk[i]);
		h->nchunks--;
	}
	return 0;
}

static int heap_state(const struct kr_keeper_heap *h)
{
	return __atomic_load_n(&h->state, __ATOMIC_ACQUIRE);
}

/*
 * kr_keeper_heaps_wanted() - how many free heaps of t to keep warm: for a
 * slot a launch holds, --warm-heaps (its next ranks attach at once, also in
 * a burst, while the worker may be busy for milliseconds); for a free slot
 * one (a launch's first rank attaches at once, and an idle keeper holds one
 * heap page per slot). Never more than its job slots.
 */
uint32_t kr_keeper_heaps_wanted(const struct kr_keeper *k, const struct kr_keeper_tenant *t)
{
	uint32_t w = __atomic_load_n(&t->bound, __ATOMIC_ACQUIRE) ? k->cfg.warm_heaps
								  : (k->cfg.warm_heaps ? 1 : 0);

	return w < k->cfg.jobs ? w : k->cfg.jobs;
}

/*
 * kr_keeper_heaps_warm() - back COLD heaps of t until kr_keeper_heaps_wanted()
 * of them are WARM (the worker, or at start). lock: taken per heap (NULL: the caller
 * holds cmd_lock). Returns heaps warmed, or the first error.
 */
int kr_keeper_heaps_warm(struct kr_keeper *k, struct kr_keeper_tenant *t, pthread_mutex_t *lock)
{
	uint32_t warm = 0, want = kr_keeper_heaps_wanted(k, t);
	int done = 0;

	for (uint32_t i = 0; i < k->cfg.jobs; i++)
		warm += heap_state(&t->heap[i]) == KR_HEAP_WARM;
	for (uint32_t i = 0; i < k->cfg.jobs && warm < want; i++) {
		struct kr_keeper_heap *h = &t->heap[i];
		int rc;

		if (heap_state(h) != KR_HEAP_COLD)
			continue;
		kr_step_lock(lock);
		rc = kr_keeper_heap_grow(k, t, h, KR_HEAP_FIRST);
		kr_step_unlock(lock);
		if (rc)
			return rc;
		__atomic_store_n(&h->state, KR_HEAP_WARM, __ATOMIC_RELEASE);
		warm++;
		done++;
	}
	return done;
}

/*
 * kr_keeper_heaps_restore() - the worker: empty t's LEFT heaps, then warm
 * up to kr_keeper_heaps_wanted(). Returns heaps done (>= 0) or the first
 * error (the worker retries after its back-off).
 */
int kr_keeper_heaps_restore(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	uint32_t warm = 0, cold = 0, left = 0, want = kr_keeper_heaps_wanted(k, t);
	int done = 0, rc;

	for (uint32_t i = 0; i < k->cfg.jobs; i++) {
		int st = heap_state(&t->heap[i]);

		warm += st == KR_HEAP_WARM;
		cold += st == KR_HEAP_COLD;
		left += st == KR_HEAP_LEFT;
	}
	if (!left && (warm >= want || !cold))
		return 0; /* nothing to do: a look the worker takes before each reset */
	for (uint32_t i = 0; i < k->cfg.jobs; i++) {
		struct kr_keeper_heap *h = &t->heap[i];

		if (heap_state(h) != KR_HEAP_LEFT)
			continue;
		pthread_mutex_lock(&k->cmd_lock);
		rc = kr_keeper_heap_empty(t, h);
		pthread_mutex_unlock(&k->cmd_lock);
		if (rc)
			return rc;
		h->job_plus1 = 0;
		__atomic_store_n(&h->state, KR_HEAP_COLD, __ATOMIC_RELEASE);
		done++;
	}
	rc = kr_keeper_heaps_warm(k, t, &k->cmd_lock);
	return rc < 0 ? rc : done + rc;
}

/* kr_keeper_heap_left() - the loop: h's job has gone; the worker empties it. */
void kr_keeper_heap_left(struct kr_keeper *k, struct kr_keeper_heap *h)
{
	__atomic_store_n(&h->state, KR_HEAP_LEFT, __ATOMIC_RELEASE);
	kr_keeper_worker_wake(k);
}

/*
 * kr_keeper_heap_take() - the loop: a heap for job slot j of t (tenant-local),
 * a WARM one. With --warm-heaps 0 a COLD one is backed now (one registration
 * on the loop, like kr_reg_mr: the operator chose fewer pages over attach
 * time; the worker then warms none). NULL with errno EAGAIN (none warm yet:
 * the worker is at it; kr_attach asks again), ENOMEM (no hugepage) or the
 * registration's.
 */
struct kr_keeper_heap *kr_keeper_heap_take(struct kr_keeper *k, struct kr_keeper_tenant *t,
					   uint32_t j)
{
	struct kr_keeper_heap *h = NULL;
	int want = k->cfg.warm_heaps ? KR_HEAP_WARM : KR_HEAP_COLD, rc;

	for (uint32_t i = 0; i < k->cfg.jobs && !h; i++)
		if (heap_state(&t->heap[i]) == want)
			h = &t->heap[i];
	if (!h) {
		errno = EAGAIN;
		return NULL;
	}
	if (want == KR_HEAP_COLD) {
		pthread_mutex_lock(&k->cmd_lock);
		rc = kr_keeper_heap_grow(k, t, h, KR_HEAP_FIRST);
		pthread_mutex_unlock(&k->cmd_lock);
		if (rc) {
			errno = -rc;
			return NULL;
		}
	}
	h->job_plus1 = j + 1;
	__atomic_store_n(&h->state, KR_HEAP_HELD, __ATOMIC_RELEASE);
	t->job_heap[j] = (uint32_t)(h - t->heap);
	kr_keeper_worker_wake(k); /* one warm fewer */
	return h;
}

/* kr_keeper_heap_unplace() - empty h (errors ignored: the keeper is going) and free its place. */
void kr_keeper_heap_unplace(struct kr_keeper_heap *h)
{
	for (uint32_t i = 0; i < h->nchunks; i++) {
		kr_devx_mr_dereg(&h->mr[i]);
		kr_keeper_shm_unmap(&h->chunk[i]);
	}
	h->nchunks = 0;
	h->len = 0;
	if (h->addr)
		munmap(h->addr, h->max);
	h->addr = NULL;
}
