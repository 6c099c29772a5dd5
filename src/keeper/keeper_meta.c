/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The keeper's side of the MetaServer service (src/keeper/meta): the
 * cluster key, the table's memory and its target (PD, DCT, MR), this node's
 * row, and the MetaServer list written into every tenant zone.
 *
 * The keeper tells the service one way: kr_meta_own_set when a launch binds
 * or leaves or a port is bound or unbound (kr_keeper_meta_changed: the row
 * changes nowhere else); it takes the list
 * the service keeps on the tick (kr_keeper_meta_tick) and writes it into the
 * zones under zone_lock, trying again on the next tick while a zone is being
 * renewed, so that the event loop never waits for a renewal.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_memzone.h>
#include <sodium.h>

#include "common/kr_log.h"
#include "keeper/keeper.h"
#include "keeper/meta/meta.h"

#define KR_META_DEFAULT_NODES 16384u

struct kr_keeper_meta {
	const struct rte_memzone *mz;	/* the table */
	struct kr_keeper_tenant target; /* the table's PD, UAR, SRQ and DCT (no jobs) */
	struct kr_devx_mr mr;
	bool mr_ok;
	struct kr_meta_key key; /* --cluster-key, or none */
	struct kr_meta *svc;
	uint32_t list_gen; /* the list as last taken */
	struct kr_dct_meta_addr list[KR_DCT_MAX_META];
	uint32_t nlist;
	bool list_due; /* taken, not yet in every zone */
};

static uint32_t meta_nodes(const struct kr_keeper_cfg *cfg)
{
	return cfg->max_nodes ? cfg->max_nodes : KR_META_DEFAULT_NODES;
}

/* Port slots per row: as many as this keeper has endpoints per tenant. */
static uint32_t meta_row_ports(const struct kr_keeper_cfg *cfg)
{
	return cfg->ports < KR_META_MSG_PORTS ? cfg->ports : KR_META_MSG_PORTS;
}

uint64_t kr_keeper_meta_hugepage_bytes(const struct kr_keeper_cfg *cfg)
{
	if (!cfg->metaserver)
		return 0;
	/* the table, and one page for the memzone's header in front of it */
	return kr_keeper_pages_len(
		   kr_meta_table_bytes(meta_nodes(cfg), cfg->tenants + meta_row_ports(cfg))) +
	       KR_POOL_PAGE + kr_keeper_pages_len(kr_keeper_kzone_size(cfg));
}

/* kr_keeper_meta_own() - see keeper.h. */
void kr_keeper_meta_own(struct kr_keeper *k, struct kr_meta_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->magic = KR_META_MSG_MAGIC;
	m->version = KR_META_MSG_VERSION;
	m->type = KR_META_REGISTER;
	m->node_id = k->cfg.node_id;
	m->ntenants = k->cfg.tenants;
	m->addr = k->ctx->port.addr; /* not from a zone: a renewal remaps it */
	/* launches bind and leave on the event loop, under cmd_lock */
	pthread_mutex_lock(&k->cmd_lock);
	for (uint32_t t = 0; t < k->cfg.tenants; t++) {
		const struct kr_keeper_tenant *kt = &k->tenant[t];

		m->t[t].dctn = kt->bound && kt->dct_ok ? kt->dct.dctn : 0;
		m->t[t].tag = kt->bound && kt->dct_ok ? kt->launch_tag : 0;
	}
	kr_keeper_ports_publish(k, m);
	pthread_mutex_unlock(&k->cmd_lock);
}

/* The list into every tenant zone, under its meta_seq; false while a zone is being renewed. */
static bool meta_list_write(struct kr_keeper *k, const struct kr_keeper_meta *d)
{
	/* a slot being renewed gets new zone pages under zone_lock (carrying the list) */
	if (pthread_mutex_trylock(&k->zone_lock))
		return false;
	for (uint32_t t = 0; t < k->cfg.tenants; t++) {
		struct kr_dct_zone *dz =
		    (struct kr_dct_zone *)(k->tenant[t].zone + kr_keeper_zone_dct_off(&k->cfg));

		__atomic_store_n(&dz->meta_seq, dz->meta_seq + 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		memcpy(dz->meta, d->list, d->nlist * sizeof(d->list[0]));
		dz->nmeta = d->nlist;
		__atomic_store_n(&dz->meta_seq, dz->meta_seq + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&k->zone_lock);
	return true;
}

/* kr_keeper_meta_tick() - see keeper.h. */
void kr_keeper_meta_tick(struct kr_keeper *k)
{
	struct kr_keeper_meta *d = k->meta;

	if (!d)
		return;
	if (kr_meta_list_take(d->svc, &d->list_gen, d->list, &d->nlist))
		d->list_due = true;
	if (d->list_due && meta_list_write(k, d))
		d->list_due = false;
}

/* kr_keeper_meta_changed() - see keeper.h. */
void kr_keeper_meta_changed(struct kr_keeper *k)
{
	struct kr_keeper_meta *d = k->meta;
	struct kr_meta_msg own;

	if (!d)
		return;
	kr_keeper_meta_own(k, &own);
	kr_meta_own_set(d->svc, &own);
}

/* The table's memory and target, and the MR jobs READ it through. */
static int meta_table_build(struct kr_keeper *k, struct kr_keeper_meta *d, struct kr_meta_cfg *mc)
{
	uint64_t len;
	int rc;

	mc->max_nodes = meta_nodes(&k->cfg);
	mc->ntenants = k->cfg.tenants;
	mc->nports = meta_row_ports(&k->cfg);
	len = kr_meta_table_bytes(mc->max_nodes, mc->ntenants + mc->nports);
	d->mz = kr_keeper_zone_reserve("kr_meta", len);
	if (!d->mz)
		return -ENOMEM;
	rc = kr_keeper_target_build(k, &d->target, "kr_meta_target", kr_meta_table_key(&d->key),
				    KR_ACCESS_REMOTE_READ);
	if (rc)
		return rc;
	rc = kr_devx_mr_reg(k->ctx, &d->target.pd, d->mz->addr, len, KR_ACCESS_REMOTE_READ, &d->mr);
	if (rc)
		return rc;
	d->mr_ok = true;
	mc->table = d->mz->addr;
	mc->table_dctn = d->target.dct.dctn;
	mc->table_rkey = d->mr.rkey;
	return 0;
}

/* kr_keeper_meta_start() - see keeper.h. */
int kr_keeper_meta_start(struct kr_keeper *k)
{
	struct kr_keeper_meta *d;
	struct kr_meta_cfg mc = {0};
	struct kr_meta_msg own;
	int rc;

	if (!k->cfg.metaserver && !k->cfg.meta_addr[0])
		return 0;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	k->meta = d;
	if (k->cfg.cluster_key[0]) {
		rc = kr_meta_key_load(k->cfg.cluster_key, &d->key);
		if (rc)
			return rc;
	} else if (!k->cfg.insecure_meta) {
		KR_ERR("dct",
		       "--%s without --cluster-key: any user who can send it a datagram could "
		       "register a node and redirect connects to itself; give every keeper of the "
		       "cluster the same key file (64 hex digits, mode 0600), or "
		       "--insecure-metaserver",
		       k->cfg.metaserver ? "metaserver" : "metaserver-addr");
		return -EPERM;
	} else {
		KR_WARN("dct",
			"--insecure-metaserver: MetaServer datagrams are not authenticated; "
			"any user who reaches the socket can redirect this cluster's connects");
	}
	mc.node_id = k->cfg.node_id;
	mc.addr = k->ctx->port.addr;
	mc.key = &d->key;
	mc.drops = k->seg->meta_drops;
	mc.listen = k->cfg.meta_listen;
	mc.addrs = k->cfg.meta_addr;
	if (k->cfg.metaserver) {
		rc = meta_table_build(k, d, &mc);
		if (rc)
			return rc;
	}
	kr_keeper_meta_own(k, &own);
	rc = kr_meta_start(&mc, &own, &d->svc);
	if (rc)
		return rc;
	/* the first round's list, before any job attaches */
	if (kr_meta_list_take(d->svc, &d->list_gen, d->list, &d->nlist))
		d->list_due = !meta_list_write(k, d);
	return 0;
}

/* kr_keeper_meta_stop() - see keeper.h. */
void kr_keeper_meta_stop(struct kr_keeper *k)
{
	struct kr_keeper_meta *d = k->meta;

	if (!d)
		return;
	kr_meta_stop(d->svc); /* before the table it serves goes */
	if (d->mr_ok)
		kr_devx_mr_dereg(&d->mr);
	kr_keeper_tenant_destroy(k, &d->target);
	if (d->mz)
		rte_memzone_free(d->mz);
	sodium_memzero(&d->key, sizeof(d->key));
	free(d);
	k->meta = NULL;
}
