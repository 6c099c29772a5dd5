/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attach, job side: connect to the keeper, receive the page fds, map them at
 * the keeper's addresses, check what was mapped, open a doorbell-only view of
 * the device and create the heap arena. No rte_eal_init, no firmware command.
 *
 * Mapping: every region is one hugepage, mapped MAP_SHARED|MAP_FIXED_NOREPLACE
 * at the keeper's address, so offsets in the shared tables mean the same in
 * both processes and WQEs can carry plain addresses. The pool segment is
 * read-only here. One attach per process: the addresses are fixed.
 *
 * krctl's observer attach maps only the pool segment, read-only, anywhere
 * (a PROT_NONE reservation with the pages placed in it).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/kr_clock.h"
#include "common/kr_log.h"
#include "common/kr_populate.h"
#include "job/job.h"
#include "sim/sim.h"

static pthread_mutex_t attach_mtx = PTHREAD_MUTEX_INITIALIZER;
static struct kr_ctx *attached; /* guarded by attach_mtx */
static uint64_t attach_count;	/* attachments made in this process (ctx->attach_id) */

/* ---- checks of what the keeper mapped for us ---- */

int kr_job_seg_check(const struct kr_pool_seg *s, uint64_t mapped_len)
{
	uint64_t T, end;

	if (mapped_len < sizeof(*s) || s->magic != KR_POOL_SEG_MAGIC ||
	    s->version != KR_POOL_VERSION || s->size > mapped_len)
		return -EPROTO;
	T = s->ntenants;
	if (!T || T > KR_POOL_MAX_TENANTS || s->dcis > KR_POOL_MAX_DCIS ||
	    s->rc_spares > KR_POOL_MAX_RC || s->vqps > KR_POOL_MAX_VQPS || !s->jobs ||
	    s->jobs > KR_POOL_MAX_JOBS)
		return -EPROTO;
	end = s->size;
	if (s->tenants_off > end || T * sizeof(struct kr_pool_tenant) > end - s->tenants_off ||
	    s->dci_off > end || T * s->dcis * sizeof(struct kr_pool_slot) > end - s->dci_off ||
	    s->rc_off > end || T * s->rc_spares * sizeof(struct kr_pool_slot) > end - s->rc_off ||
	    s->vqp_off > end || T * s->vqps * sizeof(struct kr_pool_slot) > end - s->vqp_off ||
	    s->jobs_off > end || T * s->jobs * sizeof(struct kr_pool_job) > end - s->jobs_off)
		return -EPROTO;
	return 0;
}

int kr_job_zone_check(const struct kr_zone_hdr *z, uint64_t mapped_len, uint32_t tenant)
{
	if (mapped_len < sizeof(*z) || z->magic != KR_POOL_ZONE_MAGIC || z->tenant != tenant ||
	    z->size > mapped_len || z->ndci > KR_POOL_MAX_DCIS || z->dci_off > z->size ||
	    (uint64_t)z->ndci * sizeof(struct kr_zone_dci) > z->size - z->dci_off ||
	    z->nrc > KR_POOL_MAX_RC || z->rc_off > z->size ||
	    (uint64_t)z->nrc * sizeof(struct kr_zone_dci) > z->size - z->rc_off ||
	    z->nep > KR_POOL_MAX_PORTS || z->ep_off > z->size ||
	    (uint64_t)z->nep * sizeof(struct kr_zone_ep) > z->size - z->ep_off)
		return -EPROTO;
	return 0;
}

/* ---- mapping ---- */

static void ctx_unmap(struct kr_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->nregions; i++)
		munmap((void *)(uintptr_t)ctx->region[i].va, ctx->region[i].len);
	ctx->nregions = 0;
	if (ctx->heap_max) /* the grown pages and the held rest of the place */
		munmap(ctx->heap, ctx->heap_max);
	ctx->heap_max = 0;
}

/*
 * Is region i one hugepage that the job will touch? All are but the zone's
 * head: read-only, plain shared memory of small pages of which a job reads a
 * few (zone_head_populate(); populating all of the head's tables cost the
 * attach more than the page faults it saved).
 */
static bool region_populate(const struct kr_msg_attach_reply *rep, uint32_t i)
{
	return rep->region_role[i] != KR_REGION_ZONE || rep->region[i].prot != PROT_READ;
}

/*
 * Map every region at its address; the mapped ones are recorded in ctx. The
 * hugepages come populated (kr_populate.h): each would be a page fault at
 * its first touch, the attach's checks, the first connect (its DCI's rings)
 * and the first kr_malloc (the heap) each took one.
 */
static int ctx_map_fixed(struct kr_ctx *ctx, const struct kr_msg_attach_reply *rep, const int *fds)
{
	for (uint32_t i = 0; i < rep->nregions; i++) {
		const struct kr_msg_region *r = &rep->region[i];
		void *va = (void *)(uintptr_t)r->va;
		void *p;

		p = mmap(va, r->len, (int)r->prot,
			 MAP_SHARED | MAP_FIXED_NOREPLACE |
			     (region_populate(rep, i) ? MAP_POPULATE : 0),
			 fds[r->fd_index], (off_t)r->off);
		if (p == MAP_FAILED) {
			int e = errno;

			KR_ERR("pool", "cannot map the keeper's page at %p: %s", va, strerror(e));
			return e == EEXIST ? -EADDRINUSE : -e;
		}
		if (p != va) { /* a kernel without MAP_FIXED_NOREPLACE placed it elsewhere */
			munmap(p, r->len);
			return -EADDRINUSE;
		}
		ctx->region[ctx->nregions++] = *r;
	}
	return 0;
}

/* The larger of end and where a table of n entries of size bytes at off ends. */
static uint64_t table_end(uint64_t end, uint64_t off, uint64_t n, uint64_t size)
{
	return off + n * size > end ? off + n * size : end;
}

/*
 * Populate the zone head's first tables: its header (which the zone check
 * reads first: a page fault of the attach's own otherwise), the DCI and RC
 * descriptors and the node cache's header. The first connect reads its
 * DCI's descriptor and the cache's header; the pages of the descriptors
 * that no job had leased yet are not in memory until then, and so a page
 * fault of the connect's own. The cache's entries (the rest of the head,
 * most of it) fault in as they are read. Runs before kr_job_zone_check: the
 * header's sizes are not checked yet, but what they populate stays within
 * the head's mapping (read only), so a wrong one only populates more or less
 * of it.
 */
static void zone_head_populate(const struct kr_ctx *ctx, const struct kr_msg_attach_reply *rep)
{
	const struct kr_zone_hdr *z = ctx->zone;
	uint64_t end, head_len = 0;

	for (uint32_t i = 0; i < rep->nregions; i++) /* the head: the zone's first pages */
		if (!region_populate(rep, i))
			head_len += rep->region[i].len;
	if (!head_len)
		return;
	(void)kr_populate(z, sizeof(*z), 0); /* the header says where the rest is */
	end = table_end(0, z->dci_off, z->ndci, sizeof(struct kr_zone_dci));
	end = table_end(end, z->rc_off, z->nrc, sizeof(struct kr_zone_dci));
	if (z->dct_off && z->dct_off < head_len) /* the cache checks its block at lookup */
		end = table_end(end, z->dct_off, 1, sizeof(struct kr_dct_zone));
	(void)kr_populate(z, end < head_len ? end : head_len, 0);
}

static void close_fds(int *fds, unsigned int n, int keep)
{
	for (unsigned int i = 0; i < n; i++)
		if ((int)i != keep && fds[i] >= 0)
			close(fds[i]);
}

/*
 * Connect and run the ATTACH call with launch key key (NULL: none, for an
 * observer or a lone job, as flags say); on success rep and fds are filled.
 */
static int attach_call(struct kr_ctx *ctx, const char *path, uint32_t flags, const uint8_t *key,
		       struct kr_msg_attach_reply *rep, int *fds, unsigned int *nfds)
{
	struct kr_msg_attach req = {.flags = flags};
	int rc;

	ctx->sock = kr_msg_connect(path);
	if (ctx->sock < 0)
		return ctx->sock;
	/* the launch's key goes only to a keeper we trust (an observer sends none) */
	if (!(flags & KR_ATTACH_F_OBSERVE)) {
		rc = kr_attach_peer_check(ctx->sock, ctx->keeper_uid, path);
		if (rc)
			return rc;
	}
	if (key)
		memcpy(req.launch_key, key, sizeof(req.launch_key));
	kr_msg_init(&req.hdr, KR_MSG_ATTACH, sizeof(req), ++ctx->seq);
	/* jemalloc's one-time set-up is the first kr_malloc's: done here while the
	 * keeper answered, it outlasted the answer where page faults are dear and
	 * lengthened the attach (measured on a VM whose hypervisor traps them:
	 * attach p50 +200-290 us, first READ -70 to +136) */
	rc = kr_msg_call(ctx->sock, &req, sizeof(req), rep, sizeof(*rep), fds,
			 KR_ATTACH_MAX_REGIONS + 1, nfds);
	explicit_bzero(req.launch_key, sizeof(req.launch_key));
	if (rc)
		return rc == -EMSGSIZE ? -EPROTO : rc;
	if (rep->hdr.len != sizeof(*rep)) {
		close_fds(fds, *nfds, -1);
		return -EPROTO;
	}
	rc = kr_attach_reply_check(rep, *nfds, flags & KR_ATTACH_F_OBSERVE);
	if (rc)
		close_fds(fds, *nfds, -1);
	return rc;
}

/*
 * attach_call() until the keeper has a warm heap for us: EAGAIN means its
 * worker is warming one (a burst of attaches beyond --warm-heaps), which
 * takes about a registration (~1 ms on a ConnectX-4); asked again every
 * 100 us for up to KR_ATTACH_WAIT_MS, then ENOSPC.
 */
static int attach_wait(struct kr_ctx *ctx, const char *path, const uint8_t *key,
		       struct kr_msg_attach_reply *rep, int *fds, unsigned int *nfds)
{
	uint64_t t0 = kr_now_ns();
	int rc;

	for (;;) {
		rc = attach_call(ctx, path, key ? 0 : KR_ATTACH_F_LONE, key, rep, fds, nfds);
		if (rc != -EAGAIN)
			return rc;
		close(ctx->sock);
		ctx->sock = -1;
		if (kr_now_ns() - t0 > KR_ATTACH_WAIT_MS * 1000000ull)
			return -ENOSPC;
		usleep(100);
	}
}

/* kr_attach_opts.dcis_per_thread, else $KR_DCIS_PER_THREAD, else the default. 0 or -EINVAL. */
static int attach_dcis_per_thread(uint32_t opt, uint32_t *n)
{
	const char *env = getenv("KR_DCIS_PER_THREAD");
	unsigned long v = opt;
	char *end;

	if (!opt && env && *env) {
		errno = 0;
		v = strtoul(env, &end, 10);
		if (errno || *end || !v) {
			KR_ERR("pool", "KR_DCIS_PER_THREAD=%s: not a number from 1 to %u", env,
			       KR_DCIS_PER_THREAD_MAX);
			return -EINVAL;
		}
	}
	if (!v)
		v = KR_DCIS_PER_THREAD_DEFAULT;
	if (v > KR_DCIS_PER_THREAD_MAX) {
		KR_ERR("pool", "%lu DCIs per thread: at most %u", v, KR_DCIS_PER_THREAD_MAX);
		return -EINVAL;
	}
	*n = (uint32_t)v;
	return 0;
}

/*
 * kr_attach_opts.promote_rate, else $KR_PROMOTE_RATE ("off" or a number), else
 * the default; *rate 0 means never (virtqp_promote.c). 0 or -EINVAL.
 */
static int attach_promote_rate(uint32_t opt, uint32_t *rate)
{
	const char *env = getenv("KR_PROMOTE_RATE");
	unsigned long v = opt;
	char *end;

	if (!opt && env && *env) {
		if (!strcmp(env, "off")) {
			*rate = 0;
			return 0;
		}
		errno = 0;
		v = strtoul(env, &end, 10);
		if (errno || *end || !v || v >= KR_PROMOTE_OFF) {
			KR_ERR("pool", "KR_PROMOTE_RATE=%s: not \"off\" nor a number from 1 to %u",
			       env, KR_PROMOTE_OFF - 1);
			return -EINVAL;
		}
	}
	if (!v)
		v = KR_PROMOTE_RATE_DEFAULT;
	*rate = v == KR_PROMOTE_OFF ? 0 : (uint32_t)v;
	return 0;
}

/*
 * A fresh process's ctx (24 KB, tables by the page) comes populated: a
 * calloc'ed one cleared each page with a fault of its own, most of the
 * attach's faults.
 */
static struct kr_ctx *ctx_new(void)
{
	struct kr_ctx *ctx = kr_zalloc_hot(sizeof(*ctx));

	if (!ctx)
		return NULL;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_mutex_init(&ctx->arena_lock, NULL);
	ctx->sock = -1;
	ctx->krmin_fd = -1;
	return ctx;
}

static void ctx_free(struct kr_ctx *ctx)
{
	if (ctx->sock >= 0)
		close(ctx->sock);
	pthread_mutex_destroy(&ctx->lock);
	pthread_mutex_destroy(&ctx->arena_lock);
	kr_heap_slabs_fini(ctx);
	free(ctx);
}

struct kr_ctx *kr_attach(const struct kr_attach_opts *opts)
{
	struct kr_msg_attach_reply *rep = NULL;
	uint8_t key[KR_LAUNCH_KEY_BYTES];
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 0;
	struct kr_ctx *ctx;
	int rc;

	if (opts && opts->flags) {
		errno = EINVAL;
		return NULL;
	}
	pthread_mutex_lock(&attach_mtx);
	if (attached) {
		pthread_mutex_unlock(&attach_mtx);
		errno = EALREADY;
		return NULL;
	}
	ctx = ctx_new();
	rep = malloc(sizeof(*rep));
	if (!ctx || !rep) {
		rc = -ENOMEM;
		goto err_free;
	}
	/* the keeper derives the launch's tag and DC key: no hashing here */
	rc = kr_launch_key_get(opts ? opts->launch_key : NULL, key);
	if (rc < 0)
		goto err_free;
	ctx->launch.lone = rc == 1;
	rc = kr_attach_keeper_uid(opts ? opts->keeper_uid : 0, &ctx->keeper_uid);
	if (!rc)
		rc = attach_dcis_per_thread(opts ? opts->dcis_per_thread : 0,
					    &ctx->dcis_per_thread);
	if (!rc)
		rc = attach_promote_rate(opts ? opts->promote_rate : 0, &ctx->promote_rate);
	if (rc)
		goto err_free;
	rc = attach_wait(ctx,
			 opts && opts->socket_path ? opts->socket_path : kr_msg_socket_default(),
			 ctx->launch.lone ? NULL : key, rep, fds, &nfds);
	explicit_bzero(key, sizeof(key));
	if (rc)
		goto err_free;
	rc = ctx_map_fixed(ctx, rep, fds);
	close_fds(fds, nfds, (int)rep->uar_fd_index);
	if (rc)
		goto err_unmap;

	ctx->seg = (const struct kr_pool_seg *)(uintptr_t)rep->seg_va;
	ctx->seg_len = rep->seg_len;
	ctx->zone = (struct kr_zone_hdr *)(uintptr_t)rep->zone_va;
	ctx->zone_len = rep->zone_len;
	ctx->heap = (void *)(uintptr_t)rep->heap_va;
	ctx->heap_len = rep->heap_len;
	ctx->heap_lkey = rep->heap_lkey;
	ctx->heap_rkey = rep->heap_rkey;
	kr_heap_slabs_init(ctx);
	ctx->tenant = rep->tenant;
	ctx->job = rep->job;
	ctx->job_gen = rep->job_gen;
	ctx->uar_reg_off = rep->uar_ref.reg_off;
	ctx->uar_bf_size = rep->dci_bf_size;
	ctx->dci_block = rep->dci_block;
	ctx->rc_block = rep->rc_block;
	ctx->keeper_gen = rep->keeper_gen;
	ctx->launch.tag = rep->launch_tag;
	ctx->launch.dc_key = rep->dc_key;
	ctx->attach_id = ++attach_count; /* attach_mtx held */
	rc = kr_job_seg_check(ctx->seg, ctx->seg_len);
	if (!rc &&
	    (ctx->tenant >= ctx->seg->ntenants || ctx->job >= ctx->seg->ntenants * ctx->seg->jobs))
		rc = -EPROTO;
	if (!rc) {
		zone_head_populate(ctx, rep);
		rc = kr_job_zone_check(ctx->zone, ctx->zone_len, ctx->tenant);
	}
	/* the keeper's DC target for our launch answers to the key it derived */
	if (!rc && (!ctx->launch.tag || ctx->zone->dc_key != ctx->launch.dc_key))
		rc = -EPROTO;
	if (!rc && rep->fenced) /* the rings only through /dev/krmin, a lease at a time */
		rc = kr_job_krmin_open(ctx, kr_attach_zone_head_len(rep));
	if (rc)
		goto err_unmap;

	/* a sim keeper's jobs ring its pages: the sim's doorbell part, no engine */
	rc = kr_devx_backend_add(&kr_sim_view_backend);
	if (!rc)
		rc = kr_devx_import(rep->dev_name,
				    rep->uar_fd_index < nfds ? fds[rep->uar_fd_index] : -1,
				    &rep->uar_ref, &ctx->dev);
	if (rc)
		goto err_unmap;
	rep->uar_fd_index = ~0u; /* the view owns it now */
	/* kr_malloc's arena comes with the first kr_malloc (job_malloc.c) */
	rc = kr_job_heap_hold(ctx, rep->heap_max);
	if (rc)
		goto err_close_dev;

	attached = ctx;
	pthread_mutex_unlock(&attach_mtx);
	free(rep);
	return ctx;

err_close_dev:
	kr_devx_close(ctx->dev);
err_unmap:
	kr_job_krmin_close(ctx);
	if (rep->uar_fd_index < nfds)
		close(fds[rep->uar_fd_index]);
	ctx_unmap(ctx);
err_free:
	explicit_bzero(key, sizeof(key));
	if (ctx)
		ctx_free(ctx);
	free(rep);
	pthread_mutex_unlock(&attach_mtx);
	errno = -rc;
	return NULL;
}

int kr_detach(struct kr_ctx *ctx)
{
	struct kr_msg_hdr req;
	struct kr_msg_reply rep;
	bool was_dead;

	if (!ctx)
		return -EINVAL;
	kr_job_cache_flush(ctx); /* before the keeper forgets us */
	pthread_mutex_lock(&ctx->lock);
	was_dead = ctx->dead;
	if (!ctx->dead && !ctx->observer) {
		kr_msg_init(&req, KR_MSG_DETACH, sizeof(req), ++ctx->seq);
		if (kr_msg_call(ctx->sock, &req, sizeof(req), &rep, sizeof(rep), NULL, 0, NULL))
			was_dead = true;
	}
	for (uint32_t i = 0; i < KR_JOB_MAX_DCIS; i++)
		if (ctx->dci[i].used)
			kr_job_dci_drop(ctx, &ctx->dci[i]);
	kr_job_krmin_close(ctx);
	kr_arena_destroy(ctx->arena);
	if (ctx->uar)
		kr_devx_uar_unimport(ctx->uar);
	if (ctx->dev)
		kr_devx_close(ctx->dev);
	ctx_unmap(ctx);
	pthread_mutex_unlock(&ctx->lock);

	pthread_mutex_lock(&attach_mtx);
	if (attached == ctx)
		attached = NULL;
	pthread_mutex_unlock(&attach_mtx);
	if (ctx->on_detach)
		ctx->on_detach(ctx);
	ctx_free(ctx);
	return was_dead ? -ENOTCONN : 0;
}

/* ---- observer (krctl) ---- */

/* Copy the pool segment into buf, KR_STATUS_CHUNK bytes per request. */
static int observe_copy(struct kr_ctx *ctx, uint8_t *buf, uint64_t len)
{
	struct kr_msg_status_reply *rep = malloc(sizeof(*rep));
	int rc = 0;

	if (!rep)
		return -ENOMEM;
	for (uint64_t off = 0; off < len && !rc; off += rep->len) {
		struct kr_msg_status req = {.off = off};

		req.len = len - off < KR_STATUS_CHUNK ? (uint32_t)(len - off) : KR_STATUS_CHUNK;
		kr_msg_init(&req.hdr, KR_MSG_STATUS, sizeof(req), ++ctx->seq);
		rc = kr_msg_call(ctx->sock, &req, sizeof(req), rep, sizeof(*rep), NULL, 0, NULL);
		if (!rc && rep->status)
			rc = rep->status < 0 && rep->status > -4096 ? rep->status : -EPROTO;
		if (!rc && (rep->len != req.len ||
			    rep->hdr.len != offsetof(struct kr_msg_status_reply, data) + req.len))
			rc = -EPROTO;
		if (!rc)
			memcpy(buf + off, rep->data, rep->len);
	}
	free(rep);
	return rc;
}

/*
 * One observer round: connect, attach as an observer, copy the segment into
 * ctx's buffer (mapped or grown to its size), close. 0 or -errno.
 */
static int observe_round(struct kr_ctx *ctx)
{
	struct kr_msg_attach_reply *rep = malloc(sizeof(*rep));
	int fds[KR_ATTACH_MAX_REGIONS + 1];
	unsigned int nfds = 0;
	uint8_t *base;
	int rc;

	if (!rep)
		return -ENOMEM;
	rc = attach_call(ctx, ctx->obs_path, KR_ATTACH_F_OBSERVE, NULL, rep, fds, &nfds);
	if (rc)
		goto out;
	if (ctx->nregions && ctx->region[0].len != rep->seg_len)
		ctx_unmap(ctx); /* the segment changed size: a new keeper */
	if (!ctx->nregions) {
		base = mmap(NULL, rep->seg_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		if (base == MAP_FAILED) {
			rc = -errno;
			goto out;
		}
		ctx->region[0] = (struct kr_msg_region){.va = (uintptr_t)base, .len = rep->seg_len};
		ctx->nregions = 1;
	}
	base = (uint8_t *)(uintptr_t)ctx->region[0].va;
	if (mprotect(base, rep->seg_len, PROT_READ | PROT_WRITE)) {
		rc = -errno;
		goto out;
	}
	rc = observe_copy(ctx, base, rep->seg_len);
	if (mprotect(base, rep->seg_len, PROT_READ) && !rc)
		rc = -errno;
	ctx->seg = (const struct kr_pool_seg *)base;
	ctx->seg_len = rep->seg_len;
	ctx->keeper_gen = rep->keeper_gen;
	if (!rc)
		rc = kr_job_seg_check(ctx->seg, ctx->seg_len);
out:
	if (ctx->sock >= 0)
		close(ctx->sock);
	ctx->sock = -1;
	free(rep);
	return rc;
}

/*
 * kr_job_observe() - a private, read-only copy of the pool segment, for
 * inspection: the keeper sends no descriptor and shares no memory with an
 * observer, and the connection is closed once the copy is taken. NULL +
 * errno as kr_attach(). Release with kr_detach().
 */
struct kr_ctx *kr_job_observe(const char *socket_path)
{
	const char *path = socket_path ? socket_path : kr_msg_socket_default();
	struct kr_ctx *ctx;
	int rc;

	if (strlen(path) >= sizeof(ctx->obs_path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	ctx = ctx_new();
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->observer = true;
	snprintf(ctx->obs_path, sizeof(ctx->obs_path), "%s", path);
	rc = observe_round(ctx);
	if (rc) {
		ctx_unmap(ctx);
		ctx_free(ctx);
		errno = -rc;
		return NULL;
	}
	return ctx;
}

/* kr_job_observe_refresh() - a new copy. 0, -EINVAL (not an observer), or as kr_attach(). */
int kr_job_observe_refresh(struct kr_ctx *ctx)
{
	if (!ctx || !ctx->observer)
		return -EINVAL;
	return observe_round(ctx);
}

/* ---- liveness ---- */

/* True when the keeper's end of the socket is gone (one non-blocking poll). */
bool kr_job_keeper_gone(struct kr_ctx *ctx)
{
	struct pollfd p = {.fd = ctx->sock, .events = POLLIN | POLLRDHUP};

	if (ctx->dead)
		return true;
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR)))
		ctx->dead = true;
	return ctx->dead;
}

int kr_ctx_query(struct kr_ctx *ctx, struct kr_ctx_attr *attr)
{
	uint32_t n = 0;
	bool gone;

	if (!ctx || !attr)
		return -EINVAL;
	pthread_mutex_lock(&ctx->lock);
	gone = kr_job_keeper_gone(ctx);
	for (uint32_t i = 0; i < KR_JOB_MAX_DCIS; i++)
		n += ctx->dci[i].used;
	attr->tenant = ctx->tenant;
	attr->launch_tag = ctx->launch.tag;
	attr->job = ctx->job;
	attr->keeper_pid = ctx->seg ? ctx->seg->keeper_pid : 0;
	attr->dci_leases = n;
	attr->heap_len = ctx->heap_max;
	attr->dcis_per_thread = ctx->dcis_per_thread;
	attr->promote_rate = ctx->promote_rate ? ctx->promote_rate : KR_PROMOTE_OFF;
	attr->node = ctx->observer ? 0 : kr_dct_self_node(ctx);
	attr->flags = 0;
	if (ctx->dev && kr_devx_has(ctx->dev, KR_DEVX_BE_HOST_CPU))
		attr->flags |= KR_CTX_F_HOST_CPU;
	pthread_mutex_unlock(&ctx->lock);
	return gone ? -ENOTCONN : 0;
}
