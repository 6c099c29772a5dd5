/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Job side: kr_dct_resolve(), kr_dct_resolve_port(), kr_dct_invalidate() and
 * kr_dct_cached().
 * The caller's own node comes from its tenant zone (no syscall); another
 * node from the node cache in the zone (static peers, earlier lookups), else
 * from a MetaServer; another node's port always from a MetaServer (the same
 * READ brings the node's record).
 */
#include <errno.h>
#include <stdatomic.h>
#include <pthread.h>
#include <string.h>

#include <krcore/krcore.h>

#include "job/job.h"
#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "job/job.h"

#define KR_DCT_READ_TRIES 16u			 /* torn slot: READs per replica */
#define KR_META_ROW_MAX	  (KR_META_MSG_TENANTS + KR_META_MSG_PORTS) /* slots a row may have */
#define KR_DCT_READ_NS	  (200ull * 1000 * 1000) /* a replica that has not answered is down */

/* The dct block of ctx's tenant zone, checked against the mapping; NULL when absent. */
static struct kr_dct_zone *job_dct_zone(struct kr_ctx *ctx)
{
	struct kr_zone_hdr *z = ctx->zone;
	struct kr_dct_zone *dz;

	if (!z || !z->dct_off || z->dct_off > ctx->zone_len ||
	    ctx->zone_len - z->dct_off < kr_dct_zone_bytes())
		return NULL;
	dz = (struct kr_dct_zone *)((uint8_t *)z + z->dct_off);
	if (__atomic_load_n(&dz->magic, __ATOMIC_ACQUIRE) != KR_DCT_ZONE_MAGIC)
		return NULL;
	/* the zone is job-writable: re-check what indexes it */
	if (dz->nsets != KR_DCT_CACHE_SETS || dz->ways != KR_DCT_CACHE_WAYS ||
	    dz->entries_off > ctx->zone_len ||
	    ctx->zone_len - dz->entries_off <
		(uint64_t)KR_DCT_CACHE_SETS * KR_DCT_CACHE_WAYS * sizeof(struct kr_dct_centry) ||
	    dz->hands_off > ctx->zone_len ||
	    ctx->zone_len - dz->hands_off < (uint64_t)KR_DCT_CACHE_SETS * 4)
		return NULL;
	return dz;
}

/*
 * How a lookup READs: through the reader kr_connect lends (ctx->look_read:
 * a vQP to the MetaServer on the calling thread's DCI, into the heap's
 * library bytes), so a fresh process's uncached first connect leases
 * nothing and allocates nothing for it. Without one (the lookup called
 * before any kr_connect, or after a READ that never finished), the lookup
 * DCI: one per process (one attachment per process), leased at the first
 * such miss and kept; separate from the vQPs' DCIs so a lookup never mixes
 * into their completion streams. Given back when a READ fails or times out
 * (the keeper resets it) and leased again at the next miss.
 */
static struct {
	pthread_mutex_t lock;
	struct kr_ctx *ctx; /* the attachment the state below belongs to */
	uint64_t attach_id;
	bool leased;
	struct kr_lease lease;
	struct kr_dct_slot *buf; /* kr_malloc: in the heap MR, one row (KR_META_ROW_MAX) */
	uint64_t wr_id;
	struct kr_dct_look_stats stats;
} g_look = {.lock = PTHREAD_MUTEX_INITIALIZER};

/*
 * Nodes this process told the keeper to forget: for KR_DCT_FORGET_NS their
 * node cache entry is not trusted (the report is one-way, the keeper drops
 * it a little later), and what this process reads from the MetaServer for
 * them meanwhile is used instead, so one error costs one READ, not one per
 * connect. The hit path only reads `live` while nothing was forgotten.
 */
#define KR_DCT_FORGOT	 16u
#define KR_DCT_FORGET_NS 1000000000ull

static struct {
	pthread_mutex_t lock;
	_Atomic uint32_t live; /* entries in e[] (some may have expired) */
	struct {
		uint32_t node_id; /* 0: free */
		uint64_t until_ns;
		bool has_rec;
		struct kr_dct_rec rec; /* read from the MetaServer since */
	} e[KR_DCT_FORGOT];
} g_fresh = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* g_fresh.lock held: free what expired; the entry of node_id or NULL. */
static void *fresh_find_locked(uint32_t node_id, uint64_t now)
{
	void *hit = NULL;

	for (uint32_t i = 0; i < KR_DCT_FORGOT; i++) {
		if (!g_fresh.e[i].node_id)
			continue;
		if (g_fresh.e[i].until_ns <= now) {
			g_fresh.e[i].node_id = 0;
			atomic_fetch_sub(&g_fresh.live, 1);
		} else if (g_fresh.e[i].node_id == node_id) {
			hit = &g_fresh.e[i];
		}
	}
	return hit;
}

/* node_id's cache entry is suspect from now on (one entry per node; the oldest goes). */
static void fresh_forget(uint32_t node_id)
{
	uint64_t now = kr_now_ns(), oldest = UINT64_MAX;
	uint32_t v = 0;

	pthread_mutex_lock(&g_fresh.lock);
	if (!fresh_find_locked(node_id, now)) {
		for (uint32_t i = 0; i < KR_DCT_FORGOT; i++)
			if (g_fresh.e[i].until_ns < oldest) {
				oldest = g_fresh.e[i].until_ns;
				v = i;
			}
		if (!g_fresh.e[v].node_id)
			atomic_fetch_add(&g_fresh.live, 1);
		g_fresh.e[v].node_id = node_id;
	}
	for (uint32_t i = 0; i < KR_DCT_FORGOT; i++)
		if (g_fresh.e[i].node_id == node_id) {
			g_fresh.e[i].until_ns = now + KR_DCT_FORGET_NS;
			g_fresh.e[i].has_rec = false;
		}
	pthread_mutex_unlock(&g_fresh.lock);
}

/*
 * Is node_id's cache entry suspect? 0: no (use the cache); 1: yes and *rec
 * is what this process read since; -ESTALE: yes, ask the MetaServer.
 */
static int fresh_get(uint32_t node_id, struct kr_dct_rec *rec)
{
	typeof(&g_fresh.e[0]) f;
	int rc = 0;

	if (!atomic_load_explicit(&g_fresh.live, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&g_fresh.lock);
	f = fresh_find_locked(node_id, kr_now_ns());
	if (f && f->has_rec) {
		*rec = f->rec;
		rc = 1;
	} else if (f) {
		rc = -ESTALE;
	}
	pthread_mutex_unlock(&g_fresh.lock);
	return rc;
}

/* A MetaServer READ of node_id succeeded: a suspect entry is replaced by rec. */
static void fresh_put(uint32_t node_id, const struct kr_dct_rec *rec)
{
	typeof(&g_fresh.e[0]) f;

	if (!atomic_load_explicit(&g_fresh.live, memory_order_acquire))
		return;
	pthread_mutex_lock(&g_fresh.lock);
	f = fresh_find_locked(node_id, kr_now_ns());
	if (f) {
		f->rec = *rec;
		f->has_rec = true;
	}
	pthread_mutex_unlock(&g_fresh.lock);
}

void kr_dct_look_stats_get(struct kr_dct_look_stats *st)
{
	pthread_mutex_lock(&g_look.lock);
	*st = g_look.stats;
	pthread_mutex_unlock(&g_look.lock);
}

/* g_look.lock held: drop the lookup DCI (broken or busy); the keeper resets it. */
static void look_drop(struct kr_ctx *ctx)
{
	if (g_look.leased)
		kr_lease_free(ctx, &g_look.lease);
	g_look.leased = false;
}

/* g_look.lock held: the lookup state of ctx, made fresh for a new attachment. */
static int look_prepare(struct kr_ctx *ctx)
{
	int rc;

	if (g_look.ctx != ctx || g_look.attach_id != ctx->attach_id) {
		/* a previous attachment's lease and buffer went with its detach */
		g_look.ctx = ctx;
		g_look.attach_id = ctx->attach_id;
		g_look.leased = false;
		g_look.buf = NULL;
	}
	if (!g_look.buf) {
		g_look.buf = kr_malloc(ctx, KR_META_ROW_MAX * sizeof(*g_look.buf));
		if (!g_look.buf)
			return -errno;
	}
	if (!g_look.leased) {
		rc = kr_lease_alloc(ctx, KR_LEASE_DCI, &g_look.lease);
		if (rc)
			return rc;
		g_look.leased = true;
	}
	return 0;
}

/*
 * Our launch's slot in a row copy of node_id: 0 (rec), -ENOENT (the launch
 * is not on that node), -EAGAIN (a slot torn: it may have been ours),
 * -EHOSTUNREACH (a slot that is not what the table was said to hold).
 */
static int row_pick(struct kr_ctx *ctx, const struct kr_dct_slot *row, uint32_t stride,
		    uint32_t node_id, struct kr_dct_rec *rec)
{
	bool torn = false;

	for (uint32_t t = 0; t < stride; t++) {
		struct kr_dct_slot copy;
		int rc;

		memcpy(&copy, &row[t], sizeof(copy));
		rc = kr_dct_slot_check(&copy, rec);
		if (rc == -EAGAIN)
			torn = true;
		if (rc) /* also -ENOMSG: a port slot */
			continue;
		if (rec->node_id != node_id || rec->tenant != t)
			return -EHOSTUNREACH;
		if (rec->tag == ctx->launch.tag)
			return 0;
	}
	return torn ? -EAGAIN : -ENOENT;
}

/*
 * Our launch's binding of port in the same row copy: 0 (prec), -ECONNREFUSED
 * (not there: unbound, another launch's, or not published yet), -EAGAIN (a
 * port slot torn).
 */
static int port_pick(struct kr_ctx *ctx, const struct kr_dct_slot *row, uint32_t stride,
		     uint32_t node_id, uint32_t port, struct kr_dct_port_rec *prec)
{
	bool torn = false;

	for (uint32_t t = 0; t < stride; t++) {
		struct kr_dct_slot copy;
		int rc;

		memcpy(&copy, &row[t], sizeof(copy));
		rc = kr_dct_slot_check_port(&copy, prec);
		if (rc == -EAGAIN)
			torn = true;
		if (!rc && prec->node_id == node_id && prec->port == port &&
		    prec->tag == ctx->launch.tag)
			return 0;
	}
	return torn ? -EAGAIN : -ECONNREFUSED;
}

/* Our launch's record (and port's) in a row copy of node_id; torn copies counted. */
static int row_take(struct kr_ctx *ctx, const struct kr_dct_slot *row, uint32_t stride,
		    uint32_t node_id, struct kr_dct_rec *rec, uint32_t port,
		    struct kr_dct_port_rec *prec)
{
	int rc = row_pick(ctx, row, stride, node_id, rec);

	if (!rc && port) /* with port: that port's slot too, from the same copy */
		rc = port_pick(ctx, row, stride, node_id, port, prec);
	if (rc == -EAGAIN)
		g_look.stats.torn++;
	return rc;
}

/*
 * g_look.lock held: look_read() through the reader the vQP layer lent
 * (ctx->look_read: the calling thread's DCI, no lease), into the heap's
 * library bytes (no allocator).
 */
static int look_read_lent(struct kr_ctx *ctx, const struct kr_dct_meta_addr *m, uint32_t node_id,
			  struct kr_dct_rec *rec, uint32_t port, struct kr_dct_port_rec *prec)
{
	_Static_assert(KR_META_ROW_MAX * sizeof(struct kr_dct_slot) <= KR_HEAP_LIB_BYTES,
		       "a row fits the heap's library bytes");
	struct kr_devx_dc_av av = {.dctn = m->dctn, .dc_key = m->dc_key};
	uint32_t len = m->stride * (uint32_t)sizeof(struct kr_dct_slot);
	struct kr_dct_slot *row = ctx->heap;
	int rc;

	kr_devx_dc_av_path(&av, &ctx->zone->port, &m->addr, ctx->zone->dctn, m->dctn);
	memset(row, 0, len);
	g_look.stats.reads++;
	rc = ctx->look_read(ctx, &av,
			    m->va + (uint64_t)node_id * m->stride * sizeof(struct kr_dct_slot),
			    m->rkey, row, len);
	if (rc == -ESTALE) {
		ctx->lib_buf_lost = true; /* later lookups on a DCI of their own */
		rc = -EHOSTUNREACH;
	}
	if (rc == -EAGAIN)
		g_look.stats.local_errors++;
	else if (rc == -EHOSTUNREACH)
		g_look.stats.remote_errors++;
	if (rc)
		return rc;
	return row_take(ctx, row, m->stride, node_id, rec, port, prec);
}

/*
 * g_look.lock held: one READ of node_id's row at MetaServer m. 0 (rec),
 * -ENOENT (empty, beyond the table, or not our launch), -EAGAIN (torn:
 * retry), -EHOSTUNREACH (error completion or no answer in time), -errno.
 */
static int look_read(struct kr_ctx *ctx, const struct kr_dct_meta_addr *m, uint32_t node_id,
		     struct kr_dct_rec *rec, uint32_t port, struct kr_dct_port_rec *prec)
{
	struct kr_devx_dc_av av = {.dctn = m->dctn, .dc_key = m->dc_key};
	struct kr_devx_sge sge = {.length = m->stride * (uint32_t)sizeof(*g_look.buf),
				  .lkey = kr_job_heap_lkey(ctx)};
	struct kr_devx_wr wr = {.opcode = KR_WR_RDMA_READ,
				.flags = KR_WR_SIGNALED,
				.sge = &sge,
				.num_sge = 1,
				.remote_addr = m->va + (uint64_t)node_id * m->stride *
							   sizeof(struct kr_dct_slot),
				.rkey = m->rkey,
				.av = &av};
	struct kr_devx_qp *qp;
	struct kr_devx_cq *cq;
	struct kr_devx_wc wc;
	uint64_t t0;
	int rc, n = 0;

	if (node_id >= m->max_nodes || !m->stride || m->stride > KR_META_ROW_MAX)
		return -ENOENT;
	if (ctx->look_read && !ctx->lib_buf_lost)
		return look_read_lent(ctx, m, node_id, rec, port, prec);
	rc = look_prepare(ctx);
	if (rc)
		return rc;
	rc = kr_job_dci_qp(ctx, &g_look.lease, &qp, &cq);
	if (rc) {
		g_look.leased = false;
		return rc;
	}
	kr_devx_dc_av_path(&av, &ctx->zone->port, &m->addr, ctx->zone->dctn, m->dctn);
	sge.addr = (uintptr_t)g_look.buf; /* look_prepare() allocates it on first use */
	memset(g_look.buf, 0, sge.length);
	wr.wr_id = ++g_look.wr_id;
	rc = kr_devx_qp_post_send(qp, &wr);
	if (rc) {
		look_drop(ctx);
		return rc;
	}
	kr_devx_qp_ring(qp);
	g_look.stats.reads++;
	t0 = kr_now_ns();
	while ((n = kr_devx_cq_poll(cq, &wc, 1)) == 0 && kr_wait_relax(t0) - t0 < KR_DCT_READ_NS)
		;
	if (n != 1 || wc.wr_id != wr.wr_id || wc.status != 0) {
		look_drop(ctx); /* in error, or a READ still out: the keeper resets it */
		if (n < 0)
			return n;
		/* a local error (our DCI, our buffer) is not the MetaServer's: try again */
		if (n == 1 && kr_job_look_local_err(wc.status)) {
			g_look.stats.local_errors++;
			KR_ERR_RATELIMITED("dct", "MetaServer lookup READ failed locally: %s",
					   kr_strerror(wc.status));
			return -EAGAIN;
		}
		g_look.stats.remote_errors++;
		return -EHOSTUNREACH;
	}
	return row_take(ctx, g_look.buf, m->stride, node_id, rec, port, prec);
}

/*
 * Cache miss: the first MetaServer that answers, torn reads retried; then
 * cached. With port (not 0): that port's record too (never cached).
 */
static int dct_meta_resolve(struct kr_ctx *ctx, struct kr_dct_zone *dz, uint32_t node_id,
			    struct kr_dct_rec *rec, uint32_t port, struct kr_dct_port_rec *prec)
{
	struct kr_dct_meta_addr meta[KR_DCT_MAX_META];
	uint32_t nmeta = kr_dct_meta_snapshot(dz, meta);
	bool absent = false; /* a replica answered that it has no such node */
	bool refused = false; /* a replica has the node but not the port */
	int rc = -ENOENT;

	if (!nmeta)
		return -ENOENT; /* no MetaServer: the static peers are all there is */
	pthread_mutex_lock(&g_look.lock);
	for (uint32_t i = 0; i < nmeta; i++) {
		struct kr_dct_meta_addr m = meta[i];

		rc = -EAGAIN;
		for (uint32_t try = 0; try < KR_DCT_READ_TRIES && rc == -EAGAIN; try++)
			rc = look_read(ctx, &m, node_id, rec, port, prec);
		if (rc == 0 || rc == -ENOTCONN || rc == -EPIPE)
			break;
		/* -ENOENT, -ECONNREFUSED, -EHOSTUNREACH or still torn: the next
		 * replica (one that restarted is empty until the keepers register
		 * again, one may have the port a little later than another) */
		absent |= rc == -ENOENT;
		refused |= rc == -ECONNREFUSED;
	}
	pthread_mutex_unlock(&g_look.lock);
	if (rc && rc != -ENOTCONN && rc != -EPIPE && refused)
		rc = -ECONNREFUSED;
	else if (rc && rc != -ENOTCONN && rc != -EPIPE && absent)
		rc = -ENOENT;
	if (rc == -EPIPE)
		rc = -ENOTCONN;
	if (!rc) {
		struct kr_dct_wire w;

		/* the keeper alone writes the cache: report at the next empty
		 * poll (the connect's caller is about to wait for a completion) */
		if (!kr_dct_rec_encode(rec, 0, 0, &w))
			kr_job_cache_report_later(ctx, KR_CACHE_PUT, 0, &w, sizeof(w));
		fresh_put(node_id, rec);
	} else if (rc != -ENOENT && rc != -ENOTCONN && rc != -EAGAIN && rc != -ECONNREFUSED)
		rc = -EHOSTUNREACH;
	return rc;
}

/* kr_dct_self_node() - see job.h. */
uint32_t kr_dct_self_node(struct kr_ctx *ctx)
{
	struct kr_dct_zone *dz = job_dct_zone(ctx);

	return dz ? __atomic_load_n(&dz->node_id, __ATOMIC_RELAXED) : 0;
}

int kr_dct_resolve(struct kr_ctx *ctx, uint32_t node_id, struct kr_dct_rec *rec)
{
	struct kr_dct_zone *dz;
	int fr;

	if (!ctx || !rec || ctx->observer || !ctx->zone)
		return -EINVAL;
	if (__atomic_load_n(&ctx->dead, __ATOMIC_RELAXED))
		return -ENOTCONN;
	dz = job_dct_zone(ctx);
	if (!dz)
		return -EINVAL;
	if (node_id == 0xffffffffu || node_id == dz->node_id) {
		memset(rec, 0, sizeof(*rec));
		rec->node_id = dz->node_id;
		rec->tenant = ctx->tenant;
		rec->dctn = ctx->zone->dctn;
		rec->tag = ctx->launch.tag;
		rec->addr = ctx->zone->port.addr;
		return 0;
	}
	if (node_id == 0)
		return -EINVAL;
	fr = fresh_get(node_id, rec);
	if (fr == 1 || (!fr && !kr_dct_cache_lookup(ctx->zone, dz, node_id, rec))) {
		__atomic_fetch_add(&g_look.stats.hits, 1, __ATOMIC_RELAXED);
		return 0;
	}
	__atomic_fetch_add(&g_look.stats.misses, 1, __ATOMIC_RELAXED);
	return dct_meta_resolve(ctx, dz, node_id, rec, 0, NULL);
}

int kr_dct_resolve_port(struct kr_ctx *ctx, uint32_t node_id, uint32_t port, struct kr_dct_rec *rec,
			struct kr_dct_port_rec *prec)
{
	struct kr_dct_zone *dz;

	if (!ctx || !rec || !prec || ctx->observer || !ctx->zone || !port || port > 0xffff)
		return -EINVAL;
	if (__atomic_load_n(&ctx->dead, __ATOMIC_RELAXED))
		return -ENOTCONN;
	dz = job_dct_zone(ctx);
	if (!dz || !node_id || node_id == 0xffffffffu || node_id == dz->node_id)
		return -EINVAL; /* this node's ports are in the zone */
	/* one READ: the node's row holds its address and its ports (nothing cached) */
	__atomic_fetch_add(&g_look.stats.misses, 1, __ATOMIC_RELAXED);
	return dct_meta_resolve(ctx, dz, node_id, rec, port, prec);
}

bool kr_dct_cached(struct kr_ctx *ctx, uint32_t node_id)
{
	struct kr_dct_zone *dz;
	struct kr_dct_rec rec;

	if (!ctx || !ctx->zone)
		return false;
	dz = job_dct_zone(ctx);
	return dz && !kr_dct_cache_lookup(ctx->zone, dz, node_id, &rec);
}

void kr_dct_invalidate(struct kr_ctx *ctx, uint32_t node_id)
{
	struct kr_dct_zone *dz;

	if (!ctx || ctx->observer || !ctx->zone)
		return;
	dz = job_dct_zone(ctx);
	if (!dz || !node_id || node_id == dz->node_id ||
	    kr_dct_cache_is_static(ctx->zone, dz, node_id))
		return; /* a static entry has nothing to be refreshed from: it stays */
	fresh_forget(node_id);
	kr_job_cache_report(ctx, KR_CACHE_FORGET, node_id, NULL, 0);
}
