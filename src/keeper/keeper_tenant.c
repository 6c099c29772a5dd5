/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tenants: what the keeper builds for each slot at start (its hugepage
 * memzone, a PD, a UAR, an SRQ with its CQ and receive buffers, then its
 * DCIs, spare RC QPs and job heaps), and the DC target a launch gets when
 * it binds the slot (keeper_bind.c): its DC access key is the launch's, so
 * the DCT is created then and destroyed when the launch leaves the node.
 *
 * Isolation: a tenant's objects live in its own PD; its DC access key is
 * only in its own zone, which only its jobs map.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rte_memzone.h>

#include "keeper/meta/meta.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

/* The CQ, SRQ and receive buffers a DC target needs; the DCT itself comes with a launch. */
static int tenant_srq_build(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	struct kr_devx_srq_attr sa = {.pdn = t->pd.pdn, .nwqe = KR_POOL_DCT_SRQ_WQE, .max_sge = 1};
	struct kr_devx_cq_attr ca = {.ncqe = KR_POOL_DCT_SRQ_WQE, .uar = t->uar};
	uint8_t *p = t->kzone, *recv;
	int rc;

	ca.buf = p;
	ca.buf_len = kr_devx_cq_buf_size(ca.ncqe);
	p += (ca.buf_len + 4095) & ~(size_t)4095;
	rc = kr_devx_cq_create(k->ctx, &ca, &t->dct_cq);
	if (rc)
		return rc;
	kr_keeper_dct_event_cq(k, t);
	sa.buf = p;
	sa.buf_len = kr_devx_srq_buf_size(&sa);
	p += (sa.buf_len + 4095) & ~(size_t)4095;
	rc = kr_devx_srq_create(k->ctx, &sa, &t->srq);
	if (rc)
		goto err_destroy_cq;
	recv = p;
	rc =
	    kr_devx_mr_reg(k->ctx, &t->pd, recv, (size_t)KR_POOL_DCT_SRQ_WQE * KR_POOL_DCT_RECV_LEN,
			   KR_ACCESS_LOCAL_WRITE, &t->recv_mr);
	if (rc)
		goto err_destroy_srq;
	for (uint32_t i = 0; i < KR_POOL_DCT_SRQ_WQE; i++) {
		struct kr_devx_sge sge = {.addr =
					      (uintptr_t)(recv + (size_t)i * KR_POOL_DCT_RECV_LEN),
					  .length = KR_POOL_DCT_RECV_LEN,
					  .lkey = t->recv_mr.lkey};

		rc = kr_devx_srq_post_recv(&t->srq, &sge, 1, i);
		if (rc)
			goto err_dereg_mr;
	}
	t->srq_ok = true;
	return 0;

err_dereg_mr:
	kr_devx_mr_dereg(&t->recv_mr);
err_destroy_srq:
	kr_devx_srq_destroy(&t->srq);
err_destroy_cq:
	kr_devx_cq_destroy(&t->dct_cq);
	return rc;
}

/* kr_keeper_dct_path() - see keeper.h. */
void kr_keeper_dct_path(const struct kr_keeper *k, struct kr_devx_dct_attr *da)
{
	da->port = 1;
	da->mtu = KR_MTU_1K;
	da->min_rnr_nak = 12;
	da->hop_limit = 64;
	da->gid_index = (uint8_t)k->ctx->port.gid_index; /* answers leave from the port's GID */
	da->tclass = k->ctx->port.tclass;		 /* --traffic-class, --priority */
	da->sl = k->ctx->port.sl;
}

/* kr_keeper_tenant_dct_open() - see keeper.h. */
int kr_keeper_tenant_dct_open(struct kr_keeper *k, struct kr_keeper_tenant *t, uint64_t dc_key,
			      uint32_t access)
{
	struct kr_devx_dct_attr da;
	int rc;

	if (!t->srq_ok || t->dct_ok)
		return -EINVAL;
	memset(&da, 0, sizeof(da));
	da.pdn = t->pd.pdn;
	da.cq = &t->dct_cq;
	da.srq = &t->srq;
	da.dc_key = dc_key;
	da.access = access;
	kr_keeper_dct_path(k, &da);
	pthread_mutex_lock(&k->cmd_lock);
	rc = kr_devx_dct_create(k->ctx, &da, &t->dct);
	if (!rc) {
		t->dct_ok = true;
		t->dct_viol_seen = 0;
	}
	pthread_mutex_unlock(&k->cmd_lock);
	return rc;
}

/* kr_keeper_tenant_dct_close() - see keeper.h. */
void kr_keeper_tenant_dct_close(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	if (!t->dct_ok)
		return;
	pthread_mutex_lock(&k->cmd_lock);
	kr_devx_dct_destroy(&t->dct);
	memset(&t->dct, 0, sizeof(t->dct));
	t->dct_ok = false;
	pthread_mutex_unlock(&k->cmd_lock);
}

static int tenant_zone_init(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	struct kr_zone_hdr *z = (struct kr_zone_hdr *)t->zone;
	struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t->idx);
	int rc;

	z->magic = KR_POOL_ZONE_MAGIC;
	z->tenant = t->idx;
	z->size = t->zone_len;
	z->ndci = kr_keeper_cfg_dci_slots(&k->cfg); /* descriptors of DCIs built later too */
	z->dci_off = sizeof(*z);
	z->port = k->ctx->port;
	z->dct_off = kr_keeper_zone_dct_off(&k->cfg);
	z->ep_off = kr_keeper_zone_ep_off();
	z->nep = k->cfg.ports;
	z->rc_off = kr_keeper_zone_rc_desc_off();
	z->nrc = kr_keeper_cfg_rc_slots(&k->cfg);
	rc = kr_keeper_dct_init(k, t); /* the DC metadata: node id, node cache, static peers */
	if (rc)
		return rc;
	tr->pdn = t->pd.pdn;
	tr->zone_va = (uintptr_t)t->zone;
	tr->zone_len = t->zone_len;
	return 0;
}

/*
 * The tenant's UAR page, which its jobs ring without kmod-min: a page of its
 * own where the stack has one (kr_devx_uar_alloc_private), rung only at its
 * first register and never with BlueFlame copies, as many threads write it;
 * else libmlx5 44's one non-cached page, which every tenant then shares
 * (said once: krctl status says doorbell pages are shared in trusted mode).
 */
static int tenant_uar_alloc(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	int rc = kr_devx_uar_alloc_private(k->ctx, &t->uar);

	if (!rc) {
		t->uar->bf_size = 0;
		return 0;
	}
	if (rc != -EOPNOTSUPP)
		return rc;
	if (!k->uar_shared_said)
		KR_INFO("pool",
			"%s: no UAR page of its own per tenant (no BlueFlame, libmlx5 < "
			"45): tenants share the device's doorbell page",
			k->ctx->name);
	k->uar_shared_said = true;
	return k->ctx->ops->alloc_uar(k->ctx, 0, &t->uar);
}

/* What every DC target stands on: a PD, a UAR, and its SRQ with CQ and receive buffers. */
static int target_base_build(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	int rc;

	rc = kr_devx_pd_alloc(k->ctx, &t->pd);
	if (rc)
		return rc;
	t->pd_ok = true;
	rc = tenant_uar_alloc(k, t);
	if (rc)
		return rc;
	return tenant_srq_build(k, t);
}

/* kr_keeper_target_build() - see keeper.h. */
int kr_keeper_target_build(struct kr_keeper *k, struct kr_keeper_tenant *t, const char *name,
			   uint64_t dc_key, uint32_t access)
{
	int rc;

	t->mz = kr_keeper_kmem_reserve(name, kr_keeper_kzone_size(&k->cfg));
	if (!t->mz)
		return -ENOMEM;
	t->kzone = t->mz->addr;
	t->kzone_len = t->mz->len;
	rc = target_base_build(k, t);
	if (rc)
		return rc;
	return kr_keeper_tenant_dct_open(k, t, dc_key, access);
}

/*
 * The device side of slot t over its memory: PD, UAR, SRQ, the zone header,
 * cfg->dcis DCIs, the RC spares and the warm heaps. The rings are the
 * caller's (the event loop's). lock: taken for each object (the worker, so
 * that the loop's own commands interleave), or NULL at start. 0 or the
 * first error.
 */
static int tenant_dev_build(struct kr_keeper *k, struct kr_keeper_tenant *t, pthread_mutex_t *lock)
{
	const struct kr_keeper_cfg *cfg = &k->cfg;
	int rc;

	kr_step_lock(lock);
	rc = target_base_build(k, t);
	if (!rc && kr_keeper_sends_uar(k)) {
		rc = kr_devx_uar_export(t->uar, &t->uar_fd, &t->uar_ref);
		if (rc)
			KR_ERR("pool",
			       "%s: tenant %u's UAR page cannot be shared with its jobs: %s",
			       k->ctx->name, t->idx, strerror(-rc));
	}
	if (!rc)
		rc = tenant_zone_init(k, t);
	if (!rc)
		rc = kr_keeper_ctl_build(k, t);
	kr_step_unlock(lock);
	for (uint32_t i = 0; !rc && i < cfg->dcis; i++) {
		kr_step_lock(lock);
		rc = kr_keeper_dci_build(k, t, i);
		kr_step_unlock(lock);
	}
	for (uint32_t i = 0; !rc && i < cfg->rc_spares; i++) {
		kr_step_lock(lock);
		rc = kr_keeper_rc_build(k, t, i);
		kr_step_unlock(lock);
	}
	if (!rc) {
		rc = kr_keeper_heaps_warm(k, t, lock);
		rc = rc > 0 ? 0 : rc;
	}
	for (uint32_t e = 0; !rc && e < cfg->ports; e++) {
		kr_step_lock(lock);
		rc = kr_keeper_ep_build(k, t, e);
		kr_step_unlock(lock);
	}
	return rc;
}

/*
 * Undo tenant_dev_build (tolerates a partial one); the memory stays mapped.
 * The DCT goes first (kr_keeper_tenant_dct_close: the launch's).
 */
static void tenant_dev_destroy(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	for (uint32_t e = 0; t->ep && e < k->cfg.ports; e++)
		kr_keeper_ep_destroy(k, t, e);
	for (uint32_t j = 0; t->heap && j < k->cfg.jobs; j++) {
		kr_keeper_heap_empty(t, &t->heap[j]);
		t->heap[j].job_plus1 = 0;
		t->heap[j].state = KR_HEAP_COLD;
	}
	for (uint32_t i = 0; t->rc && i < kr_keeper_cfg_rc_slots(&k->cfg); i++)
		kr_keeper_qp_destroy(k, &t->rc[i]);
	for (uint32_t i = 0; t->dci && i < kr_keeper_cfg_dci_slots(&k->cfg); i++)
		kr_keeper_qp_destroy(k, &t->dci[i]);
	kr_keeper_qp_destroy(k, &t->ctl);
	if (t->srq_ok) {
		kr_devx_mr_dereg(&t->recv_mr);
		kr_devx_srq_destroy(&t->srq);
		kr_devx_cq_destroy(&t->dct_cq);
		t->srq_ok = false;
	}
	if (t->uar) {
		kr_devx_uar_free_private(t->uar);
		t->uar = NULL;
		t->uar_fd = -1;
	}
	if (t->pd_ok) {
		kr_devx_pd_free(&t->pd);
		t->pd_ok = false;
	}
}

/* kr_keeper_tenant_rings_fill() - see keeper.h. */
int kr_keeper_tenant_rings_fill(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	const struct kr_keeper_cfg *cfg = &k->cfg;
	struct kr_pool_tenant *tr = kr_seg_tenant(k->seg, t->idx);
	int rc = 0;

	for (uint32_t i = 0; !rc && i < cfg->dcis; i++)
		rc = kr_keeper_ring_put(k, tr->dci_ring_off, i);
	for (uint32_t i = 0; !rc && i < cfg->rc_spares; i++)
		rc = kr_keeper_ring_put(k, tr->rc_ring_off, i);
	for (uint32_t j = 0; !rc && j < cfg->jobs; j++) {
		struct kr_pool_job *job = kr_seg_job(k->seg, t->idx * cfg->jobs + j);

		job->state = KR_JOB_FREE;
		job->tenant = t->idx;
		job->heap_len = 0;
		rc = kr_keeper_ring_put(k, tr->job_ring_off, t->idx * cfg->jobs + j);
	}
	return rc;
}

/*
 * kr_keeper_tenant_build() - everything tenant t needs, warm. Returns 0 or
 * the first error (-ENOMEM for hugepages, -EREMOTEIO for a refused command);
 * on error the caller destroys the tenant (what was built is recorded in t).
 */
int kr_keeper_tenant_build(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	const struct kr_keeper_cfg *cfg = &k->cfg;
	char name[32];
	int rc;

	t->zone_len = kr_keeper_pages_len(kr_keeper_zone_size(cfg));
	snprintf(name, sizeof(name), "kr_t%u", t->idx);
	t->mz = kr_keeper_kmem_reserve(name, kr_keeper_kzone_size(cfg));
	if (!t->mz)
		return -ENOMEM;
	t->kzone = t->mz->addr;
	t->kzone_len = t->mz->len;
	/* head then rings, back to back in the window: one zone for the jobs */
	snprintf(name, sizeof(name), "kr_t%u_zone_head", t->idx);
	rc = kr_keeper_shm_map(k, name, kr_keeper_zone_head_len(), false, &t->zhead_shm);
	if (rc)
		return rc;
	snprintf(name, sizeof(name), "kr_t%u_zone", t->idx);
	rc = kr_keeper_shm_map(k, name, t->zone_len - kr_keeper_zone_head_len(), true, &t->zone_shm);
	if (rc)
		return rc;
	t->zone = t->zhead_shm.addr;

	t->dci = calloc(kr_keeper_cfg_dci_slots(cfg), sizeof(*t->dci));
	t->rc = calloc(kr_keeper_cfg_rc_slots(cfg) ? kr_keeper_cfg_rc_slots(cfg) : 1, sizeof(*t->rc));
	t->heap = calloc(cfg->jobs, sizeof(*t->heap));
	t->job_heap = calloc(cfg->jobs, sizeof(*t->job_heap));
	t->ep = calloc(cfg->ports ? cfg->ports : 1, sizeof(*t->ep));
	t->outbox = kr_keeper_pair_box_new();
	if (!t->dci || !t->rc || !t->heap || !t->job_heap || !t->ep || !t->outbox)
		return -ENOMEM;
	for (uint32_t j = 0; j < cfg->jobs; j++) {
		rc = kr_keeper_heap_place(k, &t->heap[j]);
		if (rc)
			return rc;
	}

	rc = tenant_dev_build(k, t, NULL);
	if (rc)
		return rc;
	rc = kr_keeper_tenant_rings_fill(k, t);
	if (rc)
		return rc;
	KR_INFO(
	    "pool", "tenant %u: pd %u, %u DCIs, %u RC spares, %u heaps of up to %u MB (%u warm)",
	    t->idx, t->pd.pdn, cfg->dcis, cfg->rc_spares, cfg->jobs, cfg->heap_mb, cfg->warm_heaps);
	return 0;
}

/* kr_keeper_tenant_renew() - see keeper.h. */
int kr_keeper_tenant_renew(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	struct kr_dct_zone *dz = (struct kr_dct_zone *)(t->zone + kr_keeper_zone_dct_off(&k->cfg));
	struct kr_dct_meta_addr meta[KR_DCT_MAX_META];
	uint32_t nmeta = 0;
	char name[32];
	int rc;

	/* the loop adopts nothing of a slot being renewed: these were never handed out */
	for (uint32_t i = 0; i < kr_keeper_cfg_dci_slots(&k->cfg); i++) {
		t->dci[i].ready = false;
		t->dci[i].came_back_err = false;
		t->dci[i].from_job_plus1 = 0;
	}
	for (uint32_t i = 0; i < kr_keeper_cfg_rc_slots(&k->cfg); i++) {
		t->rc[i].ready = false;
		t->rc[i].came_back_err = false;
		t->rc[i].from_job_plus1 = 0;
		memset(&t->rc[i].pair, 0,
		       sizeof(t->rc[i].pair)); /* pairs of the old launch die with it */
		kr_seg_rc(k->seg, t->idx, i)->link = KR_LINK_NONE;
	}
	kr_keeper_tenant_dct_close(k, t); /* closed when the launch left: nothing to do */
	pthread_mutex_lock(&k->cmd_lock);
	tenant_dev_destroy(k, t);
	pthread_mutex_unlock(&k->cmd_lock);
	for (uint32_t i = 0; i < kr_keeper_cfg_dci_slots(&k->cfg); i++)
		kr_seg_dci(k->seg, t->idx, i)->state = KR_SLOT_EMPTY;
	for (uint32_t i = 0; i < kr_keeper_cfg_rc_slots(&k->cfg); i++)
		kr_seg_rc(k->seg, t->idx, i)->state = KR_SLOT_EMPTY;

	/*
	 * New pages for all a job could map (a process that kept the old
	 * descriptors keeps only the old pages), the keeper-only zone zeroed.
	 * zone_lock keeps the MetaServer list writer out of the zone meanwhile;
	 * the list itself carries over.
	 */
	pthread_mutex_lock(&k->zone_lock);
	if (dz->nmeta <= KR_DCT_MAX_META) {
		nmeta = dz->nmeta;
		memcpy(meta, dz->meta, sizeof(meta));
	}
	memset(t->kzone, 0, t->kzone_len);
	snprintf(name, sizeof(name), "kr_t%u_zone_head", t->idx);
	rc = kr_keeper_shm_renew(name, &t->zhead_shm);
	snprintf(name, sizeof(name), "kr_t%u_zone", t->idx);
	if (!rc)
		rc = kr_keeper_shm_renew(name, &t->zone_shm);
	if (!rc)
		rc = tenant_dev_build(k, t, &k->cmd_lock);
	if (!rc) {
		dz->nmeta = nmeta;
		memcpy(dz->meta, meta, sizeof(meta));
	}
	pthread_mutex_unlock(&k->zone_lock);
	if (rc) {
		pthread_mutex_lock(&k->cmd_lock);
		tenant_dev_destroy(k, t);
		pthread_mutex_unlock(&k->cmd_lock);
		KR_ERR("pool", "tenant %u: renewal failed: %s", t->idx, strerror(-rc));
	}
	return rc;
}

/* Tear down in reverse; tolerates a partly built tenant. */
void kr_keeper_tenant_destroy(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	kr_keeper_tenant_dct_close(k, t);
	tenant_dev_destroy(k, t);
	for (uint32_t j = 0; t->heap && j < k->cfg.jobs; j++)
		kr_keeper_heap_unplace(&t->heap[j]);
	free(t->ep);
	free(t->heap);
	free(t->job_heap);
	t->job_heap = NULL;
	free(t->rc);
	free(t->dci);
	free(t->outbox);
	t->outbox = NULL;
	t->ep = NULL;
	t->heap = NULL;
	t->rc = NULL;
	t->dci = NULL;
	kr_keeper_shm_unmap(&t->zone_shm);
	kr_keeper_shm_unmap(&t->zhead_shm);
	t->zone = NULL;
	if (t->mz) {
		rte_memzone_free(t->mz);
		t->mz = NULL;
	}
}

/* Take the SENDs to the DCT (pairing messages: keeper_pair.c) and repost their buffers. */
void kr_keeper_tenant_poll_dct(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	struct kr_devx_wc wc[16];
	int n;

	if (!t->srq_ok || __atomic_load_n(&t->renew, __ATOMIC_ACQUIRE))
		return;
	while ((n = kr_devx_cq_poll(&t->dct_cq, wc, 16)) > 0) {
		for (int i = 0; i < n; i++) {
			uint64_t slot = wc[i].wr_id % KR_POOL_DCT_SRQ_WQE;
			struct kr_devx_sge sge = {.addr = (uintptr_t)t->recv_mr.addr +
							  slot * KR_POOL_DCT_RECV_LEN,
						  .length = KR_POOL_DCT_RECV_LEN,
						  .lkey = t->recv_mr.lkey};

			/* another keeper's pairing message (a plain SEND: a WRITE with
			 * immediate places nothing in the buffer, whose old bytes must not
			 * be read as a new message), else a stray receive (counted) */
			if (wc[i].status != KR_WC_SUCCESS || wc[i].opcode != KR_WC_RECV ||
			    wc[i].has_imm || wc[i].byte_len > KR_POOL_DCT_RECV_LEN ||
			    !kr_keeper_pair_recv(k, t, (const void *)(uintptr_t)sge.addr,
						 wc[i].byte_len))
				kr_seg_tenant(k->seg, t->idx)->dct_recvs++;
			if (kr_devx_srq_post_recv(&t->srq, &sge, 1, slot))
				KR_ERR_RATELIMITED("pool", "tenant %u: DCT receive repost failed",
						   t->idx);
		}
	}
	kr_keeper_dct_arm(k, t); /* a CQE from here on raises an event (keeper_dct_event.c) */
}
