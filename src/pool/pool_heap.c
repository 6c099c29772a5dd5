/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Job heaps, keeper side. Each job slot of a tenant owns one heap: whole
 * hugepages of the tenant memzone, registered (umem + MKEY) in the tenant's
 * PD at start, so attach hands out RDMA-ready memory with no firmware
 * command. The MR covers exactly that heap: never another job's memory.
 *
 * When a job leaves (detach or death) its heap is scrubbed in the background
 * before another job gets it: given new zeroed pages (kr_keeper_shm_renew),
 * and re-registered under a new MKEY so every lkey/rkey the old job gave
 * out stops working.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kr_log.h"
#include "pool.h"

#define KR_HEAP_ACCESS                                                                             \
	(KR_ACCESS_LOCAL_WRITE | KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ |                  \
	 KR_ACCESS_REMOTE_ATOMIC)

/* kr_keeper_heap_build() - register heap j of tenant t. 0 or the devx error. */
int kr_keeper_heap_build(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t j)
{
	struct kr_keeper_heap *h = &t->heap[j];
	struct kr_pool_job *job = kr_seg_job(k->seg, t->idx * k->cfg.jobs + j);
	int rc;

	rc = kr_devx_mr_reg(k->ctx, &t->pd, h->addr, h->len, KR_HEAP_ACCESS, &h->mr);
	if (rc) {
		KR_ERR("pool", "tenant %u heap %u: MR registration failed: %s", t->idx, j,
		       strerror(-rc));
		return rc;
	}
	h->registered = true;
	job->state = KR_JOB_FREE;
	job->tenant = t->idx;
	job->heap_len = h->len;
	return 0;
}

/*
 * kr_keeper_heap_scrub() - new pages for heap j, registered again (new keys).
 * Returns 0 or the devx error (the heap then stays out of the pool).
 */
int kr_keeper_heap_scrub(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t j)
{
	struct kr_keeper_heap *h = &t->heap[j];
	char name[32];
	int rc;

	if (h->registered) {
		rc = kr_devx_mr_dereg(&h->mr);
		if (rc) {
			KR_ERR("pool", "tenant %u heap %u: deregistration failed: %s", t->idx, j,
			       strerror(-rc));
			return rc;
		}
		h->registered = false;
	}
	/* new pages, not zeroed old ones: a descriptor the old job kept must not
	 * reach the next job's heap */
	snprintf(name, sizeof(name), "kr_t%u_heap%u", t->idx, j);
	rc = kr_keeper_shm_renew(name, &h->shm);
	if (rc) {
		KR_ERR("pool", "tenant %u heap %u: new pages: %s", t->idx, j, strerror(-rc));
		return rc;
	}
	return kr_keeper_heap_build(k, t, j);
}

void kr_keeper_heap_destroy(struct kr_keeper_heap *h)
{
	if (h->registered) {
		kr_devx_mr_dereg(&h->mr);
		h->registered = false;
	}
}
