/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pool segment and the tenant zones: their layout (sizes and offsets),
 * the keeper's initialisation of the segment and its free rings, and the
 * read-only ring counts krctl shows.
 *
 * Rings: one per tenant and kind (DCI, RC, vQP, job slot), rte_rings of
 * uint32 slot indexes (_elem API, esize 4) inside the segment, exact size.
 * Single producer and single consumer: only the keeper's event loop touches
 * them. Others read prod.tail/cons.tail through rte_ring_count().
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_memzone.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "keeper/meta/meta.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

#define KR_SEG_ALIGN	    64u
#define KR_ZONE_ALIGN	    4096u
#define KR_RING_ESIZE	    4u
#define KR_RING_FLAGS	    (RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ)
#define KR_RINGS_PER_TENANT 4u

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Bytes of a ring that holds exactly n entries (n >= 1). */
static uint64_t ring_bytes(uint32_t n)
{
	ssize_t sz = rte_ring_get_memsize_elem(KR_RING_ESIZE, rte_align32pow2(n + 1));

	return sz < 0 ? 0 : align_up((uint64_t)sz, KR_SEG_ALIGN);
}

static uint32_t ring_n(const struct kr_keeper_cfg *cfg, uint32_t which)
{
	uint32_t n[KR_RINGS_PER_TENANT] = {kr_keeper_cfg_dci_slots(cfg), kr_keeper_cfg_rc_slots(cfg),
					   cfg->vqps, cfg->jobs};

	return n[which] ? n[which] : 1; /* an empty kind still gets a (never used) ring */
}

void kr_keeper_seg_layout(const struct kr_keeper_cfg *cfg, struct kr_pool_seg *s)
{
	uint64_t off = align_up(sizeof(*s), KR_SEG_ALIGN);
	uint32_t T = cfg->tenants;

	memset(s, 0, sizeof(*s));
	s->ntenants = T;
	s->dcis = kr_keeper_cfg_dci_slots(cfg);	  /* slots, built or not */
	s->rc_spares = kr_keeper_cfg_rc_slots(cfg); /* slots, built or not */
	s->vqps = cfg->vqps;
	s->jobs = cfg->jobs;
	s->heap_len = (uint64_t)cfg->heap_mb << 20;
	s->tenants_off = off;
	off = align_up(off + (uint64_t)T * sizeof(struct kr_pool_tenant), KR_SEG_ALIGN);
	s->dci_off = off;
	off = align_up(off + (uint64_t)T * s->dcis * sizeof(struct kr_pool_slot), KR_SEG_ALIGN);
	s->rc_off = off;
	off =
	    align_up(off + (uint64_t)T * s->rc_spares * sizeof(struct kr_pool_slot), KR_SEG_ALIGN);
	s->vqp_off = off;
	off = align_up(off + (uint64_t)T * cfg->vqps * sizeof(struct kr_pool_slot), KR_SEG_ALIGN);
	s->jobs_off = off;
	off = align_up(off + (uint64_t)T * cfg->jobs * sizeof(struct kr_pool_job), KR_SEG_ALIGN);
	s->rings_off = off;
	for (uint32_t w = 0; w < KR_RINGS_PER_TENANT; w++)
		off += (uint64_t)T * ring_bytes(ring_n(cfg, w));
	s->size = off;
}

/* DCI and RC QP attributes as the keeper builds them (sizes only). */
static void dci_attr(struct kr_devx_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->type = KR_DEVX_QP_DCI;
	a->sq_wqebb = KR_POOL_DCI_WQEBB;
}

static uint64_t qp_slot_bytes(void)
{
	struct kr_devx_qp_attr a;

	dci_attr(&a);
	return align_up(kr_devx_qp_buf_size(&a), KR_ZONE_ALIGN) +
	       align_up(kr_devx_cq_buf_size(KR_POOL_DCI_CQE), KR_ZONE_ALIGN);
}

/* Descriptors of the DCIs, then of the RC slots, after the zone header. */
uint64_t kr_keeper_zone_rc_desc_off(void)
{
	return sizeof(struct kr_zone_hdr) + (uint64_t)KR_POOL_MAX_DCIS * sizeof(struct kr_zone_dci);
}

/* the DC metadata: the node cache and node identity follow the descriptors. */
uint64_t kr_keeper_zone_dct_off(const struct kr_keeper_cfg *cfg)
{
	(void)cfg;
	/* header and descriptors for the most DCIs and RC QPs a tenant may have */
	return align_up(kr_keeper_zone_rc_desc_off() +
			    (uint64_t)KR_POOL_MAX_RC * sizeof(struct kr_zone_dci),
			KR_ZONE_ALIGN);
}

/* The receive endpoints' descriptors follow the node cache. */
uint64_t kr_keeper_zone_ep_off(void)
{
	return align_up(kr_keeper_zone_dct_off(NULL) + kr_dct_zone_bytes(), KR_SEG_ALIGN);
}

/*
 * The zone head, which jobs may only read: header, descriptors, node cache,
 * endpoint descriptors. Whole hugepages, so the rings after it are a mapping
 * of their own.
 */
uint64_t kr_keeper_zone_head_len(void)
{
	return kr_keeper_pages_len(kr_keeper_zone_ep_off() +
				 (uint64_t)KR_POOL_MAX_PORTS * sizeof(struct kr_zone_ep));
}

static uint64_t zone_first_off(void)
{
	return kr_keeper_zone_head_len();
}

uint64_t kr_keeper_zone_dci_qp_off(uint32_t i)
{
	return zone_first_off() + (uint64_t)i * qp_slot_bytes();
}

uint64_t kr_keeper_zone_dci_cq_off(uint32_t i)
{
	struct kr_devx_qp_attr a;

	dci_attr(&a);
	return kr_keeper_zone_dci_qp_off(i) + align_up(kr_devx_qp_buf_size(&a), KR_ZONE_ALIGN);
}

/* An RC slot's QP: the DCIs' send queue and a small receive queue. */
static void rc_attr(struct kr_devx_qp_attr *a)
{
	dci_attr(a);
	a->type = KR_DEVX_QP_RC;
	a->rq_wqe = KR_POOL_RC_RQ_WQE;
	a->max_recv_sge = 1;
}

/* One RC slot: its QP buffer and one CQ for both directions. */
static uint64_t rc_slot_bytes(void)
{
	struct kr_devx_qp_attr a;

	rc_attr(&a);
	return align_up(kr_devx_qp_buf_size(&a), KR_ZONE_ALIGN) +
	       align_up(kr_devx_cq_buf_size(KR_POOL_DCI_CQE), KR_ZONE_ALIGN);
}

/* RC slots follow the DCIs: a holder posts on them as on a DCI (promotion, keeper_pair.c). */
uint64_t kr_keeper_zone_rc_qp_off(const struct kr_keeper_cfg *cfg, uint32_t i)
{
	return kr_keeper_zone_dci_qp_off(kr_keeper_cfg_dci_slots(cfg)) + (uint64_t)i * rc_slot_bytes();
}

uint64_t kr_keeper_zone_rc_cq_off(const struct kr_keeper_cfg *cfg, uint32_t i)
{
	struct kr_devx_qp_attr a;

	rc_attr(&a);
	return kr_keeper_zone_rc_qp_off(cfg, i) + align_up(kr_devx_qp_buf_size(&a), KR_ZONE_ALIGN);
}

/* Keeper zone: DCT CQ and SRQ, receive buffers, the control DCI (rings + CQ). */
uint64_t kr_keeper_kzone_size(const struct kr_keeper_cfg *cfg)
{
	(void)cfg;
	return kr_keeper_kzone_ctl_off() + qp_slot_bytes();
}

/* The keeper's control DCI (keeper_pair.c) after the receive buffers. */
uint64_t kr_keeper_kzone_ctl_off(void)
{
	struct kr_devx_srq_attr sa = {.nwqe = KR_POOL_DCT_SRQ_WQE, .max_sge = 1};

	return align_up(kr_devx_cq_buf_size(KR_POOL_DCT_SRQ_WQE), KR_ZONE_ALIGN) +
	       align_up(kr_devx_srq_buf_size(&sa), KR_ZONE_ALIGN) +
	       align_up((uint64_t)KR_POOL_DCT_SRQ_WQE * KR_POOL_DCT_RECV_LEN, KR_ZONE_ALIGN);
}

/* The control DCI's CQ, after its QP buffer. */
uint64_t kr_keeper_kzone_ctl_cq_off(void)
{
	struct kr_devx_qp_attr a;

	dci_attr(&a);
	return kr_keeper_kzone_ctl_off() + align_up(kr_devx_qp_buf_size(&a), KR_ZONE_ALIGN);
}

/* A receive endpoint's SRQ as the keeper builds it (sizes only). */
void kr_keeper_ep_srq_attr(struct kr_devx_srq_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->nwqe = KR_POOL_PORT_WQE;
	a->max_sge = KR_POOL_PORT_SGE;
}

/* One receive endpoint's block: its CQ (one CQE per receive buffer), then its SRQ. */
uint64_t kr_keeper_zone_ep_block(void)
{
	struct kr_devx_srq_attr a;

	kr_keeper_ep_srq_attr(&a);
	return align_up(kr_devx_cq_buf_size(KR_POOL_PORT_WQE), KR_ZONE_ALIGN) +
	       align_up(kr_devx_srq_buf_size(&a), KR_ZONE_ALIGN);
}

uint64_t kr_keeper_zone_ep_cq_off(const struct kr_keeper_cfg *cfg, uint32_t e)
{
	return kr_keeper_zone_rc_qp_off(cfg, kr_keeper_cfg_rc_slots(cfg)) +
	       (uint64_t)e * kr_keeper_zone_ep_block();
}

uint64_t kr_keeper_zone_ep_srq_off(const struct kr_keeper_cfg *cfg, uint32_t e)
{
	return kr_keeper_zone_ep_cq_off(cfg, e) +
	       align_up(kr_devx_cq_buf_size(KR_POOL_PORT_WQE), KR_ZONE_ALIGN);
}

/* The zone holds the DCIs, the RC slots and the receive endpoints. */
uint64_t kr_keeper_zone_size(const struct kr_keeper_cfg *cfg)
{
	return kr_keeper_zone_ep_cq_off(cfg, cfg->ports);
}

uint32_t kr_keeper_seg_ring_count(const struct kr_pool_seg *s, uint64_t ring_off)
{
	if (!ring_off || ring_off >= s->size)
		return 0;
	return rte_ring_count((const struct rte_ring *)kr_seg_at(s, ring_off));
}

static int seg_ring_init(struct kr_pool_seg *s, uint64_t off, const char *what, uint32_t t,
			 uint32_t n)
{
	char name[RTE_RING_NAMESIZE];
	int rc;

	snprintf(name, sizeof(name), "kr_%s_%u", what, t);
	rc = rte_ring_init((struct rte_ring *)kr_seg_at(s, off), name, n, KR_RING_FLAGS);
	if (rc)
		KR_ERR("pool", "ring %s (%u entries): %s", name, n, strerror(-rc));
	return rc;
}

/*
 * kr_keeper_seg_init() - reserve the pool segment, write its header, tables
 * (all slots EMPTY, all jobs FREE) and empty rings, and fill each tenant's
 * job ring with its job slots. Returns 0, -ENOMEM (no hugepages) or the ring
 * initialisation error.
 */
int kr_keeper_seg_init(struct kr_keeper *k)
{
	const struct kr_keeper_cfg *cfg = &k->cfg;
	struct kr_pool_seg layout, *s;
	uint64_t off;
	int rc;

	kr_keeper_seg_layout(cfg, &layout);
	k->seg_mz = kr_keeper_zone_reserve("kr_pool", layout.size);
	if (!k->seg_mz)
		return -ENOMEM;
	s = k->seg_mz->addr;
	*s = layout;
	s->magic = KR_POOL_SEG_MAGIC;
	s->version = KR_POOL_VERSION;
	s->size = layout.size;
	snprintf(s->device, sizeof(s->device), "%s", k->ctx ? k->ctx->name : cfg->device);
	/* fenced only when kmod-min maps the rings and no job holds the command fd */
	s->trusted = k->krmin_fd < 0 || (k->ctx && k->ctx->share_cmd_fd);
	kr_keeper_quota_limits(cfg, &s->uid_launches, &s->uid_ports);
	if (k->ctx)
		s->port = k->ctx->port;
	k->seg = s;

	off = s->rings_off;
	for (uint32_t w = 0; w < KR_RINGS_PER_TENANT; w++) {
		static const char *const what[KR_RINGS_PER_TENANT] = {"dci", "rc", "vqp", "job"};
		uint32_t n = ring_n(cfg, w);

		for (uint32_t t = 0; t < cfg->tenants; t++) {
			struct kr_pool_tenant *tr = kr_seg_tenant(s, t);
			uint64_t *field[KR_RINGS_PER_TENANT] = {&tr->dci_ring_off, &tr->rc_ring_off,
								&tr->vqp_ring_off,
								&tr->job_ring_off};

			rc = seg_ring_init(s, off, what[w], t, n);
			if (rc)
				return rc;
			*field[w] = off;
			off += ring_bytes(n);
		}
	}

	for (uint32_t t = 0; t < cfg->tenants; t++) {
		struct kr_pool_tenant *tr = kr_seg_tenant(s, t);

		if (cfg->tenant_uid[t]) {
			tr->uid_plus1 = cfg->tenant_uid[t];
			tr->pinned = 1;
		}
		for (uint32_t i = 0; i < s->dcis; i++)
			*kr_seg_dci(s, t, i) = (struct kr_pool_slot){
			    .state = KR_SLOT_EMPTY, .kind = KR_SLOT_DCI, .tenant = t, .index = i};
		for (uint32_t i = 0; i < s->rc_spares; i++)
			*kr_seg_rc(s, t, i) = (struct kr_pool_slot){
			    .state = KR_SLOT_EMPTY, .kind = KR_SLOT_RC, .tenant = t, .index = i};
		for (uint32_t i = 0; i < cfg->vqps; i++) {
			uint32_t idx = i;

			*kr_seg_vqp(s, t, i) = (struct kr_pool_slot){
			    .state = KR_SLOT_FREE, .kind = KR_SLOT_VQP, .tenant = t, .index = i};
			rte_ring_enqueue_elem(kr_seg_at(s, tr->vqp_ring_off), &idx, KR_RING_ESIZE);
		}
	}
	return 0;
}

/* Keeper-only ring operations (single producer, single consumer). */
int kr_keeper_ring_put(struct kr_keeper *k, uint64_t ring_off, uint32_t idx)
{
	return rte_ring_enqueue_elem(kr_seg_at(k->seg, ring_off), &idx, KR_RING_ESIZE);
}

int kr_keeper_ring_get(struct kr_keeper *k, uint64_t ring_off, uint32_t *idx)
{
	return rte_ring_dequeue_elem(kr_seg_at(k->seg, ring_off), idx, KR_RING_ESIZE);
}
