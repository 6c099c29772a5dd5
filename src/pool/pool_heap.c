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
 * Warm heaps: cfg.warm_heaps free heaps per tenant keep their first 2 MB
 * backed and registered, so an attach issues no firmware command; the loop
 * tops them up between socket events (kr_keeper_scrub_jobs). A job takes
 * any free heap, a warm one first.
 *
 * When a job leaves, its heap is emptied: MRs deregistered (every key the job
 * gave out dies), chunks unmapped and their place held again. A descriptor
 * the old job kept reaches only the old pages; the next job gets new ones.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "kr_log.h"
#include "pool.h"

#define KR_HEAP_ACCESS                                                                             \
	(KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ |                  \
	 KR_ACCESS_REMOTE_ATOMIC)

/* kr_keeper_heap_place() - reserve h's address space (cfg.heap_mb). 0 or -errno. */
int kr_keeper_heap_place(struct kr_keeper *k, struct kr_keeper_heap *h)
{
	memset(h, 0, sizeof(*h));
	for (uint32_t i = 0; i < KR_HEAP_MAX_CHUNKS; i++)
		h->chunk[i].fd = h->chunk[i].ro_fd = -1;
	h->max = kr_pool_pages_len((uint64_t)k->cfg.heap_mb << 20);
	h->addr = kr_keeper_shm_reserve(k, h->max);
	return h->addr ? 0 : -errno;
}

/* The length after the next step: at least want, at least double, at most max. */
static uint64_t heap_next_len(const struct kr_keeper_heap *h, uint64_t want)
{
	uint64_t n = h->len ? 2 * h->len : KR_HEAP_FIRST;

	if (n < want)
		n = kr_pool_pages_len(want);
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

/*
 * kr_keeper_heaps_warm() - back free heaps of t until cfg.warm_heaps of them
 * are. lock: taken per heap (NULL: the caller holds cmd_lock). 0 or the
 * first error.
 */
int kr_keeper_heaps_warm(struct kr_keeper *k, struct kr_keeper_tenant *t, pthread_mutex_t *lock)
{
	uint32_t warm = 0;

	for (uint32_t i = 0; i < k->cfg.jobs; i++)
		warm += !t->heap[i].job_plus1 && t->heap[i].len;
	for (uint32_t i = 0; i < k->cfg.jobs && warm < k->cfg.warm_heaps; i++) {
		struct kr_keeper_heap *h = &t->heap[i];
		int rc;

		if (h->job_plus1 || h->len)
			continue;
		kr_step_lock(lock);
		rc = kr_keeper_heap_grow(k, t, h, KR_HEAP_FIRST);
		kr_step_unlock(lock);
		if (rc)
			return rc;
		warm++;
	}
	return 0;
}

/*
 * kr_keeper_heap_take() - a heap for job slot j of t (tenant-local): a warm
 * one, else a cold one backed now (one registration on the loop, like
 * kr_reg_mr). NULL with errno ENOMEM (no hugepage, or none free) or the
 * registration's.
 */
struct kr_keeper_heap *kr_keeper_heap_take(struct kr_keeper *k, struct kr_keeper_tenant *t,
					   uint32_t j)
{
	struct kr_keeper_heap *h = NULL, *cold = NULL;
	int rc;

	for (uint32_t i = 0; i < k->cfg.jobs && !h; i++) {
		if (t->heap[i].job_plus1)
			continue;
		if (t->heap[i].len)
			h = &t->heap[i];
		else if (!cold)
			cold = &t->heap[i];
	}
	if (!h && !cold) {
		errno = ENOMEM; /* as many heaps as job slots: not while slots are free */
		return NULL;
	}
	if (!h) {
		h = cold;
		pthread_mutex_lock(&k->cmd_lock);
		rc = kr_keeper_heap_grow(k, t, h, KR_HEAP_FIRST);
		pthread_mutex_unlock(&k->cmd_lock);
		if (rc) {
			errno = -rc;
			return NULL;
		}
	}
	h->job_plus1 = j + 1;
	t->job_heap[j] = (uint32_t)(h - t->heap);
	k->heaps_cold = true; /* one fewer warm: topped up between events */
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
