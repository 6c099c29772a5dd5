/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper's QP slots: DCIs (each with its own send CQ, rings in the
 * tenant's job-visible zone), spare RC QPs (rings in the zone too, after the
 * DCIs', parked in INIT until a peer is known: keeper_pair.c) and the
 * tenant's control DCI (keeper zone, the keeper's own), built and reset for
 * release, reclaim and recovery. This file keeps the books: the slot's UAR
 * page, its kmod-min registration, its zone descriptor and segment state;
 * the firmware commands are keeper_qp_cmd.c's.
 *
 * A reset quiesces the QP (keeper_qp_cmd.c) and brings it up at a send PSN
 * past the old life's; the next holder starts at sq_pi 0 and at the CQ
 * consumer index recorded anew in the zone descriptor.
 */
#include <errno.h>
#include <string.h>

#include "devx/devx.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

static void keeper_qp_uar_free(struct kr_keeper_qp *q)
{
	kr_devx_uar_free_private(q->uar);
	q->uar = NULL;
}

/* The page q rings: its own (fenced DCI), else its tenant's. */
static struct kr_devx_uar *keeper_qp_uar(const struct kr_keeper_tenant *t,
					 const struct kr_keeper_qp *q)
{
	return q->uar ? q->uar : t->uar;
}

/* Publish q's descriptor d in the tenant zone (offsets from the zone start). */
static void qp_describe(struct kr_keeper_tenant *t, struct kr_keeper_qp *q, struct kr_zone_dci *d)
{
	uintptr_t base = (uintptr_t)t->zone;

	d->qpn = q->qp.qpn;
	d->user_index = q->qp.user_index;
	d->cqn = q->cq.cqn;
	d->uar_page = keeper_qp_uar(t, q)->page_id;
	d->sq_wqebb_cnt = q->qp.sq_wqebb_cnt;
	d->ncqe = q->cq.ncqe;
	d->sq_off = (uintptr_t)q->qp.sq_buf - base;
	d->dbrec_off = (uintptr_t)q->qp.dbrec - base;
	d->cqe_off = (uintptr_t)q->cq.cqes - base;
	d->cq_dbrec_off = (uintptr_t)q->cq.dbrec - base;
	d->cq_ci = q->cq.cons_index;
}

static void dci_describe(struct kr_keeper_tenant *t, uint32_t i)
{
	qp_describe(t, &t->dci[i], kr_keeper_zone_dci(t, i));
}

/*
 * Fenced: a UAR page of the slot's own (a DCI or an RC slot), so that its
 * holder, mapping it through kmod-min, rings no other QP: both BlueFlame
 * registers of one page, or a dedicated page (kr_devx_uar_alloc_private);
 * the tenant's page otherwise. One thread posts to a leased QP, so the page
 * may be BlueFlame. Every page must have its register where the first had
 * it, and the same BlueFlame buffers: jobs learn them once, at attach. 0,
 * the allocation's error, or -EPROTO.
 */
static int slot_uar_alloc(struct kr_keeper *k, struct kr_keeper_qp *q)
{
	uint32_t off, bf;
	int rc;

	if (k->krmin_fd < 0)
		return 0;
	rc = kr_devx_uar_alloc_private(k->ctx, &q->uar);
	if (rc) {
		KR_ERR("pool", "tenant %u %s %u: no UAR page of its own: %s", q->tenant,
		       q->kind == KR_SLOT_RC ? "RC" : "DCI", q->index, strerror(-rc));
		return rc;
	}
	off = kr_devx_uar_reg_off(q->uar);
	bf = q->uar->bf_size;
	if (!k->dci_reg_off) {
		k->dci_reg_off = off;
		k->dci_bf_size = bf;
	}
	if (off == k->dci_reg_off && bf == k->dci_bf_size)
		return 0;
	KR_ERR("pool",
	       "UAR page %u has its doorbell at 0x%x (BlueFlame %u), the others at 0x%x (%u)",
	       q->uar->page_id, off, bf, k->dci_reg_off, k->dci_bf_size);
	keeper_qp_uar_free(q);
	return -EPROTO;
}

/*
 * q as slot i of kind (KR_SLOT_DCI or KR_SLOT_RC) of tenant t: its UAR page
 * (fenced) and its QP and CQ over qbuf and cqbuf in the zone. 0, or the
 * error with nothing of it left.
 */
static int slot_qp_create(struct kr_keeper *k, struct kr_keeper_tenant *t, struct kr_keeper_qp *q,
			  uint32_t kind, uint32_t i, uint8_t *qbuf, uint8_t *cqbuf)
{
	int rc;

	q->index = i;
	q->tenant = t->idx;
	q->kind = kind;
	rc = slot_uar_alloc(k, q);
	if (!rc)
		rc = kr_keeper_qp_create(k, q, kind == KR_SLOT_DCI ? KR_DEVX_QP_DCI : KR_DEVX_QP_RC,
					 t->pd.pdn, keeper_qp_uar(t, q), qbuf, cqbuf);
	if (rc)
		keeper_qp_uar_free(q);
	return rc;
}

/*
 * kr_keeper_dci_build() - DCI i of tenant t, in RTS, described in the zone
 * and marked FREE in the segment (the caller puts it in the free ring).
 * Returns 0 or the devx error.
 */
int kr_keeper_dci_build(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t i)
{
	struct kr_keeper_qp *q = &t->dci[i];
	struct kr_pool_slot *s = kr_seg_dci(k->seg, t->idx, i);
	/* its block of the zone: QP buffer, CQ buffer, up to the next DCI's */
	uint8_t *qbuf = t->zone + kr_keeper_zone_dci_qp_off(i);
	uint8_t *cqbuf = t->zone + kr_keeper_zone_dci_cq_off(i);
	uint8_t *end = t->zone + kr_keeper_zone_dci_qp_off(i + 1);
	int rc;

	rc = slot_qp_create(k, t, q, KR_SLOT_DCI, i, qbuf, cqbuf);
	if (rc)
		return rc;
	/* fenced: its rings and UAR page become the kmod-min slot its holders map */
	rc = kr_keeper_krmin_reg(k, q, qbuf, (uint64_t)(cqbuf - qbuf), (uint64_t)(end - qbuf));
	if (!rc)
		rc = kr_keeper_dci_up(k, q, 0);
	if (rc) {
		kr_keeper_qp_destroy(k, q);
		s->state = KR_SLOT_BROKEN;
		return rc;
	}
	dci_describe(t, i);
	s->qpn = q->qp.qpn;
	s->state = KR_SLOT_FREE;
	return 0;
}

/* kr_keeper_rc_build() - spare RC QP i, parked in INIT, described. 0 or the devx error. */
int kr_keeper_rc_build(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t i)
{
	struct kr_keeper_qp *q = &t->rc[i];
	struct kr_pool_slot *s = kr_seg_rc(k->seg, t->idx, i);
	uint8_t *qbuf = t->zone + kr_keeper_zone_rc_qp_off(&k->cfg, i);
	uint8_t *cqbuf = t->zone + kr_keeper_zone_rc_cq_off(&k->cfg, i);
	uint8_t *end = t->zone + kr_keeper_zone_rc_qp_off(&k->cfg, i + 1);
	int rc;

	rc = slot_qp_create(k, t, q, KR_SLOT_RC, i, qbuf, cqbuf);
	if (rc)
		return rc;
	/* fenced: its block a kmod-min slot, as a DCI's */
	rc = kr_keeper_krmin_reg(k, q, qbuf, (uint64_t)(cqbuf - qbuf), (uint64_t)(end - qbuf));
	if (!rc)
		rc = kr_keeper_rc_park(k, q);
	if (rc) {
		kr_keeper_qp_destroy(k, q);
		s->state = KR_SLOT_BROKEN;
		return rc;
	}
	qp_describe(t, q, kr_keeper_zone_rc(t, i));
	s->qpn = q->qp.qpn;
	s->link = KR_LINK_NONE;
	s->state = KR_SLOT_FREE;
	return 0;
}

/*
 * kr_keeper_ctl_build() - the tenant's control DCI in RTS, rings in the
 * keeper zone: what the keeper sends pairing messages with (keeper_pair.c).
 * 0 or the devx error.
 */
int kr_keeper_ctl_build(struct kr_keeper *k, struct kr_keeper_tenant *t)
{
	struct kr_keeper_qp *q = &t->ctl;
	int rc;

	q->index = UINT32_MAX;
	q->tenant = t->idx;
	rc = kr_keeper_qp_create(k, q, KR_DEVX_QP_DCI, t->pd.pdn, t->uar,
				 t->kzone + kr_keeper_kzone_ctl_off(),
				 t->kzone + kr_keeper_kzone_ctl_cq_off());
	if (rc)
		return rc;
	rc = kr_keeper_dci_up(k, q, 0);
	if (rc)
		kr_keeper_qp_destroy(k, q);
	t->ctl_broken = false;
	return rc;
}

/*
 * kr_keeper_dci_reset() - bring a DCI the keeper took back to RTS, empty.
 * Returns 0, or the command error (the caller marks the slot BROKEN).
 */
int kr_keeper_dci_reset(struct kr_keeper *k, struct kr_keeper_qp *q)
{
	struct kr_keeper_tenant *t = &k->tenant[q->tenant];
	struct kr_devx_qp_info info;
	uint32_t seen, psn;
	int rc;

	rc = kr_keeper_qp_quiesce(q, &psn, &info, &seen);
	if (rc)
		return rc;
	rc = kr_keeper_dci_up(k, q, psn);
	if (rc)
		return rc;
	q->free_pi = 0; /* 2RST zeroed its doorbell record */
	if (q != &t->ctl) /* the control DCI has no descriptor: no job sees it */
		dci_describe(t, q->index);
	k->seg->resets++;
	KR_DBG("pool", "tenant %u DCI %u (qpn 0x%x) reset at psn 0x%x, %u CQEs over the lease",
	       q->tenant, q->index, q->qp.qpn, psn, seen);
	return 0;
}

/*
 * kr_keeper_rc_reset() - bring an RC QP a job held (in whatever state the
 * connect left it) back to INIT, empty: query, 2RST, drain its CQ,
 * RST->INIT. Returns 0, or the command error (the caller rebuilds the QP:
 * one that cannot even be queried is not trusted again).
 */
int kr_keeper_rc_reset(struct kr_keeper *k, struct kr_keeper_qp *q)
{
	struct kr_devx_qp_info info;
	uint32_t seen;
	int rc;

	rc = kr_keeper_qp_quiesce(q, NULL, &info, &seen);
	if (rc)
		return rc;
	rc = kr_keeper_rc_park(k, q);
	if (rc)
		return rc;
	qp_describe(&k->tenant[q->tenant], q, kr_keeper_zone_rc(&k->tenant[q->tenant], q->index));
	k->seg->resets++;
	KR_DBG("pool",
	       "tenant %u RC %u (qpn 0x%x) reset to INIT from state %u, %u CQEs over the lease",
	       q->tenant, q->index, q->qp.qpn, info.state, seen);
	return 0;
}

void kr_keeper_qp_destroy(struct kr_keeper *k, struct kr_keeper_qp *q)
{
	if (!q->built)
		return;
	kr_keeper_krmin_unreg(k, q); /* unpinned before its memory is reused */
	kr_keeper_qp_cmd_destroy(q);
	keeper_qp_uar_free(q); /* no job maps it: the slot is gone */
	q->built = false;
}
