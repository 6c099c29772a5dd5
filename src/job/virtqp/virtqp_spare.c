/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCIs a process keeps between its threads. A thread's last disconnect
 * parks its DCI here when nothing is in flight on it and it is healthy; a
 * thread's first connect takes one before it asks the keeper. So a thread's
 * first connect costs no keeper round trip and no firmware command whenever
 * an earlier thread of the process has let go of a DCI (KRCore's per-CPU DCI
 * pools, kept per process). At most KR_VQ_SPARE_DCIS are kept; the keeper
 * gets the rest back at once. The DCIs stay leased to the job, so the keeper
 * reclaims them at detach or death like any lease.
 *
 * The spares belong to one attachment (ctx->attach_id) and go with it:
 * kr_detach() frees them (the keeper takes their leases back at detach;
 * their views die with the ctx), and a later attachment drops what an
 * earlier one left. A provider that carries this library and is unloaded
 * after the detach leaves nothing behind.
 */
#include <pthread.h>
#include <stdlib.h>

#include "job/virtqp/virtqp.h"

#define KR_VQ_SPARE_DCIS 8u

static struct {
	pthread_mutex_t lock;
	const struct kr_ctx *ctx;
	uint64_t attach_id;
	uint32_t n;
	uint32_t max;
	struct kr_vq_dci *d[KR_VQ_SPARE_DCIS];
} g_spare = {.lock = PTHREAD_MUTEX_INITIALIZER, .max = KR_VQ_SPARE_DCIS};

void kr_vq_spare_max(uint32_t n)
{
	pthread_mutex_lock(&g_spare.lock);
	g_spare.max = n < KR_VQ_SPARE_DCIS ? n : KR_VQ_SPARE_DCIS;
	pthread_mutex_unlock(&g_spare.lock);
}

/* A spare of an attachment that left: its lease went back with the detach. */
static void spare_free(struct kr_vq_dci *d)
{
	d->leased = false;
	kr_vq_dci_free(d);
}

/* g_spare.lock held: do the spares belong to ctx's attachment? */
static bool spare_mine(const struct kr_ctx *ctx)
{
	return g_spare.ctx == ctx && g_spare.attach_id == ctx->attach_id;
}

/* g_spare.lock held: free every spare; the set is ctx's from now on (NULL: nobody's). */
static void spare_reset(const struct kr_ctx *ctx)
{
	while (g_spare.n)
		spare_free(g_spare.d[--g_spare.n]);
	g_spare.ctx = ctx;
	g_spare.attach_id = ctx ? ctx->attach_id : 0;
}

/* kr_detach() of ctx: its spares go with it (ctx->on_detach). */
static void spare_detach(struct kr_ctx *ctx)
{
	pthread_mutex_lock(&g_spare.lock);
	if (spare_mine(ctx))
		spare_reset(NULL);
	pthread_mutex_unlock(&g_spare.lock);
}

/* g_spare.lock held: forget spares of another attachment than ctx. */
static void spare_own(struct kr_ctx *ctx)
{
	if (spare_mine(ctx))
		return;
	spare_reset(ctx);
	ctx->on_detach = spare_detach;
}

/* kr_vq_spare_held() - see virtqp.h. */
uint32_t kr_vq_spare_held(void)
{
	uint32_t n;

	pthread_mutex_lock(&g_spare.lock);
	n = g_spare.n;
	pthread_mutex_unlock(&g_spare.lock);
	return n;
}

bool kr_vq_spare_put(struct kr_vq_dci *d)
{
	bool kept = false;

	if (!kr_vq_dci_idle(d) || __atomic_load_n(&d->ctx->dead, __ATOMIC_RELAXED))
		return false;
	pthread_mutex_lock(&g_spare.lock);
	spare_own(d->ctx);
	if (g_spare.n < g_spare.max) {
		g_spare.d[g_spare.n++] = d;
		kept = true;
	}
	pthread_mutex_unlock(&g_spare.lock);
	return kept;
}

struct kr_vq_dci *kr_vq_spare_get(struct kr_ctx *ctx)
{
	struct kr_vq_dci *d = NULL;

	pthread_mutex_lock(&g_spare.lock);
	spare_own(ctx);
	if (g_spare.n)
		d = g_spare.d[--g_spare.n];
	pthread_mutex_unlock(&g_spare.lock);
	return d;
}
