/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive endpoints: what a job binds a port to, so that two-sided messages
 * reach buffers it posted without the keeper on the path.
 *
 * An endpoint is an SRQ and its CQ, warm in the tenant zone's job-writable
 * pages (built with the tenant, like its DCIs), and a DC target the keeper
 * creates over them when a job binds a port (one firmware command, as a
 * kr_reg_mr) and destroys when the port is unbound or its job goes. Its DC
 * key is the binding's own (kr_port_dc_key: the launch's key, the port and
 * the binding's generation, one counter per tenant slot, so that a port
 * bound again on another endpoint never repeats a generation it had on the
 * first): a sender still aiming at an earlier binding
 * is dropped by the DC target (a key violation) instead of landing in the
 * next binder's buffers, whether or not the device reused the DCT number
 * (the sim does, and a ConnectX's firmware may).
 *
 * States (ep->state, atomic; keeper-private):
 *   FREE   queues empty and ready, no DCT: the loop may bind it
 *   BOUND  a DCT over it, owner_job's; the loop unbinds or reclaims it
 *   DIRTY  given back: the worker rebuilds its SRQ and CQ on zeroed memory
 *          (a dead binder's WQEs and CQEs must not reach the next one), FREE
 * Ports belong to a launch: a port number is unique within a tenant slot,
 * and another launch's port P is another endpoint, as the MetaServer row
 * and the node cache are per launch (a sender resolves a port of its own
 * launch only). So no other user can take a launch's port first.
 *
 * Publication (kr_keeper_ports_publish): a registration carries at most
 * KR_META_MSG_PORTS ports and a MetaServer row holds its own --ports; the
 * bound ports go in round-robin across launches (each launch's first, then
 * each one's second...), so a launch that binds many ports never hides
 * another's, and what one launch publishes is bounded by its endpoints.
 *
 * Fenced (kmod-min): each endpoint's CQ and SRQ pages are a slot of their
 * own, granted to the binder's process at bind and revoked before the DCT
 * goes, so a job maps only the endpoints it has bound (keeper_krmin.c).
 *
 * Trust: the binder names its sender table (address, rkey); the keeper
 * checks that one of the binder's own MRs covers it with the rights senders
 * need, and never touches it. What jobs write in the SRQ and CQ pages is
 * read by the device only (the sim engine bounds it, sim_recv.c).
 */
#include <errno.h>
#include <string.h>

#include "keeper/meta/meta.h"
#include "common/kr_log.h"
#include "keeper/keeper.h"

#define EP_DCT_ACCESS (KR_ACCESS_REMOTE_WRITE | KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC)
#define EP_TABLE_HDR  64u /* struct kr_port_table's header (src/job/virtqp) */
#define EP_SLOT_BYTES 16u
#define EP_MAX_SLOTS  1024u

static struct kr_zone_ep *ep_desc(const struct kr_keeper_tenant *t, uint32_t e)
{
	return (struct kr_zone_ep *)(t->zone + kr_keeper_zone_ep_off()) + e;
}

/* A reader seeing an odd seq retries: it never reads a half-written entry. */
static void ep_desc_begin(struct kr_zone_ep *d)
{
	__atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static void ep_desc_end(struct kr_zone_ep *d)
{
	__atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELEASE);
}

/* kr_keeper_ep_build() - see keeper.h. */
int kr_keeper_ep_build(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t e)
{
	struct kr_keeper_ep *ep = &t->ep[e];
	struct kr_zone_ep *d = ep_desc(t, e);
	struct kr_devx_cq_attr ca = {.ncqe = KR_POOL_PORT_WQE, .uar = t->uar};
	struct kr_devx_srq_attr sa;
	uintptr_t base = (uintptr_t)t->zone;
	int rc;

	kr_keeper_ep_srq_attr(&sa);
	sa.pdn = t->pd.pdn;
	ca.buf = t->zone + kr_keeper_zone_ep_cq_off(&k->cfg, e);
	ca.buf_len = kr_keeper_zone_ep_srq_off(&k->cfg, e) - kr_keeper_zone_ep_cq_off(&k->cfg, e);
	sa.buf = t->zone + kr_keeper_zone_ep_srq_off(&k->cfg, e);
	sa.buf_len = kr_devx_srq_buf_size(&sa);
	memset(ca.buf, 0, ca.buf_len);
	memset(sa.buf, 0, sa.buf_len);
	rc = kr_devx_cq_create(k->ctx, &ca, &ep->cq);
	if (rc)
		return rc;
	rc = kr_devx_srq_create(k->ctx, &sa, &ep->srq);
	if (rc) {
		kr_devx_cq_destroy(&ep->cq);
		return rc;
	}
	ep->built = true;
	/* fenced: its binder maps the CQ and SRQ pages, nothing else, through kmod-min */
	rc = kr_keeper_krmin_reg_mem(k, t->idx, ca.buf, ca.buf_len, sa.buf,
				     kr_keeper_zone_ep_block() - ca.buf_len, &ep->krmin_slot_plus1);
	if (rc) {
		KR_ERR("pool", "tenant %u endpoint %u: kmod-min slot: %s", t->idx, e,
		       strerror(-rc));
		return rc;
	}
	ep_desc_begin(d);
	d->port = 0;
	d->owner_job = 0;
	d->dctn = 0;
	d->srqn = ep->srq.srqn;
	d->cqn = ep->cq.cqn;
	d->srq_nwqe = ep->srq.nwqe;
	d->srq_log_stride = ep->srq.log_stride;
	d->ncqe = ep->cq.ncqe;
	d->srq_off = (uintptr_t)ep->srq.wq_buf - base;
	d->srq_dbrec_off = (uintptr_t)ep->srq.dbrec - base;
	d->cqe_off = (uintptr_t)ep->cq.cqes - base;
	d->cq_dbrec_off = (uintptr_t)ep->cq.dbrec - base;
	ep_desc_end(d);
	__atomic_store_n(&ep->state, KR_EP_FREE, __ATOMIC_RELEASE);
	return 0;
}

/* kr_keeper_ep_destroy() - see keeper.h. */
void kr_keeper_ep_destroy(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t e)
{
	struct kr_keeper_ep *ep = &t->ep[e];

	kr_keeper_krmin_unreg_slot(k, &ep->krmin_slot_plus1);
	if (ep->dct_ok) {
		kr_devx_dct_destroy(&ep->dct);
		ep->dct_ok = false;
	}
	if (ep->built) {
		kr_devx_srq_destroy(&ep->srq);
		kr_devx_cq_destroy(&ep->cq);
		ep->built = false;
	}
	ep->state = KR_EP_DIRTY;
}

/* kr_keeper_ep_restore() - see keeper.h (the worker). */
int kr_keeper_ep_restore(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t e)
{
	struct kr_keeper_ep *ep = &t->ep[e];
	int rc;

	if (__atomic_load_n(&ep->state, __ATOMIC_ACQUIRE) != KR_EP_DIRTY)
		return 0;
	pthread_mutex_lock(&k->cmd_lock);
	kr_keeper_ep_destroy(k, t, e);
	rc = kr_keeper_ep_build(k, t, e); /* FREE on success */
	pthread_mutex_unlock(&k->cmd_lock);
	if (rc) {
		KR_ERR_RATELIMITED("pool", "tenant %u endpoint %u: rebuild failed: %s", t->idx, e,
				   strerror(-rc));
		return rc;
	}
	return 1;
}

/* The endpoint bound to port on this node, in any tenant; NULL when none. */
/* The endpoint of t's launch bound to port, or NULL. */
static struct kr_keeper_ep *port_find(const struct kr_keeper *k, struct kr_keeper_tenant *t,
				      uint32_t port)
{
	for (uint32_t e = 0; t->ep && e < k->cfg.ports; e++) {
		struct kr_keeper_ep *ep = &t->ep[e];

		if (ep->port == port &&
		    __atomic_load_n(&ep->state, __ATOMIC_ACQUIRE) == KR_EP_BOUND)
			return ep;
	}
	return NULL;
}

/* The binder's MR that covers its table with the rights senders need; false when none. */
static bool table_covered(const struct kr_keeper_conn *c, const struct kr_msg_bind *req)
{
	uint64_t len = EP_TABLE_HDR + (uint64_t)req->nslots * EP_SLOT_BYTES;

	for (uint32_t i = 0; i < KR_POOL_MAX_JOB_MRS; i++) {
		const struct kr_devx_mr *mr = &c->mrs[i].mr;
		uint64_t a = (uintptr_t)mr->addr;

		if (c->mrs[i].used && mr->rkey == req->table_rkey && req->table_va >= a &&
		    len <= mr->len && req->table_va - a <= mr->len - len &&
		    (mr->access & (KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC)) ==
			(KR_ACCESS_REMOTE_READ | KR_ACCESS_REMOTE_ATOMIC))
			return true;
	}
	return false;
}

/* kr_keeper_port_bind() - see keeper.h. */
int kr_keeper_port_bind(struct kr_keeper *k, struct kr_keeper_conn *c,
			const struct kr_msg_bind *req, struct kr_msg_reply *rep)
{
	struct kr_keeper_tenant *t;
	struct kr_devx_dct_attr da;
	struct kr_keeper_ep *ep = NULL;
	struct kr_zone_ep *d;
	uint32_t job, e;
	int rc;

	if (!c->job_plus1)
		return -EPERM;
	if (!req->port || req->port > 0xffff || !req->nslots || req->nslots > EP_MAX_SLOTS ||
	    (req->table_va & 7u) || req->index || req->gen || req->rsvd)
		return -EINVAL;
	if (!table_covered(c, req))
		return -EINVAL;
	job = c->job_plus1 - 1;
	t = &k->tenant[kr_seg_job(k->seg, job)->tenant];
	if (!t->bound || !t->ep)
		return -EINVAL;
	if (port_find(k, t, req->port))
		return -EADDRINUSE; /* by its own launch */
	rc = kr_keeper_quota_port(k, t->idx, t->uid);
	if (rc)
		return rc;
	for (e = 0; e < k->cfg.ports; e++) {
		if (__atomic_load_n(&t->ep[e].state, __ATOMIC_ACQUIRE) == KR_EP_FREE) {
			ep = &t->ep[e];
			break;
		}
	}
	if (!ep)
		return k->cfg.ports ? -ENOSPC : -EOPNOTSUPP;

	/* fenced: a token for the endpoint's pages that only the binder's process can claim */
	rc = kr_keeper_krmin_grant_slot(k, ep->krmin_slot_plus1, c->pid, &rep->token);
	if (rc)
		return rc;
	memset(&da, 0, sizeof(da));
	da.pdn = t->pd.pdn;
	da.cq = &ep->cq;
	da.srq = &ep->srq;
	da.dc_key = kr_port_dc_key(t->dc_key, req->port, t->port_gen + 1); /* this binding's */
	da.access = EP_DCT_ACCESS;
	kr_keeper_dct_path(k, &da);
	pthread_mutex_lock(&k->cmd_lock); /* the worker's commands; the registration reads */
	rc = kr_devx_dct_create(k->ctx, &da, &ep->dct);
	if (!rc) {
		ep->dct_ok = true;
		ep->port = req->port;
		ep->owner_job = job + 1;
		ep->gen = ++t->port_gen;
		ep->nslots = req->nslots;
		ep->table_va = req->table_va;
		ep->table_rkey = req->table_rkey;
		__atomic_store_n(&ep->state, KR_EP_BOUND, __ATOMIC_RELEASE);
		kr_seg_tenant(k->seg, t->idx)->ports_bound++;
	}
	pthread_mutex_unlock(&k->cmd_lock);
	if (rc) {
		KR_ERR("pool", "tenant %u: no DC target for port %u: %s", t->idx, req->port,
		       strerror(-rc));
		kr_keeper_krmin_revoke_slot(k, ep->krmin_slot_plus1); /* the grant goes too */
		rep->token = 0;
		return rc;
	}

	d = ep_desc(t, e);
	ep_desc_begin(d);
	d->port = req->port;
	d->dctn = ep->dct.dctn;
	d->gen = ep->gen;
	d->owner_job = job + 1;
	d->user_index = ep->dct.user_index;
	d->nslots = req->nslots;
	d->table_va = req->table_va;
	d->table_rkey = req->table_rkey;
	ep_desc_end(d);
	rep->index = e;
	rep->gen = ep->gen;
	rep->qpn = ep->dct.dctn;
	KR_INFO("pool", "tenant %u: job %u bound port %u (endpoint %u, dct 0x%x)", t->idx, job,
		req->port, e, ep->dct.dctn);
	kr_keeper_meta_changed(k); /* other nodes find it through the MetaServer */
	return 0;
}

/* Loop: the DCT goes at once (no more messages land), the queues to the worker. */
static void ep_unbind(struct kr_keeper *k, struct kr_keeper_tenant *t, uint32_t e)
{
	struct kr_keeper_ep *ep = &t->ep[e];
	struct kr_zone_ep *d = ep_desc(t, e);

	/* its binder's mapping goes first (SIGBUS if it still touches it) */
	kr_keeper_krmin_revoke_slot(k, ep->krmin_slot_plus1);
	pthread_mutex_lock(&k->cmd_lock);
	kr_devx_dct_destroy(&ep->dct);
	if (ep->port && kr_seg_tenant(k->seg, t->idx)->ports_bound)
		kr_seg_tenant(k->seg, t->idx)->ports_bound--;
	ep->dct_ok = false;
	ep->port = 0;
	ep->owner_job = 0;
	__atomic_store_n(&ep->state, KR_EP_DIRTY, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&k->cmd_lock);
	ep_desc_begin(d);
	d->port = 0;
	d->dctn = 0;
	d->owner_job = 0;
	d->nslots = 0;
	d->table_va = 0;
	d->table_rkey = 0;
	ep_desc_end(d);
	kr_keeper_worker_wake(k);
	kr_keeper_meta_changed(k);
}

/* kr_keeper_port_unbind() - see keeper.h. */
int kr_keeper_port_unbind(struct kr_keeper *k, struct kr_keeper_conn *c,
			  const struct kr_msg_bind *req)
{
	struct kr_keeper_tenant *t;
	struct kr_keeper_ep *ep;

	if (!c->job_plus1)
		return -EPERM;
	t = &k->tenant[kr_seg_job(k->seg, c->job_plus1 - 1)->tenant];
	if (req->nslots || req->table_va || req->table_rkey || req->rsvd || !t->ep ||
	    req->index >= k->cfg.ports)
		return -EINVAL;
	ep = &t->ep[req->index];
	if (__atomic_load_n(&ep->state, __ATOMIC_ACQUIRE) != KR_EP_BOUND ||
	    ep->owner_job != c->job_plus1 || ep->gen != req->gen || ep->port != req->port)
		return -EINVAL;
	ep_unbind(k, t, req->index);
	return 0;
}

/* kr_keeper_port_reclaim() - see keeper.h. */
uint32_t kr_keeper_port_reclaim(struct kr_keeper *k, uint32_t job)
{
	struct kr_keeper_tenant *t = &k->tenant[kr_seg_job(k->seg, job)->tenant];
	uint32_t n = 0;

	for (uint32_t e = 0; t->ep && e < k->cfg.ports; e++)
		if (__atomic_load_n(&t->ep[e].state, __ATOMIC_ACQUIRE) == KR_EP_BOUND &&
		    t->ep[e].owner_job == job + 1) {
			ep_unbind(k, t, e);
			n++;
		}
	return n;
}

/* kr_keeper_ports_publish() - see keeper.h. */
void kr_keeper_ports_publish(const struct kr_keeper *k, struct kr_meta_msg *m)
{
	bool more = true;

	/* round r takes each launch's r-th bound port: no launch hides another's */
	for (uint32_t r = 0; more && r < k->cfg.ports && m->nports < KR_META_MSG_PORTS; r++) {
		more = false;
		for (uint32_t i = 0; i < k->cfg.tenants && m->nports < KR_META_MSG_PORTS; i++) {
			const struct kr_keeper_tenant *t = &k->tenant[i];
			const struct kr_keeper_ep *ep = NULL;
			uint32_t seen = 0;

			for (uint32_t e = 0; t->bound && t->ep && e < k->cfg.ports && !ep; e++)
				if (__atomic_load_n(&t->ep[e].state, __ATOMIC_ACQUIRE) ==
					KR_EP_BOUND &&
				    seen++ == r)
					ep = &t->ep[e];
			if (!ep)
				continue;
			more = true;
			m->p[m->nports++] =
			    (struct kr_meta_msg_port){.port = ep->port,
						      .dctn = ep->dct.dctn,
						      .tag = t->launch_tag,
						      .table_va = ep->table_va,
						      .table_rkey = ep->table_rkey,
						      .nslots = (uint16_t)ep->nslots,
						      .gen = (uint16_t)ep->gen};
		}
	}
}
